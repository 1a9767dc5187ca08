// FlowEngine+guards: guards that show another flow first, and the pending actions they resume.

import JSON

extension FlowEngine {
    /// Guards nest at most this deep: a guard flow whose own action is guarded, and so on.
    public static let maxPendingActions = 8

    /// A rule's guard failed: its `else` effects apply (they show the guard's flow) and the
    /// action waits in ``FlowTree/pendingActions`` until that flow has left the tree.
    static func applyGuard(
        _ plan: RoutePlan, for action: FlowAction, source: ScreenRef, run: inout EffectRun, resuming: Bool, finishing: Bool
    ) throws(FlowError) -> ActionOutcome {
        if resuming {
            throw .refused(flow: plan.handledBy, action: action.type, reason: "its guard still does not hold")
        }
        if action.interactive && !finishing {
            throw .refused(
                flow: plan.handledBy, action: action.type,
                reason: "its guard does not hold, so it cannot start as an interactive transition; post it without \"interactive\": true")
        }
        guard run.tree.pendingActions.count < maxPendingActions else {
            throw .refused(
                flow: plan.handledBy, action: action.type,
                reason: "\(maxPendingActions) guarded actions already wait for their guards; finish or cancel one first")
        }
        try run.apply(plan.effects)
        guard let shown = run.shownFlows.first else {
            throw .refused(flow: plan.handledBy, action: action.type, reason: "its guard's effects show no flow to satisfy the guard")
        }
        // The guard's flow must be what the user sees, over the screen the action came from;
        // else the action could never resume (its screen gone) or the user would not see the flow.
        guard run.tree.visiblePath()?.nodes.contains(where: { $0.id == shown.id }) == true else {
            throw .refused(
                flow: plan.handledBy, action: action.type,
                reason: "its guard's flow \(shown.name) would not be on screen (something \(plan.handledBy) presents covers it)")
        }
        guard run.tree.containsScreen(id: source.id) else {
            throw .refused(flow: plan.handledBy, action: action.type, reason: "its guard's effects remove the screen it came from, so it could never resume")
        }
        var tree = run.tree
        var waiting = action
        waiting.interactive = false
        tree.pendingActions.append(PendingAction(action: waiting, source: source.id, guardFlow: shown.name, guardFlowId: shown.id))
        return ActionOutcome(
            tree: tree, transition: run.transition(from: source, interactive: false), handledBy: plan.handledBy,
            userChanges: run.userChanges, interactionEvent: finishing ? .finished : nil)
    }

    /// After `outcome` (an applied action on `before`), resumes the pending actions whose guard
    /// flow has left the tree, innermost first, with the action's user changes in the context.
    ///
    /// A pending action applies again when the screen it came from is on top and its guard now
    /// holds; otherwise (the user cancelled the guard, or moved elsewhere, or it is refused now) it
    /// is dropped and the action's own outcome stands. The outcome keeps the posted action's
    /// `handledBy`; its transition goes from the screen the action came from to where the resumed
    /// actions lead, named after the last resumed one, in the same version.
    static func resumePendingActions(
        after outcome: ActionOutcome, before: FlowTree, catalog: FlowCatalog, context: FlowContext, limits: FlowLimits
    ) -> ActionOutcome {
        var context = context
        UserChange.apply(outcome.userChanges, to: &context.user)
        var current = outcome
        var lastResumed: Transition?
        while let pending = current.tree.pendingActions.last, !current.tree.containsFlow(id: pending.guardFlowId) {
            current.tree.pendingActions.removeLast()
            guard let top = current.tree.top, top.id == pending.source else { continue }
            var action = pending.action
            action.from = top.entryId
            guard case .success(let again) = Result(catching: { () throws(FlowError) -> ActionOutcome in
                try applyNow(action, to: current.tree, catalog: catalog, context: context, limits: limits, finishing: false, resuming: true)
            }) else { continue }
            UserChange.apply(again.userChanges, to: &context.user)
            current.tree = again.tree
            current.userChanges += again.userChanges
            if let transition = again.transition { lastResumed = transition }
        }
        if let lastResumed {
            current.transition = Transition(
                type: lastResumed.type, from: before.top, to: current.tree.top, animated: lastResumed.animated,
                style: lastResumed.style, interactive: false, result: lastResumed.result ?? outcome.transition?.result)
        }
        return current
    }
}

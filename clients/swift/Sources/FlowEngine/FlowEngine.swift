// FlowEngine: the entry points — build a session's first tree, apply an action to a tree.

import JSON

/// The flow engine: pure functions from (tree, action) to a new tree and what changed.
///
/// ```swift
/// var tree = try FlowEngine.start(catalog: catalog, context: context)
/// let outcome = try FlowEngine.apply(FlowAction(type: "onboarding.showSecond"),
///                                    to: tree, catalog: catalog, context: context)
/// tree = outcome.tree           // onboarding.second on top
/// outcome.transition?.type      // .push
/// ```
///
/// Decisions where the design is silent:
/// - Effects apply to the flow whose delegate handled the action; an action applies all its
///   effects or none (the tree is unchanged on any error).
/// - A rule's `from` is matched against the source screen's feature even when the action was
///   passed up from a child flow, so a parent can still require "only from this screen". A
///   parent that trusts its child's own checks names the child instead (`via`: the flow just
///   below it on the chain), so a new version of the child needs no new parent.
/// - Only flows on the visible path present: when a presenter is popped, covered by a push or
///   its tab deselected, what it presented is dismissed with it. A presentation by a flow is
///   above everything inside that flow (so `app`'s modal covers one presented by `home`).
/// - `back` is routed like any action first (a flow may name `back`); if none names it, it pops
///   the nearest stack with more than one entry within the topmost presented layer, else
///   dismisses that layer, else is refused. It never pops stacks hidden behind a modal.
/// - `present` on a flow that already presents is refused; `dismissAll` with nothing presented
///   and `selectTab` of the current tab succeed without change; `pop`, `popTo` and `popToRoot`
///   that cannot move are refused.
/// - When a rule has several navigation effects, the transition is named after the last one;
///   `popToRoot` reports `popTo`, `dismissAll` reports `dismiss`; tab switches are not animated.
/// - An interaction's effects are computed when it opens (to refuse early and show a preview)
///   and again when it finishes; if finishing fails (the catalog changed meanwhile), the error
///   is returned and the interaction stays pending until `interaction.cancel`.
/// - Flow params reach a flow's initial screens, overlaid by each screen's own params.
/// - Lists (``ListSection``) belong to their screen entry. List effects apply in order with the
///   rule's others, to the source screen by default; a row tap's row is checked against the
///   source screen's list before routing (`staleRow`). The transition's `lists` compare every
///   screen present before and after by id (``ListChanges/diff(from:to:)``), whatever changed it;
///   a version that changed only lists gets a `list` transition from the top to itself.
/// - A link rebuilds the cold-start stack with fresh ids and applies its actions as one
///   outcome; its transition rule, deferral and the dropping of a pending link that fails
///   later are described at ``followLink(_:from:catalog:context:limits:field:)``.
public enum FlowEngine {
    /// Ids stay below 2^53 so they survive any JSON reader, including JavaScript's.
    static let maxId = 1 << 53

    /// Builds a session's first tree from the root flow (`app`): initial entries whose `when`
    /// holds, child flows built recursively, ids from 1.
    ///
    /// - Throws: ``FlowError/brokenDefinition(flow:message:)`` when a named flow is missing,
    ///   contains itself, has no entry left, or the tree would cross `limits`.
    public static func start(
        catalog: FlowCatalog, context: FlowContext, rootFlow: String = FlowCatalog.rootFlowName,
        limits: FlowLimits = .default
    ) throws(FlowError) -> FlowTree {
        try start(catalog: catalog, context: context, rootFlow: rootFlow, limits: limits, firstId: 1)
    }

    /// The cold-start tree with ids from `firstId`: a link rebuilding a running session's stack
    /// starts at the old tree's `nextId`, so no id the client has seen is given again.
    static func start(
        catalog: FlowCatalog, context: FlowContext, rootFlow: String, limits: FlowLimits, firstId: Int
    ) throws(FlowError) -> FlowTree {
        var builder = FlowBuilder(catalog: catalog, context: context, limits: limits, nextId: firstId)
        let root = try builder.makeNode(flow: rootFlow, params: [:])
        let size = root.measure()
        guard size.entries <= limits.maxEntries, size.depth <= limits.maxDepth else {
            throw .brokenDefinition(
                flow: rootFlow,
                message: "its initial tree has \(size.entries) entries nested \(size.depth) deep; the limits are \(limits.maxEntries) and \(limits.maxDepth)")
        }
        guard builder.nextId <= maxId else {
            throw .corruptTree(message: "the session has used every id up to \(maxId)")
        }
        return FlowTree(root: root, nextId: builder.nextId)
    }

    /// Applies `action` to `tree`.
    ///
    /// The action goes to the flow owning the source screen (`from`, which must be the screen
    /// on top, else the top screen), then up through its ancestors (a presented flow's parent
    /// is its presenter) until a delegate handles or refuses it. `back`, the interaction
    /// actions, `link {uri}` and `link.cancel` are understood by every flow. On error the tree
    /// is unchanged.
    ///
    /// When the tree has a pending link and the action applied (not one that only opened or
    /// moved an interaction), the link is checked again with the action's user changes in the
    /// context, and followed at once if it now holds: the outcome is then the linked tree, with
    /// one transition from the screen the action came from (see
    /// ``followLink(_:from:catalog:context:limits:field:)``).
    ///
    /// - Throws: ``FlowError``: `staleSource`, `unhandled`, `refused`, `interactionPending`,
    ///   `noInteraction`, `invalidParams`, `brokenDefinition`, `corruptTree`, and for `link`
    ///   `unknownLink` and `linkRefused`.
    public static func apply(
        _ action: FlowAction, to tree: FlowTree, catalog: FlowCatalog, context: FlowContext,
        limits: FlowLimits = .default
    ) throws(FlowError) -> ActionOutcome {
        let outcome = try applyWithoutLists(action, to: tree, catalog: catalog, context: context, limits: limits)
        return withListChanges(outcome, before: tree)
    }

    /// The outcome with the changes of every list that changed on a screen still in the tree
    /// (``Transition/lists``); a version that changed only lists gets a `list` transition from
    /// the top to itself. Trees without lists pay one walk of their screens.
    static func withListChanges(_ outcome: consuming ActionOutcome, before: FlowTree) -> ActionOutcome {
        var old: [Int: [ListSection]] = [:]
        before.root.collectLists(into: &old)
        guard !old.isEmpty else { return consume outcome }
        var new: [Int: [ListSection]] = [:]
        outcome.tree.root.collectLists(into: &new)
        var lists: [ScreenListChange] = []
        for id in new.keys.sorted() {
            guard let before = old[id], let after = new[id], before != after else { continue }
            let changes = ListChanges.diff(from: before, to: after)
            if !changes.isEmpty { lists.append(ScreenListChange(id: id, changes: changes)) }
        }
        guard !lists.isEmpty else { return outcome }
        if outcome.transition == nil {
            let top = outcome.tree.top
            outcome.transition = Transition(type: .list, from: top, to: top, lists: lists)
        } else {
            outcome.transition?.lists = lists
        }
        return outcome
    }

    private static func applyWithoutLists(
        _ action: FlowAction, to tree: FlowTree, catalog: FlowCatalog, context: FlowContext,
        limits: FlowLimits
    ) throws(FlowError) -> ActionOutcome {
        guard !action.type.isEmpty else {
            throw .invalidParams(path: "/type", message: "type must be a non-empty action type, such as \"back\"")
        }
        guard tree.nextId >= 1, tree.nextId <= maxId else {
            throw .corruptTree(message: "nextId \(tree.nextId) is outside 1...\(maxId)")
        }
        let outcome: ActionOutcome
        if let interaction = tree.interaction {
            outcome = try continueInteraction(
                interaction, with: action, tree: tree, catalog: catalog, context: context, limits: limits)
            guard outcome.interactionEvent == .finished else { return outcome }
        } else if action.isInteractionAction {
            throw .noInteraction(action: action.type)
        } else if action.type == FlowAction.link || action.type == FlowAction.linkCancel {
            return try applyLinkAction(action, to: tree, catalog: catalog, context: context, limits: limits)
        } else {
            outcome = try applyNow(action, to: tree, catalog: catalog, context: context, limits: limits, finishing: false)
            if outcome.interactionEvent == .started { return outcome }
        }
        // No `var` copy of the outcome to resume on: each copy of an outcome retains its tree's
        // and transition's references, and this is every action's path.
        if !outcome.tree.pendingActions.isEmpty {
            let resumed = resumePendingActions(after: outcome, before: tree, catalog: catalog, context: context, limits: limits)
            guard resumed.tree.pendingLink != nil else { return resumed }
            return followPendingLink(after: resumed, before: tree, catalog: catalog, context: context, limits: limits)
        }
        guard outcome.tree.pendingLink != nil else { return consume outcome }
        return followPendingLink(after: outcome, before: tree, catalog: catalog, context: context, limits: limits)
    }

    /// ``apply(_:to:catalog:context:limits:)`` returning a `Result`.
    public static func applyResult(
        _ action: FlowAction, to tree: FlowTree, catalog: FlowCatalog, context: FlowContext,
        limits: FlowLimits = .default
    ) -> Result<ActionOutcome, FlowError> {
        do throws(FlowError) {
            return .success(try apply(action, to: tree, catalog: catalog, context: context, limits: limits))
        } catch {
            return .failure(error)
        }
    }

    /// Routes and applies `action`; with `finishing`, it is the action of an interaction being
    /// finished, applied for real and reported as interactive. With `resuming`, it is a pending
    /// action applied again after its guard's flow: a guard that still fails refuses it.
    static func applyNow(
        _ action: FlowAction, to tree: FlowTree, catalog: FlowCatalog, context: FlowContext,
        limits: FlowLimits, finishing: Bool, resuming: Bool = false
    ) throws(FlowError) -> ActionOutcome {
        guard let visible = tree.visiblePath() else {
            throw .corruptTree(message: "no screen is on top")
        }
        let source = visible.top
        if let from = action.from { try checkSource(from, top: source) }
        // A row tap reaches the rules with the row as params; the action itself (kept while a
        // guard waits, or while an interaction is pending) stays as the client sent it.
        let routed = try withRowParams(action, screen: visible.screen)
        let plan = try route(routed, along: visible, catalog: catalog, context: context)
        var run = EffectRun(
            tree: tree, handlerPath: plan.path, handlerFlow: plan.handledBy, action: routed,
            catalog: catalog, context: context, limits: limits, source: source.id)

        if plan.isGuard {
            return try applyGuard(plan, for: action, source: source, run: &run, resuming: resuming, finishing: finishing)
        }
        if action.interactive && !finishing {
            guard plan.allowsInteractive else {
                throw .refused(
                    flow: plan.handledBy, action: action.type,
                    reason: "it cannot run as an interactive transition; its rule does not set \"interactive\": true")
            }
            // A dry run proves the action would apply and gives the preview; the tree itself
            // does not change until the interaction finishes.
            try run.apply(plan.effects)
            var pending = tree
            pending.interaction = Interaction(
                action: action, progress: 0, handledBy: plan.handledBy,
                preview: run.transition(from: source, interactive: true))
            return ActionOutcome(tree: pending, transition: nil, handledBy: plan.handledBy, interactionEvent: .started)
        }

        try run.apply(plan.effects)
        return ActionOutcome(
            tree: run.tree, transition: run.transition(from: source, interactive: finishing),
            handledBy: plan.handledBy, userChanges: run.userChanges, interactionEvent: finishing ? .finished : nil)
    }

    /// The action with the tapped row's `row.id`, `row.kind` and `row.values` in its params (any
    /// params of those names removed when it taps no row); refused when the row is not in the
    /// source screen's list.
    public static func withRowParams(_ action: FlowAction, screen: ScreenEntry) throws(FlowError) -> FlowAction {
        guard let rowId = action.row else {
            guard FlowAction.rowParams.contains(where: action.params.contains(key:)) else { return action }
            var plain = action
            for name in FlowAction.rowParams { plain.params[name] = nil }
            return plain
        }
        guard let sections = screen.sections, let place = ScreenList.place(ofRow: rowId, in: sections) else {
            throw .staleRow(row: rowId, screen: screen.entryId)
        }
        let row = sections[place.section].rows[place.row]
        var routed = action
        routed.params[FlowAction.rowIdParam] = .string(row.id)
        routed.params[FlowAction.rowKindParam] = .string(row.kind)
        routed.params[FlowAction.rowValuesParam] = .object(row.values)
        return routed
    }

    /// `from` must name the screen on top: anything else is a client acting on a screen that
    /// is gone or covered (a double tap's second tap), refused rather than applied twice.
    static func checkSource(_ from: String, top: ScreenRef) throws(FlowError) {
        guard let id = EntryId.parse(from) else {
            throw .invalidParams(path: "/from", message: "from must be a screen id such as \"e7\"; found \(JSONValue.string(from).abbreviatedJSON(limit: 40))")
        }
        guard !id.isFlow, id.number == top.id else {
            throw .staleSource(from: from, top: top.entryId)
        }
    }
}

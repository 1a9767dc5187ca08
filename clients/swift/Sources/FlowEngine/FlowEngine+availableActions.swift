// FlowEngine+availableActions: what the client could post now, read from the definitions on the chain.

extension FlowEngine {
    /// The actions the current state accepts from the screen on top, nearest flow first, in
    /// definition order, followed by `back` when it would do something and `link.cancel` when a
    /// link is pending. `link` itself is always accepted and not listed.
    ///
    /// Rules are matched on their `from`, `via` and `when` with no action params (a `when` on a
    /// `param` therefore does not hold here). Swift delegates cannot be asked what they would
    /// accept, so flows with one are listed from their definition. While an interaction is
    /// pending, the three interaction actions are the only ones.
    public static func availableActions(in tree: FlowTree, catalog: FlowCatalog, context: FlowContext) -> [AvailableAction] {
        if let interaction = tree.interaction {
            return [FlowAction.interactionUpdate, FlowAction.interactionEnd, FlowAction.interactionCancel].map {
                AvailableAction(type: $0, handledBy: interaction.handledBy, params: interactionParams(of: $0))
            }
        }
        guard let visible = tree.visiblePath() else { return [] }
        let feature = visible.screen.feature
        var decided: Set<String> = []
        var available: [AvailableAction] = []
        for depth in stride(from: visible.nodes.count - 1, through: 0, by: -1) {
            let flow = visible.nodes[depth].flow
            guard let definition = catalog[flow] else { continue }
            let child = depth + 1 < visible.nodes.count ? visible.nodes[depth + 1].flow : nil
            for handler in definition.handlers where !decided.contains(handler.action) {
                guard let rule = handler.rules.first(where: { $0.matches(feature: feature, child: child, context: context, params: [:]) }) else {
                    decided.insert(handler.action)  // owned but refused from here
                    continue
                }
                if rule.bubbles { continue }  // the parent decides
                decided.insert(handler.action)
                // A guard that fails now shows its flow instead, which cannot start interactively.
                let guardFails = rule.guarded.map { !$0.when.evaluate(in: context, params: [:]) } ?? false
                available.append(AvailableAction(
                    type: handler.action, handledBy: flow, params: rule.params, interactive: rule.interactive && !guardFails))
            }
        }
        if !decided.contains(FlowAction.back), let plan = genericBack(visible) {
            available.append(AvailableAction(type: FlowAction.back, handledBy: plan.handledBy, interactive: true))
        }
        if tree.pendingLink != nil {
            available.append(AvailableAction(type: FlowAction.linkCancel, handledBy: FlowCatalog.rootFlowName))
        }
        return available
    }

    /// The params the engine reads from the interaction actions; no definition declares them.
    static func interactionParams(of type: String) -> [FlowRule.Param] {
        switch type {
        case FlowAction.interactionUpdate: [FlowRule.Param(name: "progress", type: .number)]
        case FlowAction.interactionEnd:
            [FlowRule.Param(name: "progress", type: .number, required: false),
             FlowRule.Param(name: "velocity", type: .number, required: false)]
        default: []
        }
    }
}

// FlowEngine+availableActions: what the client could post now, read from the definitions on the chain.

import JSON

extension FlowEngine {
    /// The actions the current state accepts from the screen on top, nearest flow first, in
    /// definition order, followed by `back` when it would do something and `link.cancel` when a
    /// link is pending. `link` itself is always accepted and not listed.
    ///
    /// Rules are matched on their `from`, `via` and `when` with no action params (a `when` on a
    /// `param` therefore does not hold here). Swift delegates cannot be asked what they would
    /// accept, so flows with one are listed from their definition. While an interaction is
    /// pending, the three interaction actions are the only ones.
    ///
    /// Row taps are listed too, when the screen on top has a list: for each action type, one
    /// entry per rule naming `row` that a row of the list would reach, with the kinds of the
    /// list's rows it takes (``AvailableAction/rowKinds``), right after the type's plain entry.
    /// A tap is judged per kind, as the engine routes it, with `row.kind` as its only param: a
    /// kind the nearest owning flow refuses is not offered by a parent, and a `when` on the
    /// row's id or values does not hold here. A rule without `row` takes a row tap as it takes
    /// a plain post, so its plain entry stands for both.
    public static func availableActions(in tree: FlowTree, catalog: FlowCatalog, context: FlowContext) -> [AvailableAction] {
        if let interaction = tree.interaction {
            return [FlowAction.interactionUpdate, FlowAction.interactionEnd, FlowAction.interactionCancel].map {
                AvailableAction(type: $0, handledBy: interaction.handledBy, params: interactionParams(of: $0))
            }
        }
        guard let visible = tree.visiblePath() else { return [] }
        let feature = visible.screen.feature
        let kinds = rowKinds(of: visible.screen)
        var decided: Set<String> = []
        // The (type, row kind) pairs a flow has decided, as `decided` holds plain types.
        var decidedTaps: Set<[String]> = []
        var available: [AvailableAction] = []
        for depth in stride(from: visible.nodes.count - 1, through: 0, by: -1) {
            let flow = visible.nodes[depth].flow
            guard let definition = catalog[flow] else { continue }
            let child = depth + 1 < visible.nodes.count ? visible.nodes[depth + 1].flow : nil
            for handler in definition.handlers {
                if !decided.contains(handler.action) {
                    if let rule = handler.rules.first(where: { $0.matches(feature: feature, child: child, context: context, params: [:]) }) {
                        if !rule.bubbles {  // else the parent decides
                            decided.insert(handler.action)
                            available.append(offer(rule, type: handler.action, flow: flow, context: context, params: [:]))
                        }
                    } else {
                        decided.insert(handler.action)  // owned but refused from here
                    }
                }
                // The row taps of this type, grouped by the rule each kind reaches.
                var taps: [(rule: Int, kinds: [String])] = []
                for kind in kinds where !decidedTaps.contains([handler.action, kind]) {
                    let params: JSONObject = [FlowAction.rowKindParam: .string(kind)]
                    guard let index = handler.rules.firstIndex(where: { $0.matches(feature: feature, child: child, context: context, params: params) }) else {
                        decidedTaps.insert([handler.action, kind])
                        continue
                    }
                    if handler.rules[index].bubbles { continue }
                    decidedTaps.insert([handler.action, kind])
                    guard handler.rules[index].row != nil else { continue }
                    if let group = taps.firstIndex(where: { $0.rule == index }) {
                        taps[group].kinds.append(kind)
                    } else {
                        taps.append((index, [kind]))
                    }
                }
                for tap in taps.sorted(by: { $0.rule < $1.rule }) {
                    var entry = offer(
                        handler.rules[tap.rule], type: handler.action, flow: flow, context: context,
                        params: [FlowAction.rowKindParam: .string(tap.kinds[0])])
                    entry.rowKinds = tap.kinds
                    available.append(entry)
                }
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

    /// What `rule` offers: its params, and whether it may start interactively now.
    private static func offer(_ rule: FlowRule, type: String, flow: String, context: FlowContext, params: JSONObject) -> AvailableAction {
        // A guard that fails now shows its flow instead, which cannot start interactively.
        let guardFails = rule.guarded.map { !$0.when.evaluate(in: context, params: params) } ?? false
        return AvailableAction(type: type, handledBy: flow, params: rule.params, interactive: rule.interactive && !guardFails)
    }

    /// The distinct kinds of the screen's rows, in the order they first appear in its list.
    static func rowKinds(of screen: ScreenEntry) -> [String] {
        guard let sections = screen.sections else { return [] }
        var seen: Set<String> = []
        var kinds: [String] = []
        for section in sections {
            for row in section.rows where seen.insert(row.kind).inserted { kinds.append(row.kind) }
        }
        return kinds
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

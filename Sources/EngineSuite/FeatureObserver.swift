// FeatureObserver: which features of the definition language one step of a case exercised, read from what the engine did.

import FlowEngine
import JSON

/// Observes the features (``EngineSuite/features``) a step exercised: the tree's shape, the
/// transition, the interaction event, user changes, pending links and guarded actions before
/// and after, and the rule that handled the action (found the way the engine finds it: the
/// handling flow's first rule matching the source screen, the child the action came through,
/// the context and the params).
enum FeatureObserver {
    /// What a tree shows: entry kinds and nesting.
    static func tree(_ tree: FlowTree, catalog: FlowCatalog, into features: inout Set<String>) {
        func visit(_ node: FlowNode, presentedDepth: Int) {
            if catalog[node.flow]?.initial.contains(where: { $0.when != nil }) == true { features.insert("entry.initialWhen") }
            for entry in node.entries {
                switch entry {
                case .screen(let screen):
                    if !screen.params.isEmpty { features.insert("entry.screenParams") }
                    if screen.isHandoff { features.insert("entry.handoff") }
                    if screen.sections != nil { features.insert("list.sections") }
                case .flow(let child):
                    if node.kind == .stacked {
                        features.insert("entry.flow")
                        if child.kind == .tabbed { features.insert("nesting.tabbedInStacked") }
                    } else {
                        features.insert("nesting.flowInTab")
                    }
                    visit(child, presentedDepth: presentedDepth)
                }
            }
            if let presented = node.presented {
                features.insert("nesting.presented")
                if presentedDepth >= 1 { features.insert("nesting.presentedOverPresented") }
                visit(presented, presentedDepth: presentedDepth + 1)
            }
        }
        visit(tree.root, presentedDepth: 0)
    }

    /// What applying `action` to `before` exercised, given the engine's outcome.
    static func applied(_ action: FlowAction, before: SessionState, outcome: ActionOutcome, into features: inout Set<String>) {
        let after = outcome.tree
        tree(after, catalog: before.catalog, into: &features)
        if !action.params.isEmpty { features.insert("action.params") }
        if action.type == FlowAction.back, outcome.interactionEvent == nil { features.insert("action.back") }
        switch outcome.interactionEvent {
        case .started: features.insert("interaction.started")
        case .updated: features.insert("interaction.updated")
        case .finished: features.insert("interaction.finished")
        case .cancelled: features.insert("interaction.cancelled")
        case nil: break
        }
        if !outcome.userChanges.isEmpty { features.insert("effect.setUser") }
        if outcome.transition?.result != nil { features.insert("effect.result") }
        if let transition = outcome.transition, !transition.lists.isEmpty {
            features.insert(transition.type == .list ? "list.only" : "list.withNavigation")
            for list in transition.lists {
                let changes = list.changes
                if !changes.rows.inserted.isEmpty { features.insert("list.rowsInserted") }
                if !changes.rows.deleted.isEmpty { features.insert("list.rowsDeleted") }
                if !changes.rows.moved.isEmpty { features.insert("list.rowsMoved") }
                if !changes.rows.reloaded.isEmpty { features.insert("list.rowsReloaded") }
                if !changes.sections.isEmpty { features.insert("list.sectionsChanged") }
            }
        }
        if action.type == FlowAction.link {
            features.insert(after.pendingLink != nil ? "link.pending" : "link.followed")
        } else if action.type == FlowAction.linkCancel {
            if before.tree.pendingLink != nil && after.pendingLink == nil { features.insert("link.cancelled") }
        } else if before.tree.pendingLink != nil && after.pendingLink == nil {
            features.insert("link.resumed")
        }
        if after.pendingActions.count > before.tree.pendingActions.count { features.insert("guard.waiting") }
        for pending in before.tree.pendingActions where !after.pendingActions.contains(pending) {
            features.insert(after.top?.id == pending.source ? "guard.dropped" : "guard.resumed")
        }
        // The rule that handled it: for an interaction that finished, the action that opened it.
        var handled = action
        if outcome.interactionEvent == .finished, let interaction = before.tree.interaction { handled = interaction.action }
        guard outcome.interactionEvent == nil || outcome.interactionEvent == .finished,
              handled.type != FlowAction.link, handled.type != FlowAction.linkCancel,
              let source = source(of: handled, in: before.tree) else { return }
        let chain = chain(to: source.flowId, in: before.tree.root)
        guard let handlerIndex = chain.lastIndex(where: { $0.flow == outcome.handledBy }) else { return }
        if chain.last?.id != chain[handlerIndex].id { features.insert("effect.bubble") }
        let child = handlerIndex + 1 < chain.count ? chain[handlerIndex + 1].flow : nil
        // A row tap is matched with the row's params, as the engine matches it.
        var params = handled.params
        if handled.row != nil, let screen = before.tree.screen(id: source.id),
            let routed = try? FlowEngine.withRowParams(handled, screen: screen)
        {
            params = routed.params
            features.insert("list.rowTap")
        }
        guard let rules = before.catalog[outcome.handledBy]?.rules(for: handled.type),
              let rule = rules.first(where: { $0.matches(feature: source.feature, child: child, context: before.context, params: params) })
        else { return }
        var conditions: [FlowCondition] = rule.when.map { [$0] } ?? []
        var effects = rule.effects
        if let guarded = rule.guarded {
            conditions.append(guarded.when)
            if after.pendingActions.count > before.tree.pendingActions.count { effects = guarded.otherwise }
        }
        for effect in effects where effect != .bubble {
            features.insert("effect." + effect.name)
            switch effect {
            case .push(.screen(_, _, let sections?)), .setRoot(.screen(_, _, let sections?)), .replaceRoot(.screen(_, _, let sections?)):
                if usesParam(sections) { features.insert("list.sectionsFromParams") }
            default: break
            }
        }
        // Order shows only when a rule moves the tree twice (a pop then a push): one navigation
        // effect and any number of setUser give the same answer in any order.
        if effects.count(where: { !["bubble", "setUser", "result"].contains($0.name) }) >= 2 {
            features.insert("effect.sequence")
        }
        for condition in conditions { sources(of: condition, into: &features) }
    }

    /// Whether a list as written holds `{"$param": name}` anywhere (the whole list, a section's
    /// rows, a row or a value).
    private static func usesParam(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let object):
            if object.count == 1, object["$param"]?.stringValue != nil { return true }
            return object.members.contains { usesParam($0.value) }
        case .array(let elements): return elements.contains(where: usesParam)
        default: return false
        }
    }

    /// The screen an action comes from: `from`, else the screen on top.
    private static func source(of action: FlowAction, in tree: FlowTree) -> ScreenRef? {
        guard let from = action.from else { return tree.top }
        return tree.screens.first { $0.entryId == from } ?? tree.top
    }

    /// The flows from the root down to the flow numbered `flowId` (a presented flow below its presenter).
    private static func chain(to flowId: Int, in node: FlowNode) -> [FlowNode] {
        if node.id == flowId { return [node] }
        var children: [FlowNode] = node.entries.compactMap { if case .flow(let child) = $0 { return child } else { return nil } }
        if let presented = node.presented { children.append(presented) }
        for child in children {
            let below = chain(to: flowId, in: child)
            if !below.isEmpty { return [node] + below }
        }
        return []
    }

    private static func sources(of condition: FlowCondition, into features: inout Set<String>) {
        switch condition {
        case .test(let source, _, _): features.insert("condition." + source.rawValue)
        case .all(let conditions), .any(let conditions): for inner in conditions { sources(of: inner, into: &features) }
        case .not(let inner): sources(of: inner, into: &features)
        }
    }
}

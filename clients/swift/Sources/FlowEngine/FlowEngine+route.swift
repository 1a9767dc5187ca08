// FlowEngine+route: the delegate chain — which flow handles an action, and the generic `back`.

/// The decision of the chain: which flow handles the action and with which effects.
struct RoutePlan {
    /// Path from the root to the handling flow.
    var path: [TreeStep]
    var effects: [FlowEffect]
    var allowsInteractive: Bool
    var handledBy: String
    /// Whether `effects` are a guard's: the action itself waits until the guard's flow is done.
    var isGuard = false
}

extension FlowEngine {
    /// Walks the delegate chain from the source screen's flow up to the root.
    static func route(
        _ action: FlowAction, along visible: VisiblePath, catalog: FlowCatalog, context: FlowContext
    ) throws(FlowError) -> RoutePlan {
        let source = visible.top
        for depth in stride(from: visible.nodes.count - 1, through: 0, by: -1) {
            let node = visible.nodes[depth]
            let child = depth + 1 < visible.nodes.count ? visible.nodes[depth + 1].flow : nil
            let decision = try decide(action, flow: node, source: source, child: child, catalog: catalog, context: context)
            switch decision {
            case .passToParent, .useDefinition:
                continue
            case .refuse(let reason):
                throw .refused(flow: node.flow, action: action.type, reason: reason)
            case .handle(let effects, let allowsInteractive):
                if effects == [.bubble] { continue }
                return RoutePlan(
                    path: Array(visible.steps[0..<depth]), effects: effects, allowsInteractive: allowsInteractive,
                    handledBy: node.flow)
            case .guarded(let effects):
                return RoutePlan(
                    path: Array(visible.steps[0..<depth]), effects: effects, allowsInteractive: false,
                    handledBy: node.flow, isGuard: true)
            }
        }
        if action.type == FlowAction.back {
            if let plan = genericBack(visible) { return plan }
            throw .refused(
                flow: visible.nodes[0].flow, action: action.type,
                reason: "there is nothing to go back to: every stack on screen has a single entry and nothing is presented")
        }
        // Every flow was asked, top first: the chain is named only when no flow handled it.
        throw .unhandled(action: action.type, chain: visible.nodes.reversed().map(\.flow))
    }

    /// Asks one flow: its Swift delegate first (if registered), then its definition.
    private static func decide(
        _ action: FlowAction, flow node: FlowNode, source: ScreenRef, child: String?, catalog: FlowCatalog,
        context: FlowContext
    ) throws(FlowError) -> FlowDelegateDecision {
        if let delegate = catalog.delegate(for: node.flow) {
            let request = FlowDelegateRequest(
                action: action, flow: node, source: source, child: child, context: context,
                definition: catalog[node.flow])
            let decision = try delegate.process(request)
            if decision != .useDefinition { return decision }
        }
        // Most flows do not name most actions. Neither the definition nor a request is made:
        // each copy of one retained, then released, every reference it holds.
        guard let rules = catalog.rules(of: node.flow, for: action.type) else { return .passToParent }
        return try DefinitionDelegate.decide(rules, action: action, source: source, child: child, context: context)
    }

    /// The generic `back`: pop the nearest stack above the top screen with more than one entry
    /// within the topmost layer; else dismiss that layer if it is presented. A presented flow's
    /// back never reaches the stacks behind it, as in UIKit.
    static func genericBack(_ visible: VisiblePath) -> RoutePlan? {
        for depth in stride(from: visible.nodes.count - 1, through: 0, by: -1) {
            let node = visible.nodes[depth]
            let path = Array(visible.steps[0..<depth])
            if node.kind == .stacked && node.entries.count > 1 {
                return RoutePlan(path: path, effects: [.pop], allowsInteractive: true, handledBy: node.flow)
            }
            if visible.isPresented(depth) {
                return RoutePlan(path: path, effects: [.dismiss], allowsInteractive: true, handledBy: node.flow)
            }
        }
        return nil
    }
}

// FlowDelegateRequest: what a flow's delegate is told about an action it is asked to process.

/// What a delegate sees when asked to process an action.
public struct FlowDelegateRequest: Sendable {
    public var action: FlowAction
    /// The flow being asked (which may be an ancestor of the source screen's flow).
    public var flow: FlowNode
    /// The screen the action came from: the one on top.
    public var source: ScreenRef
    /// The child flow the action came up through to ``flow`` (the next flow down the delegate
    /// chain), or `nil` when the source screen is ``flow``'s own.
    public var child: String?
    public var context: FlowContext
    /// The flow's definition in the catalog, if any.
    public var definition: FlowDefinition?

    public init(
        action: FlowAction, flow: FlowNode, source: ScreenRef, child: String? = nil, context: FlowContext,
        definition: FlowDefinition?
    ) {
        self.action = action
        self.flow = flow
        self.source = source
        self.child = child
        self.context = context
        self.definition = definition
    }
}

// FlowDelegateRequest: what a flow's delegate is told about an action it is asked to process.

/// What a delegate sees when asked to process an action.
public struct FlowDelegateRequest: Sendable {
    public var action: FlowAction
    /// The flow being asked (which may be an ancestor of the source screen's flow).
    public var flow: FlowNode
    /// The screen the action came from: the one on top.
    public var source: ScreenRef
    public var context: FlowContext
    /// The flow's definition in the catalog, if any.
    public var definition: FlowDefinition?

    public init(action: FlowAction, flow: FlowNode, source: ScreenRef, context: FlowContext, definition: FlowDefinition?) {
        self.action = action
        self.flow = flow
        self.source = source
        self.context = context
        self.definition = definition
    }
}

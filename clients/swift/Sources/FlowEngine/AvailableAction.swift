// AvailableAction: an action the client could post now, for listing what a screen offers.

/// An action the current state accepts: its type, the flow that would handle it, and the
/// params its rule declares. Listed by ``FlowEngine/availableActions(in:catalog:context:)``.
public struct AvailableAction: Sendable, Equatable {
    public var type: String
    /// The flow whose rule would apply.
    public var handledBy: String
    /// The params the rule declares (required unless marked optional).
    public var params: [FlowRule.Param]
    /// Whether the action may be posted with `"interactive": true`.
    public var interactive: Bool

    public init(type: String, handledBy: String, params: [FlowRule.Param] = [], interactive: Bool = false) {
        self.type = type
        self.handledBy = handledBy
        self.params = params
        self.interactive = interactive
    }
}

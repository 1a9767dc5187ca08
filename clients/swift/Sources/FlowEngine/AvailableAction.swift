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
    /// For a row tap, the kinds of the rows it takes (`row` of the action names one of the top
    /// screen's rows of these kinds), in the order they first appear in the list; `nil` for an
    /// action posted without a row. Kinds rather than row ids, so the answer stays as small for
    /// a list of ten thousand rows as for one of ten: an app finds the tappable rows in the
    /// state document's list by their `kind`.
    public var rowKinds: [String]?

    public init(type: String, handledBy: String, params: [FlowRule.Param] = [], interactive: Bool = false, rowKinds: [String]? = nil) {
        self.type = type
        self.handledBy = handledBy
        self.params = params
        self.interactive = interactive
        self.rowKinds = rowKinds
    }
}

// LinkMatch: a URI resolved against the root flow's links — the link, its typed values and its actions.

import JSON

/// A URI resolved against the root flow's links: which link it opens, with what.
public struct LinkMatch: Sendable, Equatable {
    /// The pattern as written in the definition.
    public var pattern: String
    /// The link's index in the root flow's `links`.
    public var index: Int
    /// The captured values, typed as the link declares (`{"tab": 1}`), in pattern order.
    public var params: JSONObject
    /// The link's actions with every `{"$link": name}` replaced by its value.
    public var actions: [FlowAction]
    /// The link's condition; evaluate it with ``params`` as the `param` source.
    public var when: FlowCondition?

    public init(pattern: String, index: Int, params: JSONObject, actions: [FlowAction], when: FlowCondition?) {
        self.pattern = pattern
        self.index = index
        self.params = params
        self.actions = actions
        self.when = when
    }

    /// Whether the link may be followed in `context`.
    public func holds(in context: FlowContext) -> Bool {
        when?.evaluate(in: context, params: params) ?? true
    }
}

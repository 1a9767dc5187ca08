// ScreenRef: a screen as clients see it in `screens`, `top` and transitions, with its owning flow.

import JSON

/// A screen together with the flow that owns it: an element of `screens`, the `top`, or an end
/// of a ``Transition``.
public struct ScreenRef: Sendable, Equatable {
    /// The screen's id number (`"e\(id)"`).
    public var id: Int
    public var feature: String
    public var params: JSONObject
    /// The name of the owning flow.
    public var flow: String
    /// The owning flow's id number (`"f\(flowId)"`).
    public var flowId: Int
    /// Whether the screen is a hand-off the app runs natively (its kind is ``feature``).
    public var isHandoff: Bool

    public init(id: Int, feature: String, params: JSONObject = [:], flow: String, flowId: Int, isHandoff: Bool = false) {
        self.id = id
        self.feature = feature
        self.params = params
        self.flow = flow
        self.flowId = flowId
        self.isHandoff = isHandoff
    }

    init(screen: ScreenEntry, owner: FlowNode) {
        self.init(
            id: screen.id, feature: screen.feature, params: screen.params, flow: owner.flow, flowId: owner.id,
            isHandoff: screen.isHandoff)
    }

    /// The screen id as clients see it, such as `"e7"`.
    public var entryId: String { EntryId.screen(id) }
}

// EntryTarget: what an initial entry or an effect puts into a flow (a screen or a child flow).

import JSON

/// What goes into a flow: a screen showing a feature, or a child flow controller.
///
/// Params given to a child flow are handed to its initial screens (merged under each screen's
/// own params), which is how `present {"flow": "modal", "params": {"content": …}}` reaches the
/// `modal` screen.
public enum EntryTarget: Sendable, Equatable {
    /// A screen of `feature` with `params` and, for a list screen, its `sections` as written
    /// (`[{"id", "title"?, "indexTitle"?, "rows"}]`, or `{"$param": name}`); both may hold
    /// `{"$param": name}` references when the target comes from an effect.
    case screen(feature: String, params: JSONObject, sections: JSONValue? = nil)
    /// A child flow built from its definition, receiving `params`.
    case flow(name: String, params: JSONObject)
    /// A native step the app runs itself (a purchase sheet, the camera, a permission prompt),
    /// shown on top like a screen whose feature is `kind`. It ends with an action carrying the
    /// step's outcome (`purchase.completed`), which the flow handles like any other.
    case handoff(kind: String, params: JSONObject)
}

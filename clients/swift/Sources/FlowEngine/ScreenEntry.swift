// ScreenEntry: a screen in a flow's entries — its id, the feature it shows and its params.

import JSON

/// A screen in a flow: a stable id, the feature it shows and the params it was given.
public struct ScreenEntry: Sendable, Equatable {
    /// The id number; clients see it as `"e\(id)"`.
    public internal(set) var id: Int
    /// The feature shown, such as `onboarding.first`.
    public internal(set) var feature: String
    /// The params the screen was given (for example the modal's `content`).
    public internal(set) var params: JSONObject
    /// Whether the entry is a hand-off: a native step the app runs itself (its kind is
    /// ``feature``, such as `purchase`), ended by an action carrying the step's outcome.
    public internal(set) var isHandoff: Bool
    /// The screen's list: sections of rows (``ListSection``); `nil` when the screen has none,
    /// which the state document shows by leaving `sections` out.
    public internal(set) var sections: [ListSection]?

    init(id: Int, feature: String, params: JSONObject, isHandoff: Bool = false, sections: [ListSection]? = nil) {
        self.id = id
        self.feature = feature
        self.params = params
        self.isHandoff = isHandoff
        self.sections = sections
    }

    /// The id as clients see it, such as `"e7"`.
    public var entryId: String { EntryId.screen(id) }

    /// Stands in for an entry while its slot is being rewritten (see `FlowNode.take`).
    static let placeholder = ScreenEntry(id: 0, feature: "", params: [:])
}

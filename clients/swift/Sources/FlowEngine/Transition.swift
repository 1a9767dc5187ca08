// Transition: what an applied action changed on screen, so a client can animate it.

/// What an applied action changed, so a client can animate it: the kind of change and the top
/// screen before and after.
///
/// When a rule has several navigation effects, the transition is named after the last one
/// (`popToRoot` reports `popTo`, `dismissAll` reports `dismiss`).
public struct Transition: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case push, pop, popTo, setRoot, replaceRoot, present, dismiss, selectTab
        /// Nothing moved, but lists changed (``Transition/lists``): from and to are the top.
        case list
    }

    public var type: Kind
    /// The top screen before.
    public var from: ScreenRef?
    /// The top screen after.
    public var to: ScreenRef?
    /// Tab switches are not animated; every other change is.
    public var animated: Bool
    /// `crossFade` for replaceRoot, the presentation style for present and dismiss, else `nil`.
    public var style: String?
    /// Whether the change was driven by an interactive transition (an edge swipe).
    public var interactive: Bool
    /// The screen that received a result (a `result` effect), so a client re-renders only it.
    public var result: ResultReceipt?
    /// How the lists of screens that stay in the tree changed, by screen id ascending; empty
    /// when none did. Screens that arrive or leave are not listed: they are drawn whole.
    public var lists: [ScreenListChange]

    public init(
        type: Kind, from: ScreenRef?, to: ScreenRef?, animated: Bool = true, style: String? = nil, interactive: Bool = false,
        result: ResultReceipt? = nil, lists: [ScreenListChange] = []
    ) {
        self.lists = lists
        self.type = type
        self.from = from
        self.to = to
        self.animated = animated
        self.style = style
        self.interactive = interactive
        self.result = result
    }
}

/// Which screen a `result` effect wrote to: `{"id": "e5", "feature": "checkout.review", "into": "address"}`.
public struct ResultReceipt: Sendable, Equatable {
    /// The receiving screen's id number (`"e\(id)"`).
    public var id: Int
    public var feature: String
    /// The param the value was written to.
    public var into: String

    public init(id: Int, feature: String, into: String) {
        self.id = id
        self.feature = feature
        self.into = into
    }

    /// The screen id as clients see it, such as `"e5"`.
    public var entryId: String { EntryId.screen(id) }
}

// FlowContext: what conditions may read about a session (user, attributes, traits, flags, user state).

import JSON

/// The evaluation context of a session: fixed facts that `when` conditions read.
///
/// The server fills it when a session is created (flags are evaluated then and stay fixed) and
/// updates ``user`` as actions record user state (`setUser`).
///
/// ```swift
/// let context = FlowContext(userId: "u-1",
///                           attributes: ["country": "DE"],
///                           traits: ["horizontalSizeClass": "compact"],
///                           flags: ["eu-face-scan": true])
/// ```
public struct FlowContext: Sendable, Equatable {
    /// The user the session belongs to.
    public var userId: String
    /// Attributes such as `platform`, `country`, `appVersion` (read by `{"attribute": …}`).
    public var attributes: [String: JSONValue]
    /// Traits such as `horizontalSizeClass` (read by `{"trait": …}` and adaptive styles).
    public var traits: [String: String]
    /// Flag values evaluated for the session (read by `{"flag": …}`).
    public var flags: [String: JSONValue]
    /// Per-user state that outlives sessions, such as `onboarded` (read by `{"user": …}`).
    public var user: [String: JSONValue]

    public init(
        userId: String,
        attributes: [String: JSONValue] = [:],
        traits: [String: String] = [:],
        flags: [String: JSONValue] = [:],
        user: [String: JSONValue] = [:]
    ) {
        self.userId = userId
        self.attributes = attributes
        self.traits = traits
        self.flags = flags
        self.user = user
    }
}

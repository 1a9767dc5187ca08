// PendingLink: a deep link kept in a session until its condition holds.

import JSON

/// A link waiting in a session for its `when` to hold (a user who must pass onboarding first).
/// It is checked again after every applied action and followed as soon as it holds.
public struct PendingLink: Sendable, Equatable {
    /// The URI as the client sent it.
    public var uri: String
    /// The pattern it matched when it was kept.
    public var pattern: String

    public init(uri: String, pattern: String) {
        self.uri = uri
        self.pattern = pattern
    }

    /// `{"uri":…,"pattern":…}`: the same in the state document and in storage.
    func write(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "uri")
        writer.writeString(uri)
        writer.writeKey(literal: "pattern")
        writer.writeString(pattern)
        writer.endObject()
    }
}

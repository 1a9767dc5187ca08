// UserChange: one user-state value recorded by a `setUser` effect, for the server to persist.

import JSON

/// One user-state value set by an action (`setUser {"onboarded": true}`); the server stores it
/// on the user so that later sessions see it.
public struct UserChange: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

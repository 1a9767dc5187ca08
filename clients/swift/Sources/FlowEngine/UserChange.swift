// UserChange: one user-state value recorded by a `setUser` effect, for the server to persist.

import JSON

/// One user-state value set by an action (`setUser {"onboarded": true}`); the server stores it
/// on the user so that later sessions see it. A `null` removes the key.
public struct UserChange: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

extension UserChange {
    /// Sets `key` in a user's state as the server stores it: `value` replaces what the key held
    /// (a nested object too, as given), and a `null` removes the key, so that a condition sees
    /// the same state within an action, at the next action, in an app's prediction and after a
    /// reload.
    public static func apply(key: String, value: JSONValue, to state: inout [String: JSONValue]) {
        if value.isNull { state[key] = nil } else { state[key] = value }
    }

    /// Applies `changes` in order, as ``apply(key:value:to:)`` does each.
    public static func apply(_ changes: some Sequence<UserChange>, to state: inout [String: JSONValue]) {
        for change in changes { apply(key: change.key, value: change.value, to: &state) }
    }
}

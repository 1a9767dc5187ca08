// A user's state with an action's changes, merged key by key as the server holds it.
import JSON

/// What an action's `setUser` changes make of a user's stored state: each top-level key of the
/// patch set to its value, or removed where the value is null; a value is stored as it is,
/// nested objects and their nulls included. The engine and the server's cache apply changes so
/// (`UserChange.apply`), and PostgreSQL's commit too. SQLite's `json_patch`, used before, merged
/// a nested object into the one stored and dropped the nulls inside it, so a user read back
/// after a restart could differ from the one the cache held.
enum UserStateMerge {
    /// A stored state (`stored`) or a patch (not) that is not a JSON object: the commit fails,
    /// naming no values.
    struct NotAnObject: Error {
        var stored: Bool
    }

    /// `state` with `patch` applied (JSON object texts, as stored).
    static func merging(_ patch: String, into state: String) throws(NotAnObject) -> String {
        guard let stored = (try? JSONParser.parse(state, limits: .storedData))?.objectValue else { throw NotAnObject(stored: true) }
        guard let changes = (try? JSONParser.parse(patch, limits: .storedData))?.objectValue else { throw NotAnObject(stored: false) }
        return merging(changes, into: stored)
    }

    /// `state` without `key` (an admin's reset of one key), as a patch of `{key: null}` makes it.
    static func removing(_ key: String, from state: String) throws(NotAnObject) -> String {
        guard let stored = (try? JSONParser.parse(state, limits: .storedData))?.objectValue else { throw NotAnObject(stored: true) }
        return merging(JSONObject([JSONObject.Member(key: key, value: .null)]), into: stored)
    }

    /// Keys keep their order, new ones after them, as `json_patch` kept them.
    private static func merging(_ changes: JSONObject, into stored: JSONObject) -> String {
        var merged = stored
        for change in changes.members {
            // Spelled out: `isNull ? nil : value` would make the nil a JSON null (`JSONValue` is
            // `ExpressibleByNilLiteral`), and keep the key.
            if change.value.isNull { merged[change.key] = nil } else { merged[change.key] = change.value }
        }
        var writer = JSONWriter()
        writer.writeValue(.object(merged))
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }
}

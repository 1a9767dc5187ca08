// Users and their state (onboarding first), which outlive sessions.
import FlowStore
import GRDB

extension SQLiteStore {
    /// The user with this id, or nil when no session was ever made for them.
    public func user(id: String) throws -> UserRecord? {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT id, state, created_at, updated_at FROM users WHERE id = ?")
            return try Row.fetchOne(statement, arguments: [id]).map {
                UserRecord(id: $0[0], state: $0[1], createdAt: $0[2], updatedAt: $0[3])
            }
        }
    }

    /// Removes `key` from the user's state; nil when the user is unknown, else the new state.
    public func removeUserState(id: String, key: String) throws -> UserRecord? {
        try pool.write { db in
            let path = "$." + "\"" + key.replacingOccurrences(of: "\"", with: "") + "\""
            try db.cachedStatement(sql: "UPDATE users SET state = json_remove(state, ?), updated_at = ? WHERE id = ?")
                .execute(arguments: [path, Timestamp.string(), id])
            guard db.changesCount == 1 else { return nil }
            return try Row.fetchOne(db, sql: "SELECT id, state, created_at, updated_at FROM users WHERE id = ?",
                                    arguments: [id]).map {
                UserRecord(id: $0[0], state: $0[1], createdAt: $0[2], updatedAt: $0[3])
            }
        }
    }

    static func ensureUser(_ db: Database, id: String, at time: String) throws {
        try db.cachedStatement(sql: """
            INSERT INTO users (id, state, created_at, updated_at) VALUES (?, '{}', ?, ?) ON CONFLICT (id) DO NOTHING
            """).execute(arguments: [id, time, time])
    }
}

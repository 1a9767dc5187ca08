// Users and their state (onboarding first), which outlive sessions.
import FlowStore
import Foundation
import GRDB

extension SQLiteStore {
    /// The user with this id, or nil when no session was ever made for them. A session's
    /// creation for a user not held in memory asks first, so it is one statement stepped
    /// directly, outside a read transaction: through GRDB's isolated read it cost some 100,000
    /// instructions (callgrind, `bench/create.lua`), a fifth of a creation.
    public func user(id: String) throws -> UserRecord? {
        try readingOneStatement { db in
            let statement = DirectStatement(try db.cachedStatement(sql: "SELECT id, state, created_at, updated_at FROM users WHERE id = ?"), in: db)
            try statement.bind(id, at: 1)
            return try statement.firstRow { row in
                UserRecord(id: try DirectStatement.text(row, 0, column: "id"), state: try DirectStatement.text(row, 1, column: "state"),
                           createdAt: try DirectStatement.text(row, 2, column: "created_at"),
                           updatedAt: try DirectStatement.text(row, 3, column: "updated_at"))
            }
        }
    }

    /// Removes `key` from the user's state; nil when the user is unknown, else the new state.
    /// SQLite keeps no revision of a user's state (one process owns the file and its cache), so
    /// an audit entry of a reset has no versions.
    public func removeUserState(id: String, key: String, audit: AuditStamp?) throws -> UserRecord? {
        try writing { db in
            // Removed as a commit's null removes a key (`UserStateMerge`): a JSON path cannot
            // name every key (one with a quote in it).
            guard let state = try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM users WHERE id = ?"), arguments: [id]) else {
                return nil
            }
            let now = Timestamp.string()
            let removed: String
            do { removed = try UserStateMerge.removing(key, from: state) } catch { throw Self.redacted(error, location: path) }
            try db.cachedStatement(sql: "UPDATE users SET state = ?, updated_at = ? WHERE id = ?").execute(arguments: [removed, now, id])
            if let audit {
                try Self.appendAudit(db, at: now, action: AuditAction.userStateReset(key, audit), subject: id, old: nil, new: nil, audit)
            }
            return try Row.fetchOne(db, sql: "SELECT id, state, created_at, updated_at FROM users WHERE id = ?",
                                    arguments: [id]).map {
                UserRecord(id: try $0.decode(atIndex: 0), state: try $0.decode(atIndex: 1), createdAt: try $0.decode(atIndex: 2), updatedAt: try $0.decode(atIndex: 3))
            }
        }
    }

    static func ensureUser(_ db: Database, id: String, at time: String) throws {
        let statement = DirectStatement(try db.cachedStatement(sql: """
            INSERT INTO users (id, state, created_at, updated_at) VALUES (?, '{}', ?, ?) ON CONFLICT (id) DO NOTHING
            """), in: db)
        try statement.bind(id, at: 1)
        try statement.bind(time, at: 2)
        try statement.bind(time, at: 3)
        try statement.run()
    }
}

// Users and their state (onboarding first), which outlive sessions.
import FlowStore
import Foundation
import GRDB

extension SQLiteStore {
    /// The user with this id, or nil when no session was ever made for them.
    public func user(id: String) throws -> UserRecord? {
        try reading { db in
            let statement = try db.cachedStatement(sql: "SELECT id, state, created_at, updated_at FROM users WHERE id = ?")
            return try Row.fetchOne(statement, arguments: [id]).map {
                UserRecord(id: try $0.decode(atIndex: 0), state: try $0.decode(atIndex: 1), createdAt: try $0.decode(atIndex: 2), updatedAt: try $0.decode(atIndex: 3))
            }
        }
    }

    /// Removes `key` from the user's state; nil when the user is unknown, else the new state.
    /// SQLite keeps no revision of a user's state (one process owns the file and its cache), so
    /// an audit entry of a reset has no versions.
    public func removeUserState(id: String, key: String, audit: AuditStamp?) throws -> UserRecord? {
        try writing { db in
            let path = "$." + "\"" + key.replacingOccurrences(of: "\"", with: "") + "\""
            let now = Timestamp.string()
            try db.cachedStatement(sql: "UPDATE users SET state = json_remove(state, ?), updated_at = ? WHERE id = ?")
                .execute(arguments: [path, now, id])
            guard db.changesCount == 1 else { return nil }
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
        try db.cachedStatement(sql: """
            INSERT INTO users (id, state, created_at, updated_at) VALUES (?, '{}', ?, ?) ON CONFLICT (id) DO NOTHING
            """).execute(arguments: [id, time, time])
    }
}

extension SQLiteStore {
    public func insertClientKey(_ key: ClientKeyRecord, audit: AuditStamp?) throws {
        try writing { db in
            try db.execute(sql: "INSERT INTO client_keys (id, name, key_hash, created_at) VALUES (?, ?, ?, ?)",
                           arguments: [key.id, key.name, Data(key.keyHash), key.createdAt])
            if let audit {
                try Self.appendAudit(db, at: key.createdAt, action: AuditAction.clientKeyCreate, subject: key.id, old: nil, new: nil, audit)
            }
        }
    }

    public func clientKeys() throws -> [ClientKeyRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT * FROM client_keys ORDER BY created_at, id").map(Self.clientKeyRecord)
        }
    }

    public func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord? {
        try reading { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM client_keys WHERE key_hash = ? AND revoked_at IS NULL"),
                             arguments: [Data(hash)]).map(Self.clientKeyRecord)
        }
    }

    public func revokeClientKey(id: String, at: String, audit: AuditStamp?) throws -> ClientKeyRecord? {
        try writing { db in
            try db.execute(sql: "UPDATE client_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [at, id])
            if db.changesCount == 1, let audit {
                try Self.appendAudit(db, at: at, action: AuditAction.clientKeyRevoke, subject: id, old: nil, new: nil, audit)
            }
            return try Row.fetchOne(db, sql: "SELECT * FROM client_keys WHERE id = ?", arguments: [id]).map(Self.clientKeyRecord)
        }
    }

    static func clientKeyRecord(_ row: Row) throws -> ClientKeyRecord {
        try ClientKeyRecord(id: row.decode(forColumn: "id"), name: row.decode(forColumn: "name"), keyHash: [UInt8]((row.decode(forColumn: "key_hash") as Data?) ?? Data()),
                        createdAt: row.decode(forColumn: "created_at"), revokedAt: row.decode(forColumn: "revoked_at"))
    }
}

extension SQLiteStore {
    public func insertAdminKey(_ key: AdminKeyRecord, audit: AuditStamp?) throws -> Bool {
        try writing { db in
            // One writer: the look-up and the insert cannot interleave with another insert.
            let taken = try Bool.fetchOne(db, sql: "SELECT 1 FROM admin_keys WHERE name = ? AND revoked_at IS NULL", arguments: [key.name]) ?? false
            guard !taken else { return false }
            try db.execute(sql: """
                INSERT INTO admin_keys (id, name, role, key_hash, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [key.id, key.name, key.role, Data(key.keyHash), key.createdAt, key.createdBy])
            if let audit {
                try Self.appendAudit(db, at: key.createdAt, action: AuditAction.adminKeyCreate, subject: key.id, old: nil, new: nil, audit)
            }
            return true
        }
    }

    public func adminKeys() throws -> [AdminKeyRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT * FROM admin_keys ORDER BY created_at, id").map(Self.adminKeyRecord)
        }
    }

    public func liveAdminKey(hash: [UInt8]) throws -> AdminKeyRecord? {
        try reading { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM admin_keys WHERE key_hash = ? AND revoked_at IS NULL"),
                             arguments: [Data(hash)]).map(Self.adminKeyRecord)
        }
    }

    public func revokeAdminKey(id: String, at: String, audit: AuditStamp?) throws -> AdminKeyRecord? {
        try writing { db in
            try db.execute(sql: "UPDATE admin_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [at, id])
            if db.changesCount == 1, let audit {
                try Self.appendAudit(db, at: at, action: AuditAction.adminKeyRevoke, subject: id, old: nil, new: nil, audit)
            }
            return try Row.fetchOne(db, sql: "SELECT * FROM admin_keys WHERE id = ?", arguments: [id]).map(Self.adminKeyRecord)
        }
    }

    public func adminTokenHash() throws -> [UInt8]? {
        try reading { db in
            try (Data.fetchOne(db.cachedStatement(sql: "SELECT token_hash FROM admin_token WHERE id = 1"))).map { [UInt8]($0) }
        }
    }

    public func keepAdminTokenHash(_ hash: [UInt8], at: String, replace: Bool, audit: AuditStamp?) throws -> [UInt8] {
        try writing { db in
            if replace {
                try db.execute(sql: """
                    INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at
                    """, arguments: [Data(hash), at])
                if let audit {
                    try Self.appendAudit(db, at: at, action: AuditAction.adminTokenReset, subject: "admin", old: nil, new: nil, audit)
                }
            } else {
                try db.execute(sql: "INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING",
                               arguments: [Data(hash), at])
            }
            return try Data.fetchOne(db, sql: "SELECT token_hash FROM admin_token WHERE id = 1").map { [UInt8]($0) } ?? hash
        }
    }

    static func adminKeyRecord(_ row: Row) throws -> AdminKeyRecord {
        try AdminKeyRecord(id: row.decode(forColumn: "id"), name: row.decode(forColumn: "name"), role: row.decode(forColumn: "role"), keyHash: [UInt8]((row.decode(forColumn: "key_hash") as Data?) ?? Data()),
                       createdAt: row.decode(forColumn: "created_at"), createdBy: row.decode(forColumn: "created_by"), revokedAt: row.decode(forColumn: "revoked_at"))
    }
}

// Client keys, admin keys and the bootstrap admin token on SQLite: the SQL of both kinds of key
// written once (see `StoredKey`), each change and its audit entry in one transaction.
import FlowStore
import Foundation
import GRDB

extension SQLiteStore: StoredKeyTables {
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

}

extension SQLiteStore {
    /// Stores `key` (unless its kind keeps live names unique and a live key has its name: then
    /// false, nothing stored), with its audit entry when `audit` is given.
    public func insertKey<Key: StoredKey>(_ key: Key, audit: AuditStamp?) throws -> Bool {
        try writing { db in
            if Key.liveNamesAreUnique {
                // One writer: the look-up and the insert cannot interleave with another insert.
                let taken = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(Key.table) WHERE name = ? AND revoked_at IS NULL",
                                              arguments: [key.name]) ?? false
                guard !taken else { return false }
            }
            let placeholders = Key.columns.map { _ in "?" }.joined(separator: ", ")
            try db.execute(sql: "INSERT INTO \(Key.table) (\(Key.columns.joined(separator: ", "))) VALUES (\(placeholders))",
                           arguments: StatementArguments(key.storedValues.map(Self.databaseValue)))
            if let audit {
                try Self.appendAudit(db, at: key.createdAt, action: Key.createAction, subject: key.id, old: nil, new: nil, audit)
            }
            return true
        }
    }

    /// Every key of a kind, live and revoked, oldest first.
    public func keys<Key: StoredKey>() throws -> [Key] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.keyColumns(Key.self)) FROM \(Key.table) ORDER BY created_at, id")
                .map { try self.key($0) }
        }
    }

    /// The live key of a kind whose SHA-256 is `hash`, or nil.
    public func liveKey<Key: StoredKey>(hash: [UInt8]) throws -> Key? {
        try reading { db in
            let sql = "SELECT \(Self.keyColumns(Key.self)) FROM \(Key.table) WHERE key_hash = ? AND revoked_at IS NULL"
            return try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [Data(hash)]).map { try self.key($0) }
        }
    }

    /// Revokes key `id` at `at` (a key revoked before keeps its time), auditing a revocation
    /// that happened; the key as it stands, or nil.
    public func revokeKey<Key: StoredKey>(id: String, at: String, audit: AuditStamp?) throws -> Key? {
        try writing { db in
            try db.execute(sql: "UPDATE \(Key.table) SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [at, id])
            if db.changesCount == 1, let audit {
                try Self.appendAudit(db, at: at, action: Key.revokeAction, subject: id, old: nil, new: nil, audit)
            }
            return try Row.fetchOne(db, sql: "SELECT \(Self.keyColumns(Key.self)) FROM \(Key.table) WHERE id = ?",
                                    arguments: [id]).map { try self.key($0) }
        }
    }

    private static func keyColumns<Key: StoredKey>(_: Key.Type) -> String {
        Key.readColumns.joined(separator: ", ")
    }

    private static func databaseValue(_ value: StoredKeyValue) -> any DatabaseValueConvertible {
        switch value {
        case let .text(text): text
        case let .bytes(bytes): Data(bytes)
        }
    }

    /// A key from its row: a NULL where a value is needed, or a value of another type, is
    /// `StoreError.undecodableRow` naming the table, never the row's values.
    private func key<Key: StoredKey>(_ row: Row) throws -> Key {
        var values: [StoredKeyValue?] = []
        for (index, column) in Key.readColumns.enumerated() {
            if StoredKeyValue.holdsBytes(column) {
                values.append((try row.decode(atIndex: index) as Data?).map { .bytes([UInt8]($0)) })
            } else {
                values.append((try row.decode(atIndex: index) as String?).map { .text($0) })
            }
        }
        guard let key = Key(storedValues: values) else {
            throw StoreError.undecodableRow(location: location, detail: "a row of \(Key.table) lacks a value it needs")
        }
        return key
    }
}

// Client keys, admin keys and the bootstrap admin token in PostgreSQL: the SQL of both kinds of
// key written once (see `StoredKey`), each change and its audit entry in one statement.
import FlowStore

extension PostgresStore: StoredKeyTables {
    public func adminTokenHash() throws -> [UInt8]? {
        let rows = try read([PGStatement("SELECT token_hash FROM admin_token WHERE id = 1")])[0]
        return rows.count == 0 ? nil : try rows.bytes(0, 0)
    }

    public func keepAdminTokenHash(_ hash: [UInt8], at: String, replace: Bool, audit: AuditStamp?) throws -> [UInt8] {
        if replace {
            _ = try writeAudited(PGStatement("""
                WITH kept AS (
                    INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, $1::bytea, $2::text)
                    ON CONFLICT (id) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = EXCLUDED.created_at
                    RETURNING id
                )
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $2::text, 'adminToken.reset', 'admin', NULL, NULL, $3::text
                FROM kept WHERE $3::text IS NOT NULL
                """, [.bytes(hash), .text(at), .optional(audit?.credential)]), audit: audit)
            return hash
        }
        // Nodes starting together on a new database: the first insert wins, the others read it.
        let rows = try write([
            PGStatement("INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, $1::bytea, $2::text) ON CONFLICT (id) DO NOTHING",
                        [.bytes(hash), .text(at)]),
            PGStatement("SELECT token_hash FROM admin_token WHERE id = 1"),
        ])
        return rows[1].count == 0 ? hash : (try rows[1].bytes(0, 0) ?? hash)
    }
}

extension PostgresStore {
    /// Stores `key` and, with `audit`, its audit entry in the same statement; false when its
    /// kind keeps live names unique and a live key has its name (a unique violation of
    /// `admin_keys_live_name`: nothing is made, and so nothing is audited).
    public func insertKey<Key: StoredKey>(_ key: Key, audit: AuditStamp?) throws -> Bool {
        let values = key.storedValues.map(Self.parameter)
        let placeholders = zip(Key.columns.indices, Key.columns).map { index, column in Self.placeholder(index + 1, column) }
        let at = values.count + 1, action = values.count + 2, credential = values.count + 3
        let rows = try writeAudited(PGStatement("""
            WITH made AS (
                INSERT INTO \(Key.table) (\(Key.columns.joined(separator: ", "))) VALUES (\(placeholders.joined(separator: ", ")))
                \(Key.liveNamesAreUnique ? "ON CONFLICT DO NOTHING" : "")
                RETURNING id
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $\(at)::text, $\(action)::text, made.id, NULL, NULL,
                       $\(credential)::text
                FROM made WHERE $\(credential)::text IS NOT NULL
            )
            SELECT 1 FROM made
            """, values + [.text(key.createdAt), .text(Key.createAction), .optional(audit?.credential)]), audit: audit)
        return rows[0].count == 1
    }

    /// Every key of a kind, live and revoked, oldest first.
    public func keys<Key: StoredKey>() throws -> [Key] {
        try keyRecords(Key.self, try read([PGStatement("SELECT \(Self.keyColumns(Key.self)) FROM \(Key.table) ORDER BY created_at, id")])[0])
    }

    /// The live key of a kind whose SHA-256 is `hash`, or nil.
    public func liveKey<Key: StoredKey>(hash: [UInt8]) throws -> Key? {
        try keyRecords(Key.self, try read([PGStatement(
            "SELECT \(Self.keyColumns(Key.self)) FROM \(Key.table) WHERE key_hash = $1::bytea AND revoked_at IS NULL",
            [.bytes(hash)])])[0]).first
    }

    /// Revokes key `id` at `at` (a key revoked before keeps its time), auditing a revocation
    /// that happened in the same statement; the key as it stands, or nil.
    public func revokeKey<Key: StoredKey>(id: String, at: String, audit: AuditStamp?) throws -> Key? {
        let rows = try writeAudited([
            PGStatement("""
                WITH revoked AS (
                    UPDATE \(Key.table) SET revoked_at = $2::text WHERE id = $1::text AND revoked_at IS NULL RETURNING id
                )
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $2::text, $4::text, revoked.id, NULL, NULL, $3::text
                FROM revoked WHERE $3::text IS NOT NULL
                """, [.text(id), .text(at), .optional(audit?.credential), .text(Key.revokeAction)]),
            PGStatement("SELECT \(Self.keyColumns(Key.self)) FROM \(Key.table) WHERE id = $1::text", [.text(id)]),
        ], audit: audit)
        return try keyRecords(Key.self, rows[1]).first
    }

    private static func keyColumns<Key: StoredKey>(_: Key.Type) -> String {
        Key.readColumns.joined(separator: ", ")
    }

    private static func parameter(_ value: StoredKeyValue) -> PGValue {
        switch value {
        case let .text(text): .text(text)
        case let .bytes(bytes): .bytes(bytes)
        }
    }

    private static func placeholder(_ number: Int, _ column: String) -> String {
        "$\(number)::\(StoredKeyValue.holdsBytes(column) ? "bytea" : "text")"
    }

    /// The keys of a result: a NULL where a value is needed is `StoreError.undecodableRow`
    /// naming the table, never the row's values.
    private func keyRecords<Key: StoredKey>(_: Key.Type, _ rows: PGRows) throws -> [Key] {
        try (0..<rows.count).map { row in
            var values: [StoredKeyValue?] = []
            for (index, column) in Key.readColumns.enumerated() {
                values.append(StoredKeyValue.holdsBytes(column) ? try rows.bytes(row, index).map { .bytes($0) }
                                                               : try rows.string(row, index).map { .text($0) })
            }
            guard let key = Key(storedValues: values) else {
                throw StoreError.undecodableRow(location: location, detail: "a row of \(Key.table) lacks a value it needs")
            }
            return key
        }
    }
}

// Users and their state in PostgreSQL: read, and one key reset with its audit entry, each
// change raising the state's revision (which a commit judged on an older one is refused by).
import FlowStore

extension PostgresStore {
    public func user(id: String) throws -> UserRecord? {
        try Self.userRecord(try read([Self.userStatement(id)])[0])
    }

    /// The user and the definitions' fingerprint, the two statements in one round trip.
    public func userAndDefinitionsFingerprint(id: String) throws -> (user: UserRecord?, fingerprint: String?) {
        let rows = try read([Self.userStatement(id), Self.definitionsFingerprintStatement])
        return (try Self.userRecord(rows[0]), try rows[1].string(0, 0) ?? "")
    }

    private static func userStatement(_ id: String) -> PGStatement {
        PGStatement("SELECT id, state::text, created_at, updated_at, revision FROM users WHERE id = $1::text", [.text(id)])
    }

    public func removeUserState(id: String, key: String, audit: AuditStamp?) throws -> UserRecord? {
        let rows = try writeAudited(PGStatement("""
            WITH previous AS (SELECT revision FROM users WHERE id = $1::text),
            changed AS (
                UPDATE users SET state = state - $2::text, updated_at = $3::text, revision = revision + 1 WHERE id = $1::text
                RETURNING id, state::text AS state, created_at, updated_at, revision
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $3::text, $5::text, $1::text,
                       (SELECT revision FROM previous), changed.revision, $4::text
                FROM changed WHERE $4::text IS NOT NULL
            )
            SELECT id, state, created_at, updated_at, revision FROM changed
            """, [.text(id), .text(key), .text(Timestamp.string()), .optional(audit?.credential),
                  .text(audit.map { AuditAction.userStateReset(key, $0) } ?? "")]), audit: audit)[0]
        return try Self.userRecord(rows)
    }

    private static func userRecord(_ rows: PGRows) throws -> UserRecord? {
        guard rows.count == 1 else { return nil }
        return UserRecord(id: try rows.text(0, 0), state: try rows.text(0, 1),
                          createdAt: try rows.text(0, 2), updatedAt: try rows.text(0, 3),
                          revision: try rows.int(0, 4))
    }
}

// The audit log in PostgreSQL: audited writes take the log's lock so entries get ids in commit
// order across nodes, and the log is read in pages by id.
import FlowStore

extension PostgresStore {
    /// Runs `statements` as one write; when audited, inside `BEGIN … COMMIT` after taking the
    /// audit log's lock, so entries get ids (max + 1) in commit order across nodes. Returns the
    /// rows of `statements` alone.
    func writeAudited(_ statements: [PGStatement], audit: AuditStamp?) throws -> [PGRows] {
        guard audit != nil else { return try write(statements) }
        let rows = try write([PGStatement("BEGIN"), PGStatement("LOCK TABLE audit_log IN EXCLUSIVE MODE")] + statements + [PGStatement("COMMIT")])
        return Array(rows[2..<(2 + statements.count)])
    }

    func writeAudited(_ statement: PGStatement, audit: AuditStamp?) throws -> [PGRows] {
        try writeAudited([statement], audit: audit)
    }

    public func auditLog(after: Int, limit: Int) throws -> [AuditRecord] {
        let rows = try read([PGStatement("""
            SELECT id, at, action, subject, old_version, new_version, credential, detail FROM audit_log
            WHERE id > $1::bigint ORDER BY id LIMIT $2::bigint
            """, [.integer(after), .integer(limit)])])[0]
        return try (0..<rows.count).map { row in
            AuditRecord(id: try rows.int(row, 0), at: try rows.text(row, 1), action: try rows.text(row, 2),
                        subject: try rows.text(row, 3), oldVersion: try rows.integer(row, 4), newVersion: try rows.integer(row, 5),
                        credential: try rows.text(row, 6), detail: try rows.string(row, 7))
        }
    }
}

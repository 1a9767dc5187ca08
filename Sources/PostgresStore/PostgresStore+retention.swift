// Retention on PostgreSQL: each batch one statement (one round trip, its own transaction).
// Several nodes run it at once: rows are taken with SKIP LOCKED, so two nodes work on
// different rows, and a row already gone is simply not found (every batch is idempotent).
import FlowStore

extension PostgresStore {
    public func compactActions(before horizon: String, limit: Int) throws -> RetentionBatch {
        let rows = try write([PGStatement("""
            WITH old AS (
                SELECT session_id, version FROM actions WHERE created_at < $1::text
                ORDER BY created_at LIMIT $2::integer FOR UPDATE SKIP LOCKED
            ), heads AS (
                SELECT h.session_id, h.version, h.tree, h.transition, h.handled_by, h.created_at
                FROM (SELECT DISTINCT session_id FROM old) s
                CROSS JOIN LATERAL (SELECT a.session_id, a.version, a.tree, a.transition, a.handled_by, a.created_at
                    FROM actions a WHERE a.session_id = s.session_id ORDER BY a.version DESC LIMIT 1) h
                WHERE EXISTS (SELECT 1 FROM old o WHERE o.session_id = h.session_id AND o.version = h.version)
            ), folded AS (
                UPDATE sessions s SET version = h.version, tree = h.tree, last_transition = h.transition,
                    handled_by = h.handled_by, updated_at = h.created_at
                FROM heads h WHERE s.id = h.session_id AND s.version < h.version
                RETURNING s.id
            ), removed AS (
                DELETE FROM actions a USING old o WHERE a.session_id = o.session_id AND a.version = o.version
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM removed), (SELECT count(*) FROM folded), (SELECT count(*) FROM old)
            """, [.text(horizon), .integer(limit)])])[0]
        return try Self.retentionBatch(rows)
    }

    /// Candidates are locked `FOR NO KEY UPDATE`, which does not wait for, nor block, the key
    /// share an action's insert takes on its session row: an active session found here is not
    /// held up; a deleted one makes a racing insert fail as "session not found".
    public func removeSessions(idleBefore horizon: String, limit: Int) throws -> RetentionBatch {
        let rows = try write([PGStatement("""
            WITH candidates AS (
                SELECT id FROM sessions WHERE updated_at < $1::text ORDER BY updated_at LIMIT $2::integer
                FOR NO KEY UPDATE SKIP LOCKED
            ), newest AS (
                SELECT c.id, (SELECT a.created_at FROM actions a WHERE a.session_id = c.id ORDER BY a.version DESC LIMIT 1) AS at
                FROM candidates c
            ), touched AS (
                UPDATE sessions s SET updated_at = n.at FROM newest n WHERE s.id = n.id AND n.at >= $1::text RETURNING 1
            ), removed AS (
                DELETE FROM sessions s USING newest n WHERE s.id = n.id AND (n.at IS NULL OR n.at < $1::text) RETURNING s.id
            )
            SELECT (SELECT count(*) FROM removed), (SELECT count(*) FROM touched), (SELECT count(*) FROM candidates),
                (SELECT string_agg(id, ',') FROM removed)
            """, [.text(horizon), .integer(limit)])])[0]
        var batch = try Self.retentionBatch(rows)
        // Session ids are letters, digits, `-` and `_` (see SessionService.isPlausibleId): no comma.
        batch.sessionIds = rows.count == 1 ? (try rows.string(0, 3) ?? "").split(separator: ",").map(String.init) : []
        return batch
    }

    public func pruneIdempotencyRecords(before horizon: String, limit: Int) throws -> RetentionBatch {
        let rows = try write([PGStatement("""
            WITH old AS (
                SELECT session_id, key FROM idempotency_keys WHERE created_at < $1::text
                ORDER BY created_at LIMIT $2::integer FOR UPDATE SKIP LOCKED
            ), removed AS (
                DELETE FROM idempotency_keys i USING old o WHERE i.session_id = o.session_id AND i.key = o.key RETURNING 1
            )
            SELECT (SELECT count(*) FROM removed), 0, (SELECT count(*) FROM old)
            """, [.text(horizon), .integer(limit)])])[0]
        return try Self.retentionBatch(rows)
    }

    static func retentionBatch(_ rows: PGRows) throws(PGError) -> RetentionBatch {
        guard rows.count == 1 else { return RetentionBatch() }
        return RetentionBatch(removed: try rows.integer(0, 0) ?? 0, kept: try rows.integer(0, 1) ?? 0, examined: try rows.integer(0, 2) ?? 0)
    }
}

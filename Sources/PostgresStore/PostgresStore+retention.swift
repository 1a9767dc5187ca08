// Retention on PostgreSQL: each batch one statement (one round trip, its own transaction).
// Several nodes run it at once: rows are taken with SKIP LOCKED, so two nodes work on
// different rows, and a row already gone is simply not found (every batch is idempotent).
import FlowStore

extension PostgresStore {
    /// The oldest `limit` entries before `horizon` after this node's cursor. Of each session
    /// among them: when its newest log entry is among them (an idle session), its head
    /// (`session_heads`) is folded into its row and its log deleted; otherwise everything below
    /// its newest snapshot among them (an entry with a tree, see `LogSnapshots`) and below its
    /// row's version is deleted, and the rest stays, so that the entries after it can still be
    /// rebuilt. The cursor moves past what the batch examined, so the entries it leaves are not
    /// read again batch after batch; they go by key when a later batch cuts or folds their
    /// session (as do rows another node held locked meanwhile). Deleting by key waits for rows
    /// another node's batch holds, which may wait for this one's: PostgreSQL ends one of the
    /// two as a deadlock, and that batch, which wrote nothing, runs again.
    public func compactActions(before horizon: String, limit: Int) throws -> RetentionBatch {
        try retryingConflicts { try compactActionsOnce(before: horizon, limit: limit) }
    }

    private func compactActionsOnce(before horizon: String, limit: Int) throws -> RetentionBatch {
        let cursor = compactionCursor.withLock { $0 }
        let rows = try write([PGStatement("""
            WITH old AS (
                SELECT session_id, version, created_at, tree IS NOT NULL AS snapshot FROM actions
                WHERE created_at < $1::text AND created_at >= $3::text AND (created_at, session_id, version) > ($3::text, $4::text, $5::integer)
                ORDER BY created_at, session_id, version LIMIT $2::integer FOR UPDATE SKIP LOCKED
            ), seen AS (
                SELECT session_id, max(version) AS newest, max(version) FILTER (WHERE snapshot) AS snapshot FROM old GROUP BY session_id
            ), heads AS (
                SELECT h.session_id, h.version, h.tree, h.last_transition, h.handled_by, h.updated_at
                FROM seen n JOIN session_heads h ON h.session_id = n.session_id AND h.version = n.newest
                WHERE NOT EXISTS (SELECT 1 FROM actions a WHERE a.session_id = n.session_id AND a.version > n.newest)
            ), folded AS (
                UPDATE sessions s SET version = h.version, tree = h.tree, last_transition = h.last_transition,
                    handled_by = h.handled_by, updated_at = h.updated_at
                FROM heads h WHERE s.id = h.session_id AND s.version < h.version
                RETURNING s.id
            ), cuts AS (
                SELECT n.session_id, GREATEST(CASE WHEN h.session_id IS NOT NULL THEN n.newest + 1 ELSE n.snapshot END,
                    CASE WHEN s.version > 0 THEN s.version + 1 END) AS below
                FROM seen n LEFT JOIN heads h ON h.session_id = n.session_id JOIN sessions s ON s.id = n.session_id
            ), removed AS (
                DELETE FROM actions a USING cuts c WHERE a.session_id = c.session_id AND a.version < c.below
                RETURNING 1
            ), last AS (
                SELECT created_at, session_id, version FROM old ORDER BY created_at DESC, session_id DESC, version DESC LIMIT 1
            )
            SELECT (SELECT count(*) FROM removed),
                (SELECT count(*) FROM folded) + (SELECT count(*) FROM old o LEFT JOIN cuts c ON c.session_id = o.session_id
                    WHERE c.below IS NULL OR o.version >= c.below),
                (SELECT count(*) FROM old), (SELECT created_at FROM last), (SELECT session_id FROM last), (SELECT version FROM last)
            """, [.text(horizon), .integer(limit), .text(cursor.at), .text(cursor.session), .integer(cursor.version)])])[0]
        if rows.count == 1, let at = try rows.string(0, 3), let session = try rows.string(0, 4), let version = try rows.integer(0, 5) {
            compactionCursor.withLock { $0 = (at, session, version) }
        }
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

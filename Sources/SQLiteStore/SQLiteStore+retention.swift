// Retention on SQLite: batches of old log entries, expired sessions and idempotency records
// deleted oldest first, each batch one short write transaction on the one writer.
import Foundation
import FlowStore
import GRDB

extension SQLiteStore {
    /// One write transaction: the oldest `limit` entries before `horizon`, each session's newest
    /// among them folded into its row first, then deleted. The group commit's transactions wait
    /// for it (one writer), so a batch stays small.
    ///
    /// "Oldest" is the log's insertion order (rowid), not an index on `created_at`: the one
    /// writer stamps and appends entries in time order, so the entries before `horizon` are the
    /// table's first ones, and a batch reads its first `limit` rows and takes the leading run
    /// older than `horizon`. An index on `created_at` cost every action a second B-tree insert
    /// (6-9 % of durable actions a second in bench/compare.sh). An entry whose stored time is
    /// out of that order (the clock stepped back) goes when the entries before it have gone.
    public func compactActions(before horizon: String, limit: Int) throws -> RetentionBatch {
        try writing { db in
            var candidates: [Row] = []
            for row in try Row.fetchAll(db.cachedStatement(sql: Self.oldActionsSQL), arguments: [limit]) {
                let at: String = try row.decode(atIndex: 3)
                guard at < horizon else { break }
                candidates.append(row)
            }
            var newest: [String: Int] = [:]
            for row in candidates {
                let session: String = try row.decode(atIndex: 1)
                let version: Int = try row.decode(atIndex: 2)
                newest[session] = max(newest[session] ?? version, version)
            }
            let head = try db.cachedStatement(sql: """
                SELECT version, tree, transition, handled_by, created_at FROM actions
                WHERE session_id = ? ORDER BY version DESC LIMIT 1
                """)
            let fold = try db.cachedStatement(sql: """
                UPDATE sessions SET version = ?, tree = ?, last_transition = ?, handled_by = ?, updated_at = ?
                WHERE id = ? AND version < ?
                """)
            let rowVersion = try db.cachedStatement(sql: "SELECT version FROM sessions WHERE id = ?")
            var kept = 0
            var unfoldable: Set<String> = []
            for (session, version) in newest {
                guard let entry = try Row.fetchOne(head, arguments: [session]), let headVersion: Int = try entry.decode(atIndex: 0),
                      headVersion == version else { continue }
                // An entry without its tree (written before 0004) cannot stand for the session,
                // and stays, unless the session's row already holds that version.
                guard let tree: Data = try entry.decode(atIndex: 1) else {
                    let stored = try Int.fetchOne(rowVersion, arguments: [session]) ?? -1
                    if stored < version { unfoldable.insert(session) }
                    continue
                }
                let transition: String? = try entry.decode(atIndex: 2)
                let handledBy: String? = try entry.decode(atIndex: 3)
                let at: String? = try entry.decode(atIndex: 4)
                try fold.execute(arguments: [version, tree, transition, handledBy, at, session, version])
                kept += 1
            }
            let delete = try db.cachedStatement(sql: "DELETE FROM actions WHERE rowid = ?")
            var removed = 0
            for row in candidates {
                let session: String = try row.decode(atIndex: 1)
                let version: Int = try row.decode(atIndex: 2)
                if unfoldable.contains(session), newest[session] == version { continue }
                let rowid: Int64 = try row.decode(atIndex: 0)
                try delete.execute(arguments: [rowid])
                removed += db.changesCount
            }
            return RetentionBatch(removed: removed, kept: kept, examined: candidates.count)
        }
    }

    /// The log's first entries, in insertion order (see `compactActions`; its plan is the
    /// table's own B-tree read from its start, as far as the limit: `RetentionTests`).
    static let oldActionsSQL = """
        SELECT rowid, session_id, version, created_at FROM actions ORDER BY rowid LIMIT ?
        """

    /// Sessions whose row time is before `horizon`, oldest first (by the index on
    /// `updated_at`): deleted (their log, idempotency records and stream tickets by cascade)
    /// unless their newest log entry is newer, in which case the row's time moves to it.
    public func removeSessions(idleBefore horizon: String, limit: Int) throws -> RetentionBatch {
        try writing { db in
            let candidates = try String.fetchAll(db.cachedStatement(sql: Self.idleSessionsSQL), arguments: [horizon, limit])
            let newest = try db.cachedStatement(sql: "SELECT created_at FROM actions WHERE session_id = ? ORDER BY version DESC LIMIT 1")
            let touch = try db.cachedStatement(sql: "UPDATE sessions SET updated_at = ? WHERE id = ?")
            let delete = try db.cachedStatement(sql: "DELETE FROM sessions WHERE id = ?")
            var batch = RetentionBatch(examined: candidates.count)
            for id in candidates {
                if let at = try String.fetchOne(newest, arguments: [id]), at >= horizon {
                    try touch.execute(arguments: [at, id])
                    batch.kept += 1
                } else {
                    try delete.execute(arguments: [id])
                    batch.removed += db.changesCount
                    batch.sessionIds.append(id)
                }
            }
            return batch
        }
    }

    static let idleSessionsSQL = """
        SELECT id FROM sessions INDEXED BY sessions_by_updated_at WHERE updated_at < ? ORDER BY updated_at LIMIT ?
        """

    public func pruneIdempotencyRecords(before horizon: String, limit: Int) throws -> RetentionBatch {
        try writing { db in
            try db.cachedStatement(sql: Self.oldIdempotencySQL).execute(arguments: [horizon, limit])
            let removed = db.changesCount
            return RetentionBatch(removed: removed, examined: removed)
        }
    }

    static let oldIdempotencySQL = """
        DELETE FROM idempotency_keys WHERE (session_id, key) IN (
            SELECT session_id, key FROM idempotency_keys INDEXED BY idempotency_keys_by_created_at
            WHERE created_at < ? ORDER BY created_at LIMIT ?)
        """

    /// The query plans of the batches' look-ups, for the test that none scans a table.
    public func retentionPlans() throws -> [String] {
        try reading { db in
            var plans: [String] = []
            let looks: [(String, StatementArguments)] = [(Self.oldActionsSQL, [1]), (Self.idleSessionsSQL, ["x", 1]),
                                                         (Self.oldIdempotencySQL, ["x", 1])]
            for (sql, arguments) in looks {
                let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
                plans.append(rows.map { $0["detail"] as String? ?? "" }.joined(separator: "; "))
            }
            return plans
        }
    }
}

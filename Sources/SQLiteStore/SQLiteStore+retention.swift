// Retention on SQLite: batches of old log entries, expired sessions and idempotency records
// deleted oldest first, each batch one short write transaction on the one writer.
import Foundation
import FlowStore
import GRDB

extension SQLiteStore {
    /// One write transaction over the oldest `limit` entries before `horizon` that this
    /// process's earlier batches did not examine. Of each session among them: when its newest
    /// log entry is among them (an idle session), its head (`session_heads`) is folded into its
    /// row and its log deleted; otherwise everything below its newest snapshot among them (an
    /// entry with a tree, see `LogSnapshots`) is deleted, and that snapshot stays so that the
    /// entries after it can still be rebuilt. A session acting on and off keeps at most
    /// `LogSnapshots.interval - 1` entries past the horizon until a later snapshot of it is old
    /// too, or until it is idle. The group commit's transactions wait for it (one writer), so
    /// a batch stays small.
    ///
    /// "Oldest" is the log's insertion order (rowid), not an index on `created_at`: the one
    /// writer stamps and appends entries in time order, so the entries before `horizon` are the
    /// table's first ones, and a batch reads `limit` rows from where the last one stopped and
    /// takes the leading run older than `horizon`. An index on `created_at` cost every action a
    /// second B-tree insert (6-9 % of durable actions a second in bench/compare.sh). Entries a
    /// batch leaves are deleted along their session's chain (`cutLog`) when a later batch cuts or
    /// folds their session, so they are not read again batch after batch. An entry whose stored time
    /// is out of that order (the clock stepped back) goes when the entries before it have gone.
    public func compactActions(before horizon: String, limit: Int) throws -> RetentionBatch {
        let rebuilder = heads.rebuilder
        return try writing { db in
            var examined = 0
            var last: Int64?
            var newest: [String: Int] = [:]
            var snapshots: [String: Int] = [:]
            var seen: [(session: String, version: Int)] = []
            try lowerCompactionCursor(db)
            let rows = try Row.fetchAll(db.cachedStatement(sql: Self.oldActionsSQL), arguments: [compactionCursor.load(ordering: .relaxed), limit])
            for row in rows {
                let at: String = try row.decode(atIndex: 3)
                guard at < horizon else { break }
                examined += 1
                last = try row.decode(atIndex: 0)
                let session: String = try row.decode(atIndex: 1)
                let version: Int = try row.decode(atIndex: 2)
                newest[session] = max(newest[session] ?? version, version)
                seen.append((session, version))
                if try row.decode(atIndex: 4) as Bool { snapshots[session] = max(snapshots[session] ?? version, version) }
            }
            let logHead = try db.cachedStatement(sql: Self.newestEntrySQL("a.version"))
            let head = try db.cachedStatement(sql: """
                SELECT version, tree, last_transition, handled_by, updated_at FROM session_heads WHERE session_id = ?
                """)
            let fold = try db.cachedStatement(sql: """
                UPDATE sessions SET version = ?, tree = ?, last_transition = ?, handled_by = ?, updated_at = ?
                WHERE id = ? AND version < ?
                """)
            let rowVersion = try db.cachedStatement(sql: "SELECT version FROM sessions WHERE id = ?")
            let sessionRow = try db.cachedStatement(sql: "SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?")
            var removed = 0
            var folded = 0
            var cuts: [String: Int] = [:]
            for (session, version) in newest {
                var below = snapshots[session]
                if try Int.fetchOne(logHead, arguments: [session]) == version {
                    if let row = try Row.fetchOne(head, arguments: [session]), try row.decode(atIndex: 0) as Int == version {
                        try fold.execute(arguments: [version, row[1] as DatabaseValue, row[2] as DatabaseValue, row[3] as DatabaseValue,
                                                     row[4] as DatabaseValue, session, version])
                        below = version + 1
                        folded += 1
                    } else if let rebuilder, var record = try Row.fetchOne(sessionRow, arguments: [session]).map(Self.sessionRecord) {
                        // The head row is behind (rewritten every `headInterval` versions): the
                        // head rebuilt from it is what the row takes.
                        try Self.bringToHead(&record, db, rebuilder: rebuilder)
                        if record.version == version, !record.tree.isEmpty {
                            try fold.execute(arguments: [version, Data(record.tree), record.lastTransition, record.handledBy,
                                                         record.updatedAt, session, version])
                            below = version + 1
                            folded += 1
                        }
                    }
                }
                // Entries the row stands at or after (written before 0004) are superseded by it.
                if let row = try Int.fetchOne(rowVersion, arguments: [session]), row > 0 { below = max(below ?? 0, row + 1) }
                // An entry without a tree (between snapshots, or damaged) and no head to
                // stand for it stays.
                guard let below else { continue }
                removed += try Self.cutLog(of: session, below: Int64(below), in: db)
                cuts[session] = below
            }
            if let last { compactionCursor.store(last, ordering: .relaxed) }
            try lowerCompactionCursor(db)
            // Entries passed over stay below the cursor: the run goes on to the next batch.
            let passed = seen.filter { $0.version >= cuts[$0.session] ?? Int.min }.count
            return RetentionBatch(removed: removed, kept: folded + passed, examined: examined)
        }
    }

    /// Brings the cursor down to the log's last entry when none is past it. SQLite numbers a new
    /// entry after the table's last one, so once the entries past the cursor are all deleted (a
    /// log compacted to nothing while every session was idle, or sessions removed), the next
    /// ones would be numbered at or below the cursor and never examined again by this process.
    /// Run in the transaction of everything that deletes log entries (compaction batches after
    /// they delete, session removal, ending and deletion, erasure), before any later commit can
    /// number an entry; and by each compaction batch before it reads, for deletions another
    /// process made on the file.
    func lowerCompactionCursor(_ db: Database) throws {
        let cursor = compactionCursor.load(ordering: .relaxed)
        guard cursor > 0 else { return }
        let top = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(rowid) FROM actions")) ?? 0
        if top < cursor { compactionCursor.store(top, ordering: .relaxed) }
    }

    /// The log's first entries after the cursor, in insertion order (see `compactActions`; its
    /// plan is a range of the table's own B-tree, as far as the limit: `RetentionTests`).
    static let oldActionsSQL = """
        SELECT rowid, session_id, version, created_at, tree IS NOT NULL FROM actions WHERE rowid > ? ORDER BY rowid LIMIT ?
        """

    /// Sessions whose row time is before `horizon`, oldest first (by the index on
    /// `updated_at`): deleted (their log and idempotency records along their chains, stream tickets by cascade)
    /// unless their newest log entry is newer, in which case the row's time moves to it.
    public func removeSessions(idleBefore horizon: String, limit: Int) throws -> RetentionBatch {
        try writing { db in
            let candidates = try String.fetchAll(db.cachedStatement(sql: Self.idleSessionsSQL), arguments: [horizon, limit])
            let newest = try db.cachedStatement(sql: Self.newestEntrySQL("a.created_at"))
            let touch = try db.cachedStatement(sql: "UPDATE sessions SET updated_at = ? WHERE id = ?")
            let delete = try db.cachedStatement(sql: "DELETE FROM sessions WHERE id = ?")
            var batch = RetentionBatch(examined: candidates.count)
            for id in candidates {
                if let at = try String.fetchOne(newest, arguments: [id]), at >= horizon {
                    try touch.execute(arguments: [at, id])
                    batch.kept += 1
                } else {
                    try Self.cutSession(id, in: db)
                    try delete.execute(arguments: [id])
                    batch.removed += db.changesCount
                    batch.sessionIds.append(id)
                }
            }
            try lowerCompactionCursor(db)
            return batch
        }
    }

    static let idleSessionsSQL = """
        SELECT id FROM sessions INDEXED BY sessions_by_updated_at WHERE updated_at < ? ORDER BY updated_at LIMIT ?
        """

    /// The leading run of the oldest `limit` stored answers that are older than `horizon`, in
    /// one write transaction. "Oldest" is the table's insertion order (rowid), as in
    /// `compactActions`: the one writer appends answers in time order, so the old ones are the
    /// table's first, and an index on `created_at` cost every keyed action a third B-tree
    /// insert (migration 18). Every old answer in the run is deleted, so the next batch starts
    /// at the table's first row again and needs no cursor (a table emptied and refilled reuses
    /// low rowids, which a cursor would pass over). An answer stamped out of that order (the
    /// clock stepped back) goes when the answers before it have gone.
    public func pruneIdempotencyRecords(before horizon: String, limit: Int) throws -> RetentionBatch {
        try writing { db in
            var last: Int64?
            var examined = 0
            for row in try Row.fetchAll(db.cachedStatement(sql: Self.oldIdempotencySQL), arguments: [limit]) {
                guard (try row.decode(atIndex: 1) as String) < horizon else { break }
                last = try row.decode(atIndex: 0)
                examined += 1
            }
            guard let last else { return RetentionBatch() }
            try db.cachedStatement(sql: "DELETE FROM idempotency_keys WHERE rowid <= ?").execute(arguments: [last])
            return RetentionBatch(removed: db.changesCount, examined: examined)
        }
    }

    /// The table's first answers, in insertion order (see `pruneIdempotencyRecords`; its plan
    /// reads the table's own B-tree from its start, as far as the limit: `RetentionTests`).
    static let oldIdempotencySQL = "SELECT rowid, created_at FROM idempotency_keys ORDER BY rowid LIMIT ?"

    /// The query plans of the batches' look-ups, for the test that each reads an index's range
    /// or its table's first rows, never a whole table.
    public func retentionPlans() throws -> [String] {
        try reading { db in
            var plans: [String] = []
            let looks: [(String, StatementArguments)] = [(Self.oldActionsSQL, [0, 1]), (Self.idleSessionsSQL, ["x", 1]),
                                                         (Self.oldIdempotencySQL, [1])]
            for (sql, arguments) in looks {
                let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
                plans.append(rows.map { $0["detail"] as String? ?? "" }.joined(separator: "; "))
            }
            return plans
        }
    }
}

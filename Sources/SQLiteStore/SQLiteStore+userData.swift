// One user's data in SQLite: erased in one write transaction, exported in one read transaction.
import FlowStore
import Foundation
import GRDB

extension SQLiteStore {
    /// One write transaction on the writer connection, the one the group commit writes through:
    /// a commit of one of the user's sessions runs wholly before it (and its rows are erased
    /// with the rest) or wholly after it (and finds no session: `sessionNotFound`, nothing
    /// written; the user-state update of a commit is an UPDATE, which re-creates no user).
    /// Each table is reached through an index on the user or the session (see migration 0015).
    ///
    /// `secure_delete` has zeroed the erased rows in the pages this transaction wrote, but the
    /// WAL still holds the pages as they were before, from earlier commits: a TRUNCATE
    /// checkpoint then copies the WAL into the database and empties it, so the user's data is
    /// in neither file once this returns. The checkpoint waits at most 20 ms for a read still
    /// in the WAL, since it holds every commit back meanwhile; when a read (an export, a backup)
    /// or a checkpoint under way keeps it from finishing, the background checkpointer truncates
    /// at its next turn that can.
    public func eraseUser(id: String, auditSubject: String, audit: AuditStamp) throws -> UserErasure {
        let scanned = try scannedRows(ofUser: id)
        let erased = try eraseUserRows(id: id, auditSubject: auditSubject, audit: audit, scanned: scanned)
        let request = checkpointer.truncateSoon()
        do {
            try pool.writeWithoutTransaction { db in try db.truncateWAL() }
            checkpointer.truncated(request)
        } catch {
            // Left to the checkpointer: the erasure itself is committed.
        }
        return erased
    }

    /// The log entries and the idempotency keys of the user's sessions (rowid and session,
    /// each), found by a scan of each whole table on a reader, so that the writer is not held for
    /// it. The erasure deletes them, then each session's keys and log along their chains
    /// (`cutSession`: what was committed since the scan): a row written into the file some
    /// other way, without its link (a hand edit, another tool), goes too. An erasure leaves
    /// nothing of the user, whatever wrote it.
    private func scannedRows(ofUser id: String) throws -> ScannedRows {
        try reading { db in
            func scan(_ table: String) throws -> [(row: Int64, session: String)] {
                try Row.fetchAll(db, sql: "SELECT rowid, session_id FROM \(table) WHERE session_id IN (\(Self.userSessionsSQL))",
                                 arguments: [id]).map { (try $0.decode(atIndex: 0), try $0.decode(atIndex: 1)) }
            }
            return ScannedRows(entries: try scan("actions"), keys: try scan("idempotency_keys"))
        }
    }

    /// What `scannedRows(ofUser:)` found.
    private struct ScannedRows {
        var entries: [(row: Int64, session: String)]
        var keys: [(row: Int64, session: String)]
    }

    private func eraseUserRows(id: String, auditSubject: String, audit: AuditStamp, scanned: ScannedRows) throws -> UserErasure {
        try writing { db in
            var erased = UserErasure()
            let ids = try String.fetchAll(db, sql: Self.userSessionsSQL, arguments: [id])
            // Deleted explicitly, before the session rows: neither table has a foreign key to
            // cascade from them (migrations 20 and 21), and each row is counted.
            for (table, rows, count) in [("actions", scanned.entries, \UserErasure.actions),
                                         ("idempotency_keys", scanned.keys, \UserErasure.idempotencyKeys)] {
                let deleteScanned = try db.cachedStatement(sql: "DELETE FROM \(table) WHERE rowid = ? AND session_id = ?")
                for (row, session) in rows {
                    try deleteScanned.execute(arguments: [row, session])
                    erased[keyPath: count] += db.changesCount
                }
            }
            for session in ids {
                let (keys, entries) = try Self.cutSession(session, in: db)
                erased.idempotencyKeys += keys
                erased.actions += entries
            }
            let bySession: [WritableKeyPath<UserErasure, Int>] = [\.streamTickets, \.sessionFeatures, \.rolloutSessions]
            for (sql, count) in zip(Self.erasureBySessionSQL, bySession) {
                let statement = try db.cachedStatement(sql: sql)
                for session in ids {
                    try statement.execute(arguments: [session])
                    erased[keyPath: count] += db.changesCount
                }
            }
            let byUser: [WritableKeyPath<UserErasure, Int>] = [\.exposures, \.exclusions, \.sessions, \.users]
            for (sql, count) in zip(Self.erasureByUserSQL, byUser) {
                try db.execute(sql: sql, arguments: [id])
                erased[keyPath: count] = db.changesCount
            }
            try lowerCompactionCursor(db)
            try db.execute(sql: Self.erasureAuditSQL, arguments: [auditSubject, id])
            erased.auditEntries = db.changesCount
            erased.sessionIds = ids
            try Self.appendAudit(db, at: Timestamp.string(), action: AuditAction.userErase, subject: auditSubject, old: nil, new: nil,
                                 AuditStamp(credential: audit.credential, detail: erased.countsJSON))
            return erased
        }
    }

    /// The user's sessions: those with a row, and those deleted earlier that the experiment
    /// records still name. `?1`: the user id.
    static let userSessionsSQL = """
        SELECT id FROM sessions WHERE user_id = ?1
        UNION SELECT session_id FROM exposures WHERE user_id = ?1
        UNION SELECT session_id FROM experiment_exclusions WHERE user_id = ?1
        """
    /// What an erasure deletes per session (`?`: a session id) besides its keys and log (along
    /// their chains, `cutSession`), each by an index on session_id.
    static let erasureBySessionSQL = [
        "DELETE FROM stream_tickets WHERE session_id = ?", "DELETE FROM session_features WHERE session_id = ?",
        "DELETE FROM rollout_sessions WHERE session_id = ?",
    ]
    /// What an erasure deletes by user (`?`: the user id); sessions after the rows keyed by them.
    static let erasureByUserSQL = [
        "DELETE FROM exposures WHERE user_id = ?", "DELETE FROM experiment_exclusions WHERE user_id = ?",
        "DELETE FROM sessions WHERE user_id = ?", "DELETE FROM users WHERE id = ?",
    ]
    /// Earlier audit entries about the user get the erasure's subject (`?1`) instead of the id (`?2`).
    static let erasureAuditSQL = "UPDATE audit_log SET subject = ?1 WHERE subject = ?2 AND action LIKE 'user.%'"

    /// One read transaction (a snapshot): the user's row, then their sessions newest first, each
    /// as it stands now with the first entries of its log, then the rows keyed by their sessions.
    public func exportUser(id: String, limits: UserExportLimits) throws -> UserExport {
        let rebuilder = heads.rebuilder
        return try reading { db in
            var export = UserExport()
            export.user = try Row.fetchOne(db, sql: "SELECT id, state, created_at, updated_at FROM users WHERE id = ?",
                                           arguments: [id]).map {
                UserRecord(id: try $0.decode(atIndex: 0), state: try $0.decode(atIndex: 1), createdAt: try $0.decode(atIndex: 2), updatedAt: try $0.decode(atIndex: 3))
            }
            var rows = try Row.fetchAll(db, sql: """
                SELECT \(Self.sessionColumns) FROM sessions WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?
                """, arguments: [id, limits.sessions + 1])
            if rows.count > limits.sessions {
                rows.removeLast()
                export.truncated = true
            }
            var actionBudget = limits.actions
            var keyBudget = limits.rows
            for row in rows {
                var session = try Self.sessionRecord(row)
                let (startVersion, startTree) = (session.version, session.tree)
                try Self.bringToHead(&session, db, rebuilder: rebuilder)
                // One more than the budget tells whether the log goes on.
                var actions = try Self.log(of: session.id, after: -1, limit: actionBudget + 1, in: db)
                let actionsTruncated = actions.count > actionBudget
                if actionsTruncated { actions.removeLast() }
                actionBudget -= actions.count
                // The oldest first, as stamped: the whole chain is walked (newest first) to find
                // them, unless the budget is spent (one key then tells that there are more).
                var used = try Self.keys(of: session.id, limit: keyBudget == 0 ? 1 : .max, in: db)
                    .sorted { a, b in  // by bytes, as SQLite's ORDER BY compared them
                        a.createdAt == b.createdAt ? a.key.utf8.lexicographicallyPrecedes(b.key.utf8)
                            : a.createdAt.utf8.lexicographicallyPrecedes(b.createdAt.utf8)
                    }
                if used.count > keyBudget {
                    used.removeLast(used.count - keyBudget)
                    export.truncated = true
                }
                keyBudget -= used.count
                export.truncated = export.truncated || actionsTruncated
                var exported = ExportedSession(session: session, actions: actions.map(\.action), actionsTruncated: actionsTruncated,
                                               idempotencyKeys: used)
                (exported.actionTrees, exported.startVersion, exported.startTree) = (actions.map(\.tree), startVersion, startTree)
                export.sessions.append(exported)
            }
            let limit = limits.rows + 1
            export.exposures = try Row.fetchAll(db, sql: """
                SELECT session_id, experiment, variant, onboarded, created_at FROM exposures WHERE user_id = ?
                ORDER BY created_at, session_id, experiment LIMIT ?
                """, arguments: [id, limit]).map {
                ExportedExperimentRow(sessionId: try $0.decode(atIndex: 0), experiment: try $0.decode(atIndex: 1), variant: try $0.decode(atIndex: 2), onboarded: (try $0.decode(atIndex: 3) as Int? ?? 0) != 0, createdAt: try $0.decode(atIndex: 4))
            }
            export.exclusions = try Row.fetchAll(db, sql: """
                SELECT session_id, experiment, variant, created_at FROM experiment_exclusions WHERE user_id = ?
                ORDER BY created_at, session_id, experiment LIMIT ?
                """, arguments: [id, limit]).map {
                ExportedExperimentRow(sessionId: try $0.decode(atIndex: 0), experiment: try $0.decode(atIndex: 1), variant: try $0.decode(atIndex: 2), onboarded: false, createdAt: try $0.decode(atIndex: 3))
            }
            let sessions = Self.userSessionsSQL
            export.features = try Row.fetchAll(db, sql: """
                SELECT f.session_id, f.feature FROM session_features f WHERE f.session_id IN (\(sessions))
                ORDER BY f.session_id, f.feature LIMIT ?2
                """, arguments: [id, limit]).map { (sessionId: try $0.decode(atIndex: 0), feature: try $0.decode(atIndex: 1)) }
            export.rolloutSessions = try Row.fetchAll(db, sql: """
                SELECT session_id, release_id, arm, refused, dead_end, converted, created_at FROM rollout_sessions
                WHERE session_id IN (\(sessions)) ORDER BY created_at, session_id LIMIT ?2
                """, arguments: [id, limit]).map { row in
                var marks: GuardrailMarks = []
                if (try row.decode(atIndex: 3) as Int? ?? 0) != 0 { marks.insert(.refused) }
                if (try row.decode(atIndex: 4) as Int? ?? 0) != 0 { marks.insert(.deadEnd) }
                if (try row.decode(atIndex: 5) as Int? ?? 0) != 0 { marks.insert(.converted) }
                return ExportedRolloutSession(sessionId: try row.decode(atIndex: 0), releaseId: try row.decode(atIndex: 1), arm: try row.decode(atIndex: 2), marks: marks, createdAt: try row.decode(atIndex: 6))
            }
            if export.exposures.count > limits.rows { export.exposures.removeLast(); export.truncated = true }
            if export.exclusions.count > limits.rows { export.exclusions.removeLast(); export.truncated = true }
            if export.features.count > limits.rows { export.features.removeLast(); export.truncated = true }
            if export.rolloutSessions.count > limits.rows { export.rolloutSessions.removeLast(); export.truncated = true }
            return export
        }
    }
}

// One user's data in PostgreSQL: erased in one transaction that every node's commits respect,
// exported in one snapshot.
import FlowStore

extension PostgresStore {
    /// How long an erasure may take: it deletes a user's whole history, more than a request's
    /// worth of rows (`statement_timeout` is 10 s).
    static let erasureTimeout: Duration = .seconds(9)

    /// One transaction on one connection, in this order:
    /// - the audit log's lock (as every audited change), then `SHARE ROW EXCLUSIVE` on sessions:
    ///   session creations and deletions, on every node, wait for the erasure (for its few
    ///   milliseconds), so none of the user's sessions is inserted under it and left without
    ///   its user; action commits, which only read sessions (their foreign key's `KEY SHARE`),
    ///   and reads go on.
    /// - the user's session rows `FOR UPDATE`, in id order (the group commit's order): a
    ///   commit of one of them that came first finishes first, and each statement after
    ///   this one (READ COMMITTED: a snapshot per statement) sees and erases its rows; one that
    ///   comes after waits for the erasure and then fails on its foreign key
    ///   (`sessionNotFound`), writing nothing.
    /// - the rows keyed by those sessions (and those of sessions deleted earlier that the
    ///   user's experiment records name), the experiment records, the sessions, the user; the
    ///   audit log's earlier entries about the user; `user.erase`.
    /// A deadlock with a commit batch (two of the user's sessions taken in another order) is
    /// retried twice.
    public func eraseUser(id: String, auditSubject: String, audit: AuditStamp) throws -> UserErasure {
        try retryingConflicts { try eraseUserOnce(id: id, auditSubject: auditSubject, audit: audit) }
    }

    private func eraseUserOnce(id: String, auditSubject: String, audit: AuditStamp) throws -> UserErasure {
        let deadline = ContinuousClock.now + Self.erasureTimeout
        return try userDataTransaction(deadline: deadline, idempotent: false) { connection throws(PGError) -> UserErasure in
            let open = try connection.runTransaction([
                PGStatement("BEGIN"),
                PGStatement("LOCK TABLE audit_log IN EXCLUSIVE MODE"),
                PGStatement("LOCK TABLE sessions IN SHARE ROW EXCLUSIVE MODE"),
                PGStatement("SELECT id FROM sessions WHERE user_id = $1::text ORDER BY id COLLATE \"C\" FOR UPDATE", [.text(id)]),
                PGStatement("""
                    SELECT session_id FROM exposures WHERE user_id = $1::text
                    UNION SELECT session_id FROM experiment_exclusions WHERE user_id = $1::text
                    """, [.text(id)]),
            ], deadline: deadline).rows()
            var ids: [String] = []
            var seen = Set<String>()
            for rows in open[3...4] {
                for row in 0..<rows.count {
                    if let session = try rows.string(row, 0), seen.insert(session).inserted { ids.append(session) }
                }
            }
            let array = PGValue.text(Self.textArray(ids))
            func deleted(_ sql: String, _ parameter: PGValue) -> PGStatement {
                PGStatement("WITH gone AS (\(sql) RETURNING 1) SELECT count(*) FROM gone", [parameter])
            }
            let statements = Self.erasureBySessionSQL.map { deleted($0, array) } + Self.erasureByUserSQL.map { deleted($0, .text(id)) } + [
                PGStatement("""
                    WITH renamed AS (
                        UPDATE audit_log SET subject = $2::text WHERE subject = $1::text AND action LIKE 'user.%' RETURNING 1
                    ) SELECT count(*) FROM renamed
                    """, [.text(id), .text(auditSubject)]),
            ]
            let counted = try connection.runTransaction(statements, deadline: deadline).rows()
            var erased = UserErasure()
            let fields: [WritableKeyPath<UserErasure, Int>] = [
                \.actions, \.idempotencyKeys, \.streamTickets, \.sessionFeatures, \.rolloutSessions, \.exposures,
                \.exclusions, \.sessions, \.users, \.auditEntries,
            ]
            for (field, rows) in zip(fields, counted) {
                erased[keyPath: field] = rows.count == 1 ? try rows.integer(0, 0) ?? 0 : 0
            }
            erased.sessionIds = ids
            _ = try connection.runTransaction([
                PGStatement("""
                    INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential, detail)
                    SELECT COALESCE(MAX(id), 0) + 1, $1::text, $2::text, $3::text, NULL, NULL, $4::text, $5::text FROM audit_log
                    """, [.text(Timestamp.string()), .text(AuditAction.userErase), .text(auditSubject), .text(audit.credential),
                          .text(erased.countsJSON)]),
                PGStatement("COMMIT"),
            ], deadline: deadline).rows()
            return erased
        }
    }

    /// What an erasure deletes by session (`$1`: the sessions, an array), each by an index on session_id.
    static let erasureBySessionSQL = [
        "DELETE FROM actions WHERE session_id = ANY($1::text[])", "DELETE FROM idempotency_keys WHERE session_id = ANY($1::text[])",
        "DELETE FROM stream_tickets WHERE session_id = ANY($1::text[])", "DELETE FROM session_features WHERE session_id = ANY($1::text[])",
        "DELETE FROM rollout_sessions WHERE session_id = ANY($1::text[])",
    ]
    /// What an erasure deletes by user (`$1`: the user id); sessions after the rows keyed by them.
    static let erasureByUserSQL = [
        "DELETE FROM exposures WHERE user_id = $1::text", "DELETE FROM experiment_exclusions WHERE user_id = $1::text",
        "DELETE FROM sessions WHERE user_id = $1::text", "DELETE FROM users WHERE id = $1::text",
    ]

    /// Runs `body` on one connection; when it throws, whatever transaction it opened is rolled
    /// back before the connection goes back to the pool (an erasure, an export, a session's end).
    func userDataTransaction<T>(deadline: ContinuousClock.Instant, idempotent: Bool,
                                _ body: (PGConnection) throws(PGError) -> T) throws -> T {
        do {
            return try pool.withConnection(deadline: deadline, idempotent: idempotent) { connection throws(PGError) -> T in
                do throws(PGError) {
                    return try body(connection)
                } catch {
                    _ = try? connection.run([PGStatement("ROLLBACK")], deadline: deadline)
                    throw error
                }
            }
        } catch {
            throw Self.storeError(error, location: location)
        }
    }

    /// One `REPEATABLE READ READ ONLY` transaction, so every part comes from one snapshot, in
    /// one round trip but for the logs: the user's row, their sessions newest first (each with
    /// its head's tree), then the rows keyed by the user or their sessions.
    public func exportUser(id: String, limits: UserExportLimits) throws -> UserExport {
        let sessions = """
            SELECT id FROM sessions WHERE user_id = $1::text
            UNION SELECT session_id FROM exposures WHERE user_id = $1::text
            UNION SELECT session_id FROM experiment_exclusions WHERE user_id = $1::text
            """
        let limit = PGValue.integer(limits.rows + 1)
        let deadline = ContinuousClock.now + Self.erasureTimeout
        let results = try userDataTransaction(deadline: deadline, idempotent: true) { connection throws(PGError) -> [PGRows] in
            let first = try connection.runTransaction([
                PGStatement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),
                PGStatement("SELECT id, state, created_at, updated_at, revision FROM users WHERE id = $1::text", [.text(id)]),
                PGStatement("""
                    SELECT s.id, s.user_id, s.version, s.tree, s.context, s.flags, s.experiments, s.flow_versions,
                           s.last_transition, s.handled_by, s.created_at, s.updated_at, s.client,
                           a.version, COALESCE(h.tree, a.tree),
                           CASE WHEN h.version IS NULL THEN a.transition ELSE h.last_transition END,
                           CASE WHEN h.version IS NULL THEN a.handled_by ELSE h.handled_by END, COALESCE(h.updated_at, a.created_at)
                    FROM sessions s LEFT JOIN LATERAL (
                        SELECT version, tree, transition, handled_by, created_at FROM actions
                        WHERE session_id = s.id ORDER BY version DESC LIMIT 1) a ON true
                    LEFT JOIN session_heads h ON h.session_id = s.id AND h.version = a.version
                    WHERE s.user_id = $1::text ORDER BY s.created_at DESC, s.id DESC LIMIT $2::bigint
                    """, [.text(id), .integer(limits.sessions + 1)]),
                PGStatement("""
                    SELECT session_id, experiment, variant, onboarded, created_at FROM exposures WHERE user_id = $1::text
                    ORDER BY created_at, session_id, experiment LIMIT $2::bigint
                    """, [.text(id), limit]),
                PGStatement("""
                    SELECT session_id, experiment, variant, created_at FROM experiment_exclusions WHERE user_id = $1::text
                    ORDER BY created_at, session_id, experiment LIMIT $2::bigint
                    """, [.text(id), limit]),
                PGStatement("""
                    SELECT session_id, feature FROM session_features WHERE session_id IN (\(sessions))
                    ORDER BY session_id, feature LIMIT $2::bigint
                    """, [.text(id), limit]),
                PGStatement("""
                    SELECT session_id, release_id, arm, refused, dead_end, converted, created_at FROM rollout_sessions
                    WHERE session_id IN (\(sessions)) ORDER BY created_at, session_id LIMIT $2::bigint
                    """, [.text(id), limit]),
            ], deadline: deadline).rows()
            // The logs of the sessions read, in their order, each cut at the action budget
            // (and one more entry, to tell whether it goes on), in the same snapshot.
            let listed = first[2]
            var ids: [String] = []
            for row in 0..<min(listed.count, limits.sessions) {
                if let id = try listed.string(row, 0) { ids.append(id) }
            }
            let rest = try connection.runTransaction([
                PGStatement("""
                    SELECT o.id, a.version, a.type, a.source, a.params, a.interactive, a.handled_by, a.transition,
                           a.created_at, a.client_at, a.user_state, a.tree
                    FROM unnest($1::text[]) WITH ORDINALITY AS o(id, n)
                    JOIN LATERAL (SELECT * FROM actions WHERE session_id = o.id ORDER BY version LIMIT $2::bigint) a ON true
                    ORDER BY o.n, a.version LIMIT $2::bigint
                    """, [.text(Self.textArray(ids)), .integer(limits.actions + 1)]),
                PGStatement("""
                    SELECT k.session_id, k.key, k.status, k.version, k.created_at
                    FROM unnest($1::text[]) WITH ORDINALITY AS o(id, n) JOIN idempotency_keys k ON k.session_id = o.id
                    ORDER BY o.n, k.created_at, k.key LIMIT $2::bigint
                    """, [.text(Self.textArray(ids)), limit]),
                PGStatement("COMMIT"),
            ], deadline: deadline).rows()
            return Array(first[1...]) + Array(rest[0...1])
        }
        return try Self.export(results, limits: limits)
    }

    /// The export from the rows of `exportUser`'s statements: user, sessions, exposures,
    /// exclusions, features, rollout rows, logs, keys.
    private static func export(_ results: [PGRows], limits: UserExportLimits) throws -> UserExport {
        var export = UserExport()
        let (user, sessions, exposures, exclusions, features, rollouts, log, keys) =
            (results[0], results[1], results[2], results[3], results[4], results[5], results[6], results[7])
        if user.count == 1, let id = try user.string(0, 0) {
            export.user = UserRecord(id: id, state: try user.string(0, 1) ?? "{}", createdAt: try user.string(0, 2) ?? "",
                                     updatedAt: try user.string(0, 3) ?? "", revision: try user.integer(0, 4) ?? 0)
        }
        var entries: [String: [(action: ActionRecord, tree: [UInt8]?)]] = [:]
        let cut = log.count > limits.actions
        for row in 0..<min(log.count, limits.actions) {
            guard let session = try log.string(row, 0) else { continue }
            entries[session, default: []].append(try logEntry(log, row, from: 1))
        }
        // The entry past the budget belongs to the first session whose log was cut; the ones
        // after it in the order got none of the budget.
        let cutAt = cut ? try log.string(limits.actions, 0) : nil
        var used: [String: [ExportedIdempotencyKey]] = [:]
        for row in 0..<min(keys.count, limits.rows) {
            guard let session = try keys.string(row, 0), let key = try keys.string(row, 1) else { continue }
            used[session, default: []].append(ExportedIdempotencyKey(
                key: key, status: try keys.integer(row, 2) ?? 0, version: try keys.integer(row, 3) ?? 0, createdAt: try keys.string(row, 4) ?? ""))
        }
        var pastCut = false
        for row in 0..<min(sessions.count, limits.sessions) {
            guard let id = try sessions.string(row, 0) else { continue }
            var record = SessionRecord(
                id: id, userId: try sessions.string(row, 1) ?? "", tokenHash: [], version: try sessions.integer(row, 2) ?? 0,
                tree: try sessions.bytes(row, 3) ?? [], context: try sessions.string(row, 4) ?? "{}", flags: try sessions.string(row, 5) ?? "{}",
                experiments: try sessions.string(row, 6) ?? "{}", flowVersions: try sessions.string(row, 7) ?? "{}",
                lastTransition: try sessions.string(row, 8), handledBy: try sessions.string(row, 9), createdAt: try sessions.string(row, 10) ?? "",
                updatedAt: try sessions.string(row, 11) ?? "", client: try sessions.string(row, 12))
            let (startVersion, startTree) = (record.version, record.tree)
            if let version = try sessions.integer(row, 13), version > record.version {
                record.version = version
                record.tree = try sessions.bytes(row, 14) ?? []
                record.lastTransition = try sessions.string(row, 15)
                record.handledBy = try sessions.string(row, 16)
                record.updatedAt = try sessions.string(row, 17) ?? record.updatedAt
            }
            if id == cutAt { pastCut = true }
            let actions = entries[id] ?? []
            // A session at or after the cut whose log is not empty lost entries to the budget.
            let truncated = pastCut && (id == cutAt || record.version > 0)
            var exported = ExportedSession(session: record, actions: actions.map(\.action), actionsTruncated: truncated,
                                           idempotencyKeys: used[id] ?? [])
            (exported.actionTrees, exported.startVersion, exported.startTree) = (actions.map(\.tree), startVersion, startTree)
            export.sessions.append(exported)
        }
        export.exposures = try (0..<min(exposures.count, limits.rows)).map { row in
            ExportedExperimentRow(sessionId: try exposures.string(row, 0) ?? "", experiment: try exposures.string(row, 1) ?? "",
                                  variant: try exposures.string(row, 2) ?? "", onboarded: (try exposures.integer(row, 3) ?? 0) != 0,
                                  createdAt: try exposures.string(row, 4) ?? "")
        }
        export.exclusions = try (0..<min(exclusions.count, limits.rows)).map { row in
            ExportedExperimentRow(sessionId: try exclusions.string(row, 0) ?? "", experiment: try exclusions.string(row, 1) ?? "",
                                  variant: try exclusions.string(row, 2) ?? "", onboarded: false, createdAt: try exclusions.string(row, 3) ?? "")
        }
        export.features = try (0..<min(features.count, limits.rows)).map { row in
            (sessionId: try features.string(row, 0) ?? "", feature: try features.string(row, 1) ?? "")
        }
        export.rolloutSessions = try (0..<min(rollouts.count, limits.rows)).map { row in
            var marks: GuardrailMarks = []
            if (try rollouts.integer(row, 3) ?? 0) != 0 { marks.insert(.refused) }
            if (try rollouts.integer(row, 4) ?? 0) != 0 { marks.insert(.deadEnd) }
            if (try rollouts.integer(row, 5) ?? 0) != 0 { marks.insert(.converted) }
            return ExportedRolloutSession(sessionId: try rollouts.string(row, 0) ?? "", releaseId: try rollouts.integer(row, 1) ?? 0,
                                          arm: try rollouts.string(row, 2) ?? "", marks: marks, createdAt: try rollouts.string(row, 6) ?? "")
        }
        export.truncated = sessions.count > limits.sessions || cut || keys.count > limits.rows || exposures.count > limits.rows
            || exclusions.count > limits.rows || features.count > limits.rows || rollouts.count > limits.rows
        return export
    }
}

// Sessions, their action log and idempotent answers in PostgreSQL (their group commit is in
// PostgresStore+commits.swift).
import FlowStore
import Foundation

extension PostgresStore {
    public func insert(_ session: SessionRecord, exposures: [(experiment: String, variant: String)],
                       exclusions: [(experiment: String, variant: String)], firstFeature: String?) throws {
        var statements = [PGStatement("BEGIN")]
        for exclusion in exclusions {
            statements.append(PGStatement("""
                INSERT INTO experiment_exclusions (session_id, experiment, user_id, variant, created_at)
                VALUES ($1::text, $2::text, $3::text, $4::text, $5::text)
                """, [.text(session.id), .text(exclusion.experiment), .text(session.userId), .text(exclusion.variant),
                      .text(session.createdAt)]))
        }
        for exposure in exposures {
            statements.append(PGStatement("""
                INSERT INTO exposures (session_id, experiment, user_id, variant, created_at)
                VALUES ($1::text, $2::text, $3::text, $4::text, $5::text)
                """, [.text(session.id), .text(exposure.experiment), .text(session.userId), .text(exposure.variant),
                      .text(session.createdAt)]))
        }
        if !exposures.isEmpty, let firstFeature {
            statements.append(Self.recordFeature(session: session.id, feature: firstFeature))
        }
        statements.append(PGStatement("""
            INSERT INTO users (id, state, created_at, updated_at) VALUES ($1::text, '{}', $2::text, $2::text)
            ON CONFLICT (id) DO NOTHING
            """, [.text(session.userId), .text(session.createdAt)]))
        statements.append(PGStatement("""
            INSERT INTO sessions (id, user_id, token_hash, version, tree, context, flags, experiments,
                flow_versions, last_transition, handled_by, created_at, updated_at, client)
            VALUES ($1::text, $2::text, $3::bytea, $4::integer, $5::bytea, $6::text, $7::text, $8::text, $9::text,
                $10::text, $11::text, $12::text, $13::text, $14::text)
            """, [
                .text(session.id), .text(session.userId), .bytes(session.tokenHash), .integer(session.version),
                .bytes(session.tree), .text(session.context), .text(session.flags), .text(session.experiments),
                .text(session.flowVersions), .optional(session.lastTransition), .optional(session.handledBy),
                .text(session.createdAt), .text(session.updatedAt), .optional(session.client),
            ]))
        statements.append(PGStatement("COMMIT"))
        try write(statements)
    }

    /// The session's row, its newest log entry and its head row, in one statement: the head
    /// when it stands at the log's newest version, else that entry's own tree (see `LogSnapshots`).
    public func session(id: String) throws -> SessionRecord? {
        let rows = try read([PGStatement("""
            SELECT s.id, s.user_id, s.token_hash, s.version, s.tree, s.context, s.flags, s.experiments, s.flow_versions,
                   s.last_transition, s.handled_by, s.created_at, s.updated_at,
                   a.version, COALESCE(h.tree, a.tree), CASE WHEN h.version IS NULL THEN a.transition ELSE h.last_transition END,
                   CASE WHEN h.version IS NULL THEN a.handled_by ELSE h.handled_by END, COALESCE(h.updated_at, a.created_at), s.client
            FROM sessions s LEFT JOIN LATERAL (
                SELECT version, tree, transition, handled_by, created_at FROM actions
                WHERE session_id = s.id ORDER BY version DESC LIMIT 1) a ON true
            LEFT JOIN session_heads h ON h.session_id = s.id AND h.version = a.version
            WHERE s.id = $1::text
            """, [.text(id)])])[0]
        guard rows.count == 1 else { return nil }
        var record = SessionRecord(
            id: try rows.text(0, 0), userId: try rows.text(0, 1), tokenHash: try rows.data(0, 2),
            version: try rows.int(0, 3), tree: try rows.data(0, 4), context: try rows.text(0, 5),
            flags: try rows.text(0, 6), experiments: try rows.text(0, 7), flowVersions: try rows.text(0, 8),
            lastTransition: try rows.string(0, 9), handledBy: try rows.string(0, 10), createdAt: try rows.text(0, 11),
            updatedAt: try rows.text(0, 12), client: try rows.string(0, 18))
        if let version = try rows.integer(0, 13), version > record.version {
            // The log is newer than the row; a head lost with no tree on the entry (a damaged
            // database) reads as an empty tree, reported as such by the engine, never replaced
            // by the older row.
            record.version = version
            record.tree = try rows.bytes(0, 14) ?? []
            record.lastTransition = try rows.string(0, 15)
            record.handledBy = try rows.string(0, 16)
            record.updatedAt = try rows.string(0, 17) ?? record.updatedAt
        }
        return record
    }

    /// The token's hash and the time of the newest version, from the row and the newest log
    /// entry: no tree is sent.
    public func sessionCredentials(id: String) throws -> SessionCredentials? {
        let rows = try read([PGStatement("""
            SELECT s.token_hash, COALESCE((SELECT created_at FROM actions WHERE session_id = s.id AND version > s.version
                                           ORDER BY version DESC LIMIT 1), s.updated_at)
            FROM sessions s WHERE s.id = $1::text
            """, [.text(id)])])[0]
        guard rows.count == 1 else { return nil }
        return SessionCredentials(tokenHash: try rows.data(0, 0), lastActiveAt: try rows.text(0, 1))
    }

    public func submit(_ commit: ActionCommit, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        groupCommit.submit(commit, completion: completion)
    }

    /// Queues the successive commits of one session together, so that they share the writer
    /// thread's next transaction (see `GroupCommit.submit(_:completion:)`).
    public func submit(_ commits: [ActionCommit], completion: @escaping @Sendable ([Result<Void, any Error>]) -> Void) {
        groupCommit.submit(commits, completion: completion)
    }

    public func actions(sessionId: String, after: Int, limit: Int) throws -> [ActionRecord] {
        let rows = try read([PGStatement(Self.logSQL, [.text(sessionId), .integer(after), .integer(limit)])])[0]
        return try (0..<rows.count).map { try Self.logEntry(rows, $0).action }
    }

    /// A session's log entries after a version, oldest first, as `logEntry` reads them.
    static let logSQL = """
        SELECT version, type, source, params, interactive, handled_by, transition, created_at, client_at, user_state, tree
        FROM actions WHERE session_id = $1::text AND version > $2::bigint ORDER BY version LIMIT $3::bigint
        """

    static func logEntry(_ rows: PGRows, _ row: Int, from column: Int = 0) throws -> (action: ActionRecord, tree: [UInt8]?) {
        (action: ActionRecord(version: try rows.int(row, column), type: try rows.text(row, column + 1), source: try rows.string(row, column + 2),
                              params: try rows.text(row, column + 3), interactive: try rows.boolean(row, column + 4),
                              handledBy: try rows.string(row, column + 5), transition: try rows.string(row, column + 6),
                              createdAt: try rows.text(row, column + 7), clientAt: try rows.string(row, column + 8),
                              userState: try rows.string(row, column + 9)),
         tree: try rows.bytes(row, column + 10))
    }

    /// Two round trips on a read connection: the start (the newest entry with a tree at or
    /// below `after`, else the row), then the entries after it.
    public func actionLog(sessionId: String, after: Int, limit: Int) throws -> ActionLogSlice? {
        let rows = try read([PGStatement("""
            SELECT s.version, s.tree, a.version, a.tree FROM sessions s LEFT JOIN LATERAL (
                SELECT version, tree FROM actions WHERE session_id = s.id AND version <= $2::bigint AND version > s.version
                    AND tree IS NOT NULL ORDER BY version DESC LIMIT 1) a ON true
            WHERE s.id = $1::text
            """, [.text(sessionId), .integer(after)])])[0]
        guard rows.count == 1 else { return nil }
        var start = (version: try rows.int(0, 0), tree: try rows.data(0, 1))
        if let version = try rows.integer(0, 2) { start = (version, try rows.data(0, 3)) }
        let log = try read([PGStatement(Self.logSQL, [.text(sessionId), .integer(start.version),
                                                      .integer(max(0, after - start.version) + limit)])])[0]
        return ActionLogSlice(startVersion: start.version, startTree: start.tree,
                              entries: try (0..<log.count).map { try Self.logEntry(log, $0) })
    }

    public func idempotentAnswer(sessionId: String, key: String) throws -> IdempotentAnswer? {
        let rows = try read([PGStatement("""
            SELECT request_hash, status, version, body FROM idempotency_keys WHERE session_id = $1::text AND key = $2::text
            """, [.text(sessionId), .text(key)])])[0]
        guard rows.count == 1 else { return nil }
        return IdempotentAnswer(requestHash: try rows.data(0, 0), status: try rows.int(0, 1),
                                version: try rows.int(0, 2), body: try rows.bytes(0, 3))
    }

    /// The answers stored under any of `keys` for this session: one statement, the keys as one
    /// array parameter.
    public func idempotentAnswers(sessionId: String, keys: [String]) throws -> [String: IdempotentAnswer] {
        guard !keys.isEmpty else { return [:] }
        let rows = try read([PGStatement("""
            SELECT key, request_hash, status, version, body FROM idempotency_keys
            WHERE session_id = $1::text AND key = ANY($2::text[])
            """, [.text(sessionId), .text(Self.textArray(keys))])])[0]
        var answers: [String: IdempotentAnswer] = [:]
        for row in 0..<rows.count {
            guard let key = try rows.string(row, 0) else { continue }
            answers[key] = IdempotentAnswer(requestHash: try rows.data(row, 1), status: try rows.int(row, 2),
                                            version: try rows.int(row, 3), body: try rows.bytes(row, 4))
        }
        return answers
    }

    @discardableResult
    public func deleteSession(id: String) throws -> Bool {
        try write([PGStatement("DELETE FROM sessions WHERE id = $1::text RETURNING 1", [.text(id)])])[0].count > 0
    }

    /// One transaction on one connection, two round trips: the audit log's lock (as every
    /// audited change), then the session's row `FOR UPDATE`, which waits for a commit of it in
    /// flight (commits take the row `FOR KEY SHARE`) and makes one that comes later wait and then
    /// fail on its foreign key (`sessionNotFound`), writing nothing; its head read after the
    /// lock (a statement of its own, so it sees that commit); then the rows keyed by it,
    /// counted, the row, and `session.end`.
    public func endSession(id: String, audit: AuditStamp) throws -> SessionEnding? {
        let deadline = ContinuousClock.now + Self.requestTimeout
        return try userDataTransaction(deadline: deadline, idempotent: false) { connection throws(PGError) -> SessionEnding? in
            let open = try connection.runTransaction([
                PGStatement("BEGIN"),
                PGStatement("LOCK TABLE audit_log IN EXCLUSIVE MODE"),
                PGStatement("SELECT user_id FROM sessions WHERE id = $1::text FOR UPDATE", [.text(id)]),
                PGStatement(Self.headSQL, [.text(id)]),
            ], deadline: deadline).rows()
            guard open[2].count == 1, let userId = try open[2].string(0, 0) else {
                _ = try connection.run([PGStatement("ROLLBACK")], deadline: deadline).rows()
                return nil
            }
            let version = open[3].count == 1 ? try open[3].integer(0, 0) ?? 0 : 0
            var ended = SessionEnding(sessionId: id, userId: userId, version: version)
            let counts: [WritableKeyPath<SessionEnding, Int>] = [\.actions, \.idempotencyKeys, \.streamTickets]
            let deletes = ["actions", "idempotency_keys", "stream_tickets"].map { table in
                PGStatement("WITH gone AS (DELETE FROM \(table) WHERE session_id = $1::text RETURNING 1) SELECT count(*) FROM gone",
                            [.text(id)])
            }
            let counted = try connection.runTransaction(deletes + [
                PGStatement("DELETE FROM sessions WHERE id = $1::text", [.text(id)]),
            ], deadline: deadline).rows()
            for (count, rows) in zip(counts, counted) {
                ended[keyPath: count] = rows.count == 1 ? try rows.integer(0, 0) ?? 0 : 0
            }
            _ = try connection.runTransaction([
                PGStatement("""
                    INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential, detail)
                    SELECT COALESCE(MAX(id), 0) + 1, $1::text, $2::text, $3::text, $4::bigint, NULL, $5::text, $6::text FROM audit_log
                    """, [.text(Timestamp.string()), .text(AuditAction.sessionEnd), .text(id), .integer(version),
                          .text(audit.credential), .text(ended.countsJSON)]),
                PGStatement("COMMIT"),
            ], deadline: deadline).rows()
            return ended
        }
    }

    /// One range scan of `sessions_by_created_at`, grouped by the client text.
    public func clientCounts(createdSince since: String, limit: Int) throws -> (total: Int, clients: [ClientSessionCount]) {
        let results = try read([
            PGStatement("SELECT COUNT(*) FROM sessions WHERE created_at >= $1::text", [.text(since)]),
            PGStatement("""
                SELECT client, COUNT(*) AS n FROM sessions WHERE created_at >= $1::text
                GROUP BY client ORDER BY n DESC, client LIMIT $2::bigint
                """, [.text(since), .integer(limit)]),
        ])
        let clients = try (0..<results[1].count).map { row in
            ClientSessionCount(client: try results[1].string(row, 0), sessions: try results[1].integer(row, 1) ?? 0)
        }
        return (try results[0].integer(0, 0) ?? 0, clients)
    }

    /// Two round trips per batch on a read connection: the sessions from the cursor down
    /// (`sessions_by_created_at`), then the logs of all of them as one array parameter.
    public func recordedSessions(createdSince since: String, before cursor: RecordedSessionCursor?, limit: Int,
                                 maxActions: Int) throws -> [RecordedSessionRecord] {
        let columns = """
            SELECT id, user_id, token_hash, version, tree, context, flags, experiments, flow_versions,
                   last_transition, handled_by, created_at, updated_at, client FROM sessions
            """
        let statement: PGStatement
        if let cursor {
            statement = PGStatement(columns + """
                 WHERE created_at >= $1::text AND created_at <= $2::text AND (created_at < $2::text OR id < $3::text)
                ORDER BY created_at DESC, id DESC LIMIT $4::bigint
                """, [.text(since), .text(cursor.createdAt), .text(cursor.id), .integer(limit)])
        } else {
            statement = PGStatement(columns + """
                 WHERE created_at >= $1::text ORDER BY created_at DESC, id DESC LIMIT $2::bigint
                """, [.text(since), .integer(limit)])
        }
        let rows = try read([statement])[0]
        let sessions = try (0..<rows.count).map { row in
            SessionRecord(
                id: try rows.text(row, 0), userId: try rows.text(row, 1), tokenHash: try rows.data(row, 2),
                version: try rows.int(row, 3), tree: try rows.data(row, 4), context: try rows.text(row, 5),
                flags: try rows.text(row, 6), experiments: try rows.text(row, 7),
                flowVersions: try rows.text(row, 8), lastTransition: try rows.string(row, 9),
                handledBy: try rows.string(row, 10), createdAt: try rows.text(row, 11),
                updatedAt: try rows.text(row, 12), client: try rows.string(row, 13))
        }
        guard !sessions.isEmpty else { return [] }
        let log = try read([PGStatement("""
            SELECT a.session_id, a.version, a.type, a.source, a.params, a.interactive, a.handled_by, a.transition,
                   a.created_at, a.client_at, a.user_state, a.tree
            FROM actions a JOIN sessions s ON s.id = a.session_id
            WHERE a.session_id = ANY($1::text[]) AND a.version > s.version AND a.version <= s.version + $2::bigint
            ORDER BY a.session_id, a.version
            """, [.text(Self.textArray(sessions.map(\.id))), .integer(maxActions)])])[0]
        var actions: [String: [(action: ActionRecord, tree: [UInt8]?)]] = [:]
        for row in 0..<log.count {
            guard let id = try log.string(row, 0) else { continue }
            actions[id, default: []].append(try Self.logEntry(log, row, from: 1))
        }
        return sessions.map { RecordedSessionRecord(session: $0, actions: actions[$0.id] ?? []) }
    }

    public func sessionCount() throws -> Int {
        try read([PGStatement("SELECT COUNT(*) FROM sessions")])[0].integer(0, 0) ?? 0
    }

    public func headVersion(sessionId: String) throws -> Int? {
        let rows = try read([PGStatement(Self.headSQL, [.text(sessionId)])])[0]
        return try rows.count == 1 ? rows.integer(0, 0) : nil
    }

    public func headVersions(sessionIds: [String]) throws -> [String: Int] {
        guard !sessionIds.isEmpty else { return [:] }
        var heads: [String: Int] = [:]
        // Batches of ids as one array parameter each: one round trip however many sessions.
        let statements = stride(from: 0, to: sessionIds.count, by: 1000).map { start in
            PGStatement(Self.headsSQL, [.text(Self.textArray(sessionIds[start..<min(start + 1000, sessionIds.count)]))])
        }
        for rows in try read(statements) {
            for row in 0..<rows.count {
                if let id = try rows.string(row, 0), let head = try rows.integer(row, 1) { heads[id] = head }
            }
        }
        return heads
    }

    static let headsSQL = """
        SELECT s.id, GREATEST(s.version, COALESCE((SELECT a.version FROM actions a WHERE a.session_id = s.id
            ORDER BY a.version DESC LIMIT 1), 0))
        FROM sessions s WHERE s.id = ANY($1::text[])
        """

    /// A PostgreSQL array literal of `values`, each quoted (`{"a","b"}`).
    static func textArray(_ values: some Sequence<String>) -> String {
        var literal = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { literal += "," }
            literal += "\""
            for character in value {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    static func recordFeature(session: String, feature: String) -> PGStatement {
        PGStatement("""
            INSERT INTO session_features (session_id, feature) VALUES ($1::text, $2::text)
            ON CONFLICT (session_id, feature) DO NOTHING
            """, [.text(session), .text(feature)])
    }
}

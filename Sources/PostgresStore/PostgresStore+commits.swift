// The group commit in PostgreSQL: a batch of actions written in one round trip, each one's
// statement deciding in the database whether it applies.
import FlowStore
import Foundation

extension PostgresStore {
    /// Writes a batch in one transaction and one round trip: `BEGIN`, one statement per action,
    /// `COMMIT`, sent together in libpq's pipeline mode. Each action's statement decides in the
    /// database whether it applies (its session stands at version − 1, its key is unused) and
    /// writes nothing otherwise, so a conflict is a row of the answer, not an error that would
    /// undo the batch. When a statement does fail (the session deleted meanwhile, a deadlock),
    /// the transaction is rolled back and each action is written again on its own.
    ///
    /// `deadline` is counted from when the oldest commit of the batch was queued, so no action
    /// waits longer than `requestTimeout` for its answer however many batches are ahead of it.
    static func write(_ batch: [ActionCommit], pool: PGPool, location: String,
                      deadline: ContinuousClock.Instant) -> [Result<Void, any Error>] {
        // The same lock order on every node (users, then sessions) so batches do not deadlock.
        let order = batch.indices.sorted { (batch[$0].userId, batch[$0].sessionId, $0) < (batch[$1].userId, batch[$1].sessionId, $1) }
        var statements = [PGStatement("BEGIN")]
        statements.reserveCapacity(batch.count + 2)
        for index in order { statements.append(commitStatement(batch[index])) }
        statements.append(PGStatement("COMMIT"))
        let outcomes: [PGOutcome]
        do {
            outcomes = try pool.withConnection(deadline: deadline) { connection throws(PGError) in
                try connection.runTransaction(statements, deadline: deadline)
            }
        } catch {
            // Sent, and no answer: the commit may or may not have happened.
            let failure = storeError(error, location: location)
            return batch.map { _ in .failure(failure) }
        }
        guard outcomes.allSatisfy({ $0.rows != nil }) else {
            if batch.count > 1 {
                return batch.map { write([$0], pool: pool, location: location, deadline: deadline)[0] }
            }
            let refusal = outcomes.first { if case .failed = $0 { true } else { false } }
            if case let .failed(state, message) = refusal {
                // 23503: the session row went away under the insert (deleted meanwhile).
                if state == "23503" { return [.failure(CommitError.sessionNotFound)] }
                return [.failure(PGError.server(sqlState: state, message: message))]
            }
            return [.failure(PGError.server(sqlState: "", message: "the commit was not applied"))]
        }
        var results = [Result<Void, any Error>](repeating: .success(()), count: batch.count)
        for (position, index) in order.enumerated() {
            guard let rows = outcomes[position + 1].rows, rows.count == 1 else {
                results[index] = .failure(PGError.server(sqlState: "", message: "the commit statement returned no row"))
                continue
            }
            let applied: Int?, head: Int?
            do {
                (applied, head) = (try rows.integer(0, 0), try rows.integer(0, 1))
            } catch {
                results[index] = .failure(error)  // the batch's other commits keep their own results
                continue
            }
            if applied == 1 { continue }
            let version = batch[index].version
            guard let head else {
                results[index] = .failure(CommitError.sessionNotFound)
                continue
            }
            // At version − 1 but not applied: another writer took this version meanwhile, or
            // the Idempotency-Key was used by an action already applied.
            results[index] = .failure(CommitError.versionConflict(stored: head == version - 1 ? version : head))
        }
        return results
    }

    /// One action's writes as one statement: its log entry (with the tree, handler and
    /// transition only at a snapshot, see `LogSnapshots`; with the user's state it was judged
    /// with when told to, or when the entry before is not in the log) and the session's head
    /// row. Nothing is written unless the session stands at
    /// version − 1 (its row, or its newest log entry), the Idempotency-Key is unused, and the
    /// user's state is at the revision the action was judged with (when given); the
    /// log's key `(session_id, version)` turns a concurrent writer of the same version into no
    /// insert. The user's state, the funnel, the exposure and the stored answer are written
    /// only with the log entry. Its one row: 1 when applied, else 0; and the head version seen
    /// (NULL when the session does not exist).
    ///
    /// The head is read `FOR KEY SHARE` (the lock the log's foreign key takes anyway, taken
    /// first): a commit locks its session before it updates the user's row, as an erasure
    /// (`eraseUser`) locks the sessions before it deletes that row, so the two never deadlock;
    /// behind an erasure the read finds no row and the commit is `sessionNotFound`.
    ///
    /// The statement holds only the parts this commit needs (most actions carry no key, change
    /// no user state and are in no experiment): one of 128 texts, each prepared once per connection.
    static func commitStatement(_ commit: ActionCommit) -> PGStatement {
        let action = commit.action
        var parts = CommitParts()
        var parameters: [PGValue] = [
            .text(commit.sessionId), .integer(commit.version), .text(action.type), .optional(action.source),
            .text(action.params), .boolean(action.interactive), .optional(action.handledBy), .optional(action.transition),
            .text(action.createdAt), .bytes(commit.tree), .text(commit.userId), .optional(action.clientAt),
            .optional(action.userState), .optional(commit.judgedUserState),
        ]
        if let (key, answer) = commit.idempotency {
            parts.insert(.key)
            parameters += [.text(key), .bytes(answer.requestHash), .integer(answer.status), answer.body.map(PGValue.bytes) ?? .null]
        }
        if let revision = commit.userRevision {
            parts.insert(.revision)
            parameters.append(.integer(revision))
        }
        if let patch = commit.userPatch {
            parts.insert(.patch)
            parameters.append(.text(patch))
        }
        if let feature = commit.reachedFeature {
            parts.insert(.feature)
            parameters.append(.text(feature))
        }
        if commit.completesOnboarding { parts.insert(.onboarded) }
        if let previous = commit.follows {
            parts.insert(.follows)
            parameters.append(.text(previous))
        }
        if let epoch = commit.leaseEpoch {
            parts.insert(.lease)
            parameters.append(.integer(epoch))
        }
        return PGStatement(commitSQL[Int(parts.rawValue)], parameters)
    }

    /// Which optional writes and checks a commit statement holds.
    struct CommitParts: OptionSet {
        let rawValue: UInt8
        static let key = CommitParts(rawValue: 1)
        static let revision = CommitParts(rawValue: 2)
        static let patch = CommitParts(rawValue: 4)
        static let feature = CommitParts(rawValue: 8)
        static let onboarded = CommitParts(rawValue: 16)
        static let follows = CommitParts(rawValue: 32)
        static let lease = CommitParts(rawValue: 64)
    }

    /// The version session $1 stands at: the newer of its row's and its newest log entry's; no
    /// row when the session does not exist.
    static let headSQL = """
        SELECT GREATEST(s.version, COALESCE((SELECT a.version FROM actions a WHERE a.session_id = s.id
            ORDER BY a.version DESC LIMIT 1), 0))
        FROM sessions s WHERE s.id = $1::text
        """

    /// The commit statement's text for each combination of parts, by raw value.
    static let commitSQL: [String] = (0..<128).map { commitSQL(CommitParts(rawValue: UInt8($0))) }

    /// $1…$14 are always the session, version, action fields, tree, user, client time, the
    /// user's state to store and the one the action was judged with (see `LogSnapshots`); the
    /// optional parts' parameters follow in the order key (4), revision, patch, feature, follows,
    /// lease.
    static func commitSQL(_ parts: CommitParts) -> String {
        var next = 15
        func parameter() -> String {
            defer { next += 1 }
            return "$\(next)"
        }
        var conditions = ""
        var writes = ""
        if parts.contains(.key) {
            let (key, hash, status, body) = (parameter(), parameter(), parameter(), parameter())
            conditions += """
                  AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.session_id = $1::text AND k.key = \(key)::text)

                """
            writes += """
                , remembered AS (
                    INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
                    SELECT $1::text, \(key)::text, \(hash)::bytea, \(status)::integer, $2::integer, \(body)::bytea, $9::text
                    FROM applied
                    ON CONFLICT (session_id, key) DO NOTHING
                )

                """
        }
        if parts.contains(.revision) {
            conditions += """
                  AND EXISTS (SELECT 1 FROM users u WHERE u.id = $11::text AND u.revision = \(parameter())::bigint)

                """
        }
        if parts.contains(.patch) {
            writes += """
                , patched AS (
                    UPDATE users SET updated_at = $9::text, revision = users.revision + 1, state = (
                        SELECT COALESCE(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
                        FROM jsonb_each(users.state || \(parameter())::jsonb) e WHERE e.value <> 'null'::jsonb)
                    WHERE users.id = $11::text AND EXISTS (SELECT 1 FROM applied)
                )

                """
        }
        if parts.contains(.feature) {
            writes += """
                , reached AS (
                    INSERT INTO session_features (session_id, feature)
                    SELECT $1::text, \(parameter())::text FROM applied
                    ON CONFLICT (session_id, feature) DO NOTHING
                )

                """
        }
        if parts.contains(.follows) {
            // The entry at version − 1 is the previous tap of the same batch (an earlier
            // statement of this transaction, or a transaction before it), not another writer's.
            conditions += """
                  AND EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.session_id = $1::text AND k.key = \(parameter())::text
                      AND k.version = $2::integer - 1)

                """
        }
        if parts.contains(.lease) {
            // The fence (migration 0014): the session's lease is still under the epoch this node
            // holds. FOR SHARE of the fence row, which only takeovers update (renewals update the
            // lease row): a takeover waits for this commit, and a commit that waited for a
            // takeover reads the new epoch and writes nothing.
            conditions += """
                  AND EXISTS (SELECT 1 FROM (SELECT f.epoch FROM session_lease_fences f WHERE f.session_id = $1::text FOR SHARE) held
                      WHERE held.epoch = \(parameter())::bigint)

                """
        }
        if parts.contains(.onboarded) {
            writes += """
                , onboarded AS (
                    UPDATE exposures SET onboarded = 1 WHERE session_id = $1::text AND EXISTS (SELECT 1 FROM applied)
                )

                """
        }
        return """
            WITH head (version) AS (
            \(headSQL) FOR KEY SHARE OF s
            ), applied AS (
                INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition,
                    created_at, tree, client_at, user_state)
                SELECT $1::text, $2::integer, $3::text, $4::text, $5::text, $6::boolean,
                    CASE WHEN $2::integer % \(LogSnapshots.interval) = 0 THEN $7::text END,
                    CASE WHEN $2::integer % \(LogSnapshots.interval) = 0 THEN $8::text END, $9::text,
                    CASE WHEN $2::integer % \(LogSnapshots.interval) = 0 THEN $10::bytea END, $12::text,
                    COALESCE($13::text, CASE WHEN NOT EXISTS (SELECT 1 FROM actions p WHERE p.session_id = $1::text
                        AND p.version = $2::integer - 1) THEN $14::text END)
                FROM head
                WHERE head.version = $2::integer - 1
            \(conditions)    ON CONFLICT (session_id, version) DO NOTHING
                RETURNING 1
            ), headed AS (
                INSERT INTO session_heads (session_id, version, tree, last_transition, handled_by, updated_at)
                SELECT $1::text, $2::integer, $10::bytea, $8::text, $7::text, $9::text FROM applied
                ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, tree = excluded.tree,
                    last_transition = excluded.last_transition, handled_by = excluded.handled_by, updated_at = excluded.updated_at
            )
            \(writes)SELECT (SELECT count(*) FROM applied), (SELECT version FROM head), $11::text
            """
    }
}

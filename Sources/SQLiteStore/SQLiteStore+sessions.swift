// Sessions, their action log and idempotent answers in SQLite.
import Foundation
import FlowStore
import GRDB
import GRDBSQLite

extension SQLiteStore {
    /// Inserts a new session, and its user when the user is new. `exposures` are the
    /// experiments it was placed in (variant by experiment key); for those sessions the features
    /// shown on top are recorded, starting with `firstFeature`.
    public func insert(_ session: SessionRecord, exposures: [(experiment: String, variant: String)],
                       exclusions: [(experiment: String, variant: String)], firstFeature: String?) throws {
        try writingDirectly { db in
            for exclusion in exclusions {
                try db.cachedStatement(sql: """
                    INSERT INTO experiment_exclusions (session_id, experiment, user_id, variant, created_at) VALUES (?, ?, ?, ?, ?)
                    """).execute(arguments: [session.id, exclusion.experiment, session.userId, exclusion.variant, session.createdAt])
            }
            for exposure in exposures {
                try db.cachedStatement(sql: """
                    INSERT INTO exposures (session_id, experiment, user_id, variant, created_at) VALUES (?, ?, ?, ?, ?)
                    """).execute(arguments: [session.id, exposure.experiment, session.userId, exposure.variant, session.createdAt])
            }
            if !exposures.isEmpty, let firstFeature {
                try Self.recordFeature(db, session: session.id, feature: firstFeature)
            }
            try Self.ensureUser(db, id: session.userId, at: session.createdAt)
            // Bound and stepped directly (`DirectStatement`): through GRDB's `execute`, the
            // fourteen arguments boxed and the blobs copied into `Data` cost a creation some
            // 30,000 instructions more.
            let statement = DirectStatement(try db.cachedStatement(sql: """
                INSERT INTO sessions (id, user_id, token_hash, version, tree, context, flags, experiments,
                    flow_versions, last_transition, handled_by, created_at, updated_at, client)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """), in: db)
            try statement.bind(session.id, at: 1)
            try statement.bind(session.userId, at: 2)
            try statement.bind(session.tokenHash, at: 3)
            try statement.bind(session.version, at: 4)
            try statement.bind(session.tree, at: 5)
            try statement.bind(session.context, at: 6)
            try statement.bind(session.flags, at: 7)
            try statement.bind(session.experiments, at: 8)
            try statement.bind(session.flowVersions, at: 9)
            try statement.bind(session.lastTransition, at: 10)
            try statement.bind(session.handledBy, at: 11)
            try statement.bind(session.createdAt, at: 12)
            try statement.bind(session.updatedAt, at: 13)
            try statement.bind(session.client, at: 14)
            try statement.run()
        }
    }

    /// The session with this id as it stands now, or nil: its row, with the version, tree, last
    /// transition, handler and update time of its head when the log is newer than the row (see
    /// `bringToHead`).
    public func session(id: String) throws -> SessionRecord? {
        let rebuilder = heads.rebuilder
        return try reading { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?")
            guard var record = try Row.fetchOne(statement, arguments: [id]).map(Self.sessionRecord) else { return nil }
            try Self.bringToHead(&record, db, rebuilder: rebuilder)
            return record
        }
    }

    /// The token's hash and the time of the newest version, from the row and the newest log
    /// entry: no tree is read or rebuilt. One statement, stepped directly outside a read
    /// transaction, as `user(id:)` is.
    public func sessionCredentials(id: String) throws -> SessionCredentials? {
        try readingOneStatement { db in
            let statement = DirectStatement(try db.cachedStatement(sql: """
                SELECT s.token_hash, COALESCE(CASE WHEN a.version > s.version THEN a.created_at END, s.updated_at)
                FROM sessions s \(Self.newestEntryJoin) WHERE s.id = ?
                """), in: db)
            try statement.bind(id, at: 1)
            return try statement.firstRow { row in
                SessionCredentials(tokenHash: DirectStatement.bytes(row, 0),
                                   lastActiveAt: try DirectStatement.text(row, 1, column: "updated_at"))
            }
        }
    }

    public func rebuildHeads(with rebuilder: any SessionHeadRebuilder) { heads.use(rebuilder) }

    /// With a rebuilder, only the commits that write the head row or a snapshot store the tree
    /// (see `write(_:in:keepsEveryHead:)`); without one, every commit writes the head.
    public func storesTree(atVersion version: Int) -> Bool {
        !heads.isGiven || LogSnapshots.keepsHead(version) || LogSnapshots.keepsTree(version)
    }

    /// Moves `record` (a session's row) to its head when the log is newer than the row: the
    /// head row (`session_heads`) when it stands at the log's newest version, else that entry's
    /// own tree when it carries one, else, with a `rebuilder`, the newest entries rebuilt from
    /// the head row (or the row) before them: a store with a rebuilder rewrites the head row
    /// only every `LogSnapshots.headInterval` versions. An empty tree (a damaged file, a head row
    /// missing, entries that do not rebuild) fails to decode and is reported as such, never
    /// replaced by an older one.
    static func bringToHead(_ record: inout SessionRecord, _ db: Database, rebuilder: (any SessionHeadRebuilder)?) throws {
        let newest = try db.cachedStatement(sql: newestEntrySQL("a.version, a.tree, a.transition, a.handled_by, a.created_at"))
        guard let entry = try Row.fetchOne(newest, arguments: [record.id]), let version: Int = try entry.decode(atIndex: 0),
              version > record.version else { return }
        // The row as read: where a rebuild starts when the head row is not newer.
        var start = record
        record.version = version
        let head = try db.cachedStatement(sql: """
            SELECT version, tree, last_transition, handled_by, updated_at FROM session_heads WHERE session_id = ?
            """)
        let headRow = try Row.fetchOne(head, arguments: [record.id])
        let headVersion: Int? = try headRow?.decode(atIndex: 0)
        if let headRow, headVersion == version {
            record.tree = [UInt8]((try headRow.decode(atIndex: 1) as Data?) ?? Data())
            record.lastTransition = try headRow.decode(atIndex: 2)
            record.handledBy = try headRow.decode(atIndex: 3)
            record.updatedAt = try headRow.decode(atIndex: 4)
            return
        }
        let entryTree: Data? = try entry.decode(atIndex: 1)
        record.updatedAt = try entry.decode(atIndex: 4)
        guard entryTree == nil, let rebuilder else {
            record.tree = [UInt8](entryTree ?? Data())
            record.lastTransition = try entry.decode(atIndex: 2)
            record.handledBy = try entry.decode(atIndex: 3)
            return
        }
        // The head row is behind the log (or missing): rebuild from it, or from the row.
        if let headRow, let headVersion, headVersion > start.version {
            start.version = headVersion
            start.tree = [UInt8]((try headRow.decode(atIndex: 1) as Data?) ?? Data())
        }
        let entries = try log(of: record.id, after: start.version, limit: version - start.version, in: db).map(\.action)
        guard entries.last?.version == version, let rebuilt = rebuilder.head(of: start, after: entries) else {
            record.tree = []
            return
        }
        record.tree = rebuilt.tree
        record.lastTransition = rebuilt.transition
        record.handledBy = rebuilt.handledBy
    }

    /// Queues `commit` for the writer thread's next transaction: concurrent commits share one
    /// (group commit), each in a savepoint of its own; `completion` gets the result, on that
    /// thread, once the transaction holding it is over. Keep it short.
    ///
    /// ```swift
    /// store.submit(commit) { result in
    ///     if case .success = result { answer.complete(response) }   // committed: acknowledge
    /// }
    /// ```
    public func submit(_ commit: ActionCommit, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        groupCommit.submit(commit, completion: completion)
    }

    /// Queues the successive commits of one session together, so that they share the writer
    /// thread's next transaction (see `GroupCommit.submit(_:completion:)`).
    public func submit(_ commits: [ActionCommit], completion: @escaping @Sendable ([Result<Void, any Error>]) -> Void) {
        groupCommit.submit(commits, completion: completion)
    }

    /// One transaction for the batch; each commit that writes more than one statement in a
    /// savepoint of its own, so that one action's failure does not undo another's (see
    /// `CommitSavepoint`: a commit that writes only its log entry needs none). The transaction
    /// and savepoint statements are prepared once: GRDB's `inTransaction` and `inSavepoint`
    /// prepare their SQL at every call, which cost a transaction some 25,000 instructions
    /// (callgrind; a batch of one at low load). They are stepped directly, as the savepoint's
    /// are: GRDB's `execute` added some 2,500 instructions to each of the two. So are the
    /// statements every action runs (`EntryStatements`), once for the batch; a batch whose
    /// statements cannot be prepared fails whole.
    static func write(_ batch: [ActionCommit], to pool: DatabasePool, versions: CommittedVersions,
                      keepsEveryHead: Bool) -> [Result<Void, any Error>] {
        var results: [Result<Void, any Error>] = []
        results.reserveCapacity(batch.count)
        do {
            try pool.writeWithoutTransaction { db in
                let begin = DirectStatement(try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION"), in: db)
                let end = DirectStatement(try db.cachedStatement(sql: "COMMIT TRANSACTION"), in: db)
                var savepoint = try CommitSavepoint(db)
                let statements = try EntryStatements(db, arena: versions.bindArena)
                // The statements point into the writer's arena of values until cleared.
                defer { statements.clearBindings() }
                try begin.run()
                var known = versions.begin(db)
                do {
                    // Each commit read in place, `batch[index]`: `for commit in batch` (or a
                    // `let` of the element) copied it, retaining its twenty-odd references.
                    for index in batch.indices {
                        do {
                            let head = known.head(of: batch[index].sessionId)
                            if head == nil { versions.databaseReads.add(1, ordering: .relaxed) }
                            let written = try write(batch[index], in: db, known: head, keepsEveryHead: keepsEveryHead, savepoint: &savepoint,
                                                    statements: statements)
                            try savepoint.release()
                            known.wrote(batch[index].sessionId, head: written)
                            results.append(.success(()))
                        } catch {
                            known.forget(batch[index].sessionId)
                            // SQLite rolled the whole transaction back by itself (a full disk,
                            // an I/O error): the batch fails with this error, not with the
                            // savepoint's that is gone with it. So does a key that could not be
                            // taken back (see `takeBack`).
                            guard db.isInsideTransaction, !(error is KeyNotTakenBack) else { throw error }
                            try savepoint.rollBack()
                            results.append(.failure(Self.redacted(error, location: pool.path)))
                        }
                    }
                    try end.run()
                } catch {
                    // Nothing of the batch is committed; GRDB's rollback ends the transaction
                    // unless SQLite already did (a full disk, an I/O error).
                    try? db.rollback()
                    throw error
                }
                versions.committed(known, db)
            }
        } catch {
            // The transaction itself failed: nothing in it is committed.
            versions.forget()
            return batch.map { _ in .failure(error) }
        }
        return results
    }

    /// Joins a session's row (`s`) to its newest log entry (`a`, NULLs without one) through
    /// its head (`log_heads`, migration 20). The entry must be the session's: a head naming an
    /// entry deleted since, or a rowid SQLite gave again to another session's, finds none.
    static let newestEntryJoin = """
        LEFT JOIN log_heads h ON h.session_id = s.id LEFT JOIN actions a ON a.rowid = h.newest AND a.session_id = s.id
        """

    /// `columns` of a session's (`?`) newest log entry (`a`), through its head as
    /// `newestEntryJoin` finds it; no row without one.
    static func newestEntrySQL(_ columns: String) -> String {
        "SELECT \(columns) FROM log_heads h JOIN actions a ON a.rowid = h.newest AND a.session_id = h.session_id WHERE h.session_id = ?"
    }

    /// The version a session stands at: the newer of its row's and its newest log entry's; no
    /// row when the session does not exist.
    static let headSQL = """
        SELECT max(s.version, coalesce(a.version, 0)) FROM sessions s \(newestEntryJoin) WHERE s.id = ?
        """

    /// The version of a session's row, the version and rowid of its newest log entry (NULLs
    /// without one), and the rowid its head names as its newest key (NULL without one); no row
    /// when the session does not exist.
    static let rowAndLogSQL = """
        SELECT s.version, a.version, a.rowid, h.newest_key FROM sessions s \(newestEntryJoin) WHERE s.id = ?
        """

    /// The version a session stands at in the database, its log's newest entry when that is at
    /// this version (not its row, which is newer where the log was compacted or the session is
    /// new), and its newest key. Throws `CommitError.sessionNotFound` when it does not exist.
    static func storedVersion(of sessionId: String, in db: Database) throws -> (version: Int, logged: LogHead?, key: Int64?) {
        let head = DirectStatement(try db.cachedStatement(sql: rowAndLogSQL), in: db)
        try head.bind(sessionId, at: 1)
        guard let (row, logged, entry, key) = try head.firstRow({
            (DirectStatement.optionalInt($0, 0) ?? 0, DirectStatement.optionalInt($0, 1), DirectStatement.optionalInt($0, 2),
             DirectStatement.optionalInt($0, 3).map(Int64.init))
        }) else { throw CommitError.sessionNotFound }
        let stored = max(row, logged ?? 0)
        guard logged == stored, let entry else { return (stored, nil, key) }
        return (stored, LogHead(version: stored, entry: Int64(entry), key: key), key)
    }

    /// One action's writes: its log entry (with the tree only at a snapshot, see
    /// `LogSnapshots`) and, at every version or (with a rebuilder, `keepsEveryHead` false) every
    /// `LogSnapshots.headInterval`-th, the session's head row, rewritten in place. The session
    /// row is not rewritten, whatever the size of its context and flags; the database grows by
    /// the entry.
    ///
    /// `known` is the session's newest log entry as the writer's batches left it
    /// (`CommittedVersions`: an entry a batch wrote), nil to read it from the database. The
    /// entry names it as the one before (`previous`), and the session's head (`log_heads`)
    /// names the entry, which is returned with the session's newest key. A key names the
    /// session's key before it the same way, and the head names the key (migration 21).
    ///
    /// Everything before the first write only reads. A commit that writes more than its log
    /// entry and its key opens `savepoint` before its first write, so that a later write's
    /// failure takes the earlier ones back; one that writes its entry alone needs none, as SQLite
    /// undoes a failed statement whole and leaves the transaction open. A keyed commit that
    /// writes nothing else (every tap of the clients, nearly always) needs none either: its key
    /// goes in first, where a used key fails alone, and when its entry then fails the key's row
    /// is deleted again (a savepoint, opened and released, cost a keyed action some 4,500
    /// instructions on the writer thread: callgrind, a batch of one). The head's update comes
    /// after the entry; when it fails, the entry and the key are deleted the same way.
    static func write(_ commit: ActionCommit, in db: Database, known: LogHead?, keepsEveryHead: Bool,
                      savepoint: inout CommitSavepoint, statements: EntryStatements) throws -> LogHead {
        let (stored, logged, newestKey) = try known.map { ($0.version, $0, $0.key) } ?? storedVersion(of: commit.sessionId, in: db)
        guard stored == commit.version - 1 else { throw CommitError.versionConflict(stored: stored) }
        if let previous = commit.follows {
            // The entry below is the previous tap of the same batch, not another writer's.
            let ours = DirectStatement(
                try db.cachedStatement(sql: "SELECT 1 FROM idempotency_keys WHERE session_id = ? AND key = ? AND version = ?"), in: db)
            try ours.bind(commit.sessionId, at: 1)
            try ours.bind(previous, at: 2)
            try ours.bind(stored, at: 3)
            if try ours.firstRow({ _ in true }) == nil {
                throw CommitError.versionConflict(stored: stored)
            }
        }
        let insert = statements.insert
        let moveHead = statements.moveHead
        let snapshot = LogSnapshots.keepsTree(commit.version)
        let writesHead = keepsEveryHead || LogSnapshots.keepsHead(commit.version)
        // A commit the server made without its tree (`storesTree(atVersion:)` said no) must not
        // write an empty one: nothing is written, and the action fails as a storage error.
        if (snapshot || writesHead) && commit.tree.isEmpty { throw CommitError.treeMissing }
        // A rebuild of this entry starts from the row when the entry before is not in the log.
        let userState = commit.action.userState ?? (logged == nil ? commit.judgedUserState : nil)
        // Any write below besides the log entry's insert and its key's.
        let writesMore = writesHead || commit.userPatch != nil || commit.reachedFeature != nil || commit.completesOnboarding
        if writesMore { try savepoint.open() }
        // Bound before anything is written: a bind that fails leaves nothing to take back. The
        // values of the commit before are no longer read: each statement below is bound whole
        // again before it runs.
        let arena = statements.arena
        arena.reset()
        try bindEntry(insert, commit, snapshot: snapshot, userState: userState, previous: logged?.entry, arena: arena)
        try moveHead.bind(commit.sessionId, at: 1, keptIn: arena)
        // The key is written before the entry, so that the head can name both; without a
        // savepoint it is taken back if the entry or the head fails.
        let keyRow = try commit.idempotency.map { key, answer in
            try remember(key, answer, of: commit, previous: newestKey, with: statements.remember, arena: arena, in: db, stored: stored)
        }
        try moveHead.bind(keyRow ?? newestKey, at: 3)
        let entry: Int64
        do {
            entry = try append(insert, movingHead: moveHead, takesBack: !writesMore, in: db)
        } catch {
            if !writesMore, let keyRow { try takeBack(keyRow, nil, in: db) }
            throw error
        }
        if writesHead {
            let heads = DirectStatement(try db.cachedStatement(sql: """
                INSERT INTO session_heads (session_id, version, tree, last_transition, handled_by, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, tree = excluded.tree,
                    last_transition = excluded.last_transition, handled_by = excluded.handled_by, updated_at = excluded.updated_at
                """), in: db)
            try heads.bind(commit.sessionId, at: 1)
            try heads.bind(commit.version, at: 2)
            try heads.bind(commit.tree, at: 3)
            try heads.bind(commit.action.transition, at: 4)
            try heads.bind(commit.action.handledBy, at: 5)
            try heads.bind(commit.action.createdAt, at: 6)
            try heads.run()
        }
        if let patch = commit.userPatch,
           let state = try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM users WHERE id = ?"), arguments: [commit.userId]) {
            // Merged here, not with json_patch, which merges nested objects (`UserStateMerge`).
            try db.cachedStatement(sql: "UPDATE users SET state = ?, updated_at = ? WHERE id = ?")
                .execute(arguments: [try UserStateMerge.merging(patch, into: state), commit.action.createdAt, commit.userId])
        }
        if let feature = commit.reachedFeature {
            try recordFeature(db, session: commit.sessionId, feature: feature)
        }
        if commit.completesOnboarding {
            try db.cachedStatement(sql: "UPDATE exposures SET onboarded = 1 WHERE session_id = ?")
                .execute(arguments: [commit.sessionId])
        }
        return LogHead(version: commit.version, entry: entry, key: keyRow ?? newestKey)
    }

    /// Inserts the entry and moves the session's head to it; returns the entry's rowid. When
    /// the head fails and no savepoint is open (`takesBack`), the entry is deleted again.
    private static func append(_ insert: DirectStatement, movingHead moveHead: DirectStatement, takesBack: Bool,
                               in db: Database) throws -> Int64 {
        let entry = try insert.insert()
        do {
            try moveHead.bind(entry, at: 2)
            try moveHead.run()
        } catch {
            if takesBack { try takeBack(nil, entry, in: db) }
            throw error
        }
        return entry
    }

    /// Binds the log entry's insert, its texts and blobs kept in `arena`.
    private static func bindEntry(_ insert: DirectStatement, _ commit: ActionCommit, snapshot: Bool, userState: String?,
                                  previous: Int64?, arena: BindArena) throws {
        try insert.bind(commit.sessionId, at: 1, keptIn: arena)
        try insert.bind(commit.version, at: 2)
        try insert.bind(commit.action.type, at: 3, keptIn: arena)
        try insert.bind(commit.action.source, at: 4, keptIn: arena)
        try insert.bind(commit.action.params, at: 5, keptIn: arena)
        try insert.bind(commit.action.interactive, at: 6)
        try insert.bind(snapshot ? commit.action.handledBy : nil, at: 7, keptIn: arena)
        try insert.bind(snapshot ? commit.action.transition : nil, at: 8, keptIn: arena)
        try insert.bind(commit.action.createdAt, at: 9, keptIn: arena)
        try insert.bind(snapshot ? commit.tree : nil, at: 10, keptIn: arena)
        try insert.bind(commit.action.clientAt, at: 11, keptIn: arena)
        try insert.bind(userState, at: 12, keptIn: arena)
        try insert.bind(previous, at: 13)
    }

    /// Stores a keyed action's answer, chained to the session's key before it (`previous`), and
    /// returns its row. A key already used was applied by another action: this one must not
    /// apply too (the server replays that answer instead, once it reloads). The unique index on
    /// (key, session_id) is the check, and the commit fails as a version conflict, with nothing
    /// written yet.
    private static func remember(_ key: String, _ answer: IdempotentAnswer, of commit: ActionCommit, previous: Int64?,
                                 with remember: DirectStatement, arena: BindArena, in db: Database, stored: Int) throws -> Int64 {
        try remember.bind(commit.sessionId, at: 1, keptIn: arena)
        try remember.bind(key, at: 2, keptIn: arena)
        try remember.bind(answer.requestHash, at: 3, keptIn: arena)
        try remember.bind(answer.status, at: 4)
        try remember.bind(answer.version, at: 5)
        try remember.bind(answer.body, at: 6, keptIn: arena)
        try remember.bind(commit.action.createdAt, at: 7, keptIn: arena)
        try remember.bind(previous, at: 8)
        do {
            return try remember.insert()
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw CommitError.versionConflict(stored: stored)
        }
    }

    /// Deletes the key row and the log entry a commit wrote before its entry or its head
    /// failed (without a savepoint). Nothing to do when SQLite rolled the transaction back by
    /// itself; when a delete fails, the batch fails whole (`KeyNotTakenBack`, which the batch
    /// rethrows whatever the transaction's state) rather than keep a key whose action was not
    /// logged, or an entry its head does not name.
    private static func takeBack(_ keyRow: Int64?, _ entry: Int64?, in db: Database) throws {
        guard db.isInsideTransaction else { return }
        do {
            for (table, row) in [("idempotency_keys", keyRow), ("actions", entry)] {
                guard let row else { continue }
                let delete = DirectStatement(try db.cachedStatement(sql: "DELETE FROM \(table) WHERE rowid = ?"), in: db)
                try delete.bind(row, at: 1)
                try delete.run()
            }
        } catch {
            throw KeyNotTakenBack(cause: error)
        }
    }

    /// A commit's key or entry could not be deleted after its entry or head failed: its batch's
    /// transaction is rolled back, every commit of it failing with this error.
    struct KeyNotTakenBack: Error, CustomStringConvertible {
        let cause: any Error
        var description: String { "the key or entry of an action that failed to log could not be deleted: \(cause)" }
    }

    /// Up to `limit` log entries with a version above `after`, oldest first.
    public func actions(sessionId: String, after: Int, limit: Int) throws -> [ActionRecord] {
        try reading { db in try Self.log(of: sessionId, after: after, limit: limit, in: db).map(\.action) }
    }

    /// Up to `limit` of a session's log entries after a version, oldest first: its chain
    /// (migration 20) walked back from the nearest snapshot at or past the last one wanted
    /// (`walkStartSQL`), or from its head, to the first one wanted, one entry at a time
    /// (`walkStepSQL`). A step must stay in the session and go down in version, so the walk
    /// ends at an entry deleted since, or at a `previous` that SQLite's numbering gave to
    /// another row. Stepped directly: a recursive query doing the same walk cost a replay of
    /// 100,000 sessions 10% more than the index it replaces (its queue, and the query's two
    /// look-ups of its start); each step here is one look-up by rowid.
    static func log(of sessionId: String, after: Int, limit: Int, in db: Database) throws -> [(action: ActionRecord, tree: [UInt8]?)] {
        guard limit > 0 else { return [] }
        var (entries, fromSnapshot) = try walk(sessionId, after: after, limit: limit, in: db)
        // The log begins above `after + 1` (compaction deleted the entries below a snapshot):
        // a walk from the snapshot past `after + limit` stopped at the log's first entry with
        // fewer than it wants. The entries wanted are the first `limit` from there.
        if fromSnapshot, let first = entries.last?.action.version, first > after + 1 {
            entries = try walk(sessionId, after: first - 1, limit: limit, in: db).entries
        }
        entries.reverse()
        if entries.count > limit { entries.removeLast(entries.count - limit) }
        return entries
    }

    /// One walk of `log(of:after:limit:in:)`: the entries newest first, and whether it started
    /// at a snapshot (else at the head, the log's newest entry).
    private static func walk(_ sessionId: String, after: Int, limit: Int, in db: Database) throws
        -> (entries: [(action: ActionRecord, tree: [UInt8]?)], fromSnapshot: Bool) {
        let start = DirectStatement(try db.cachedStatement(sql: walkStartSQL), in: db)
        try start.bind(sessionId, at: 1)
        let (last, overflow) = after.addingReportingOverflow(limit)
        try start.bind(overflow ? Int.max : last, at: 2)
        let (snapshot, head) = try start.firstRow { (DirectStatement.optionalInt($0, 0), DirectStatement.optionalInt($0, 1)) } ?? (nil, nil)
        let step = DirectStatement(try db.cachedStatement(sql: walkStepSQL), in: db)
        try step.bind(sessionId, at: 2)
        try step.bind(after, at: 4)
        var entries: [(action: ActionRecord, tree: [UInt8]?)] = []
        var below = Int.max
        var next = snapshot ?? head
        while let entry = next {
            try step.bind(entry, at: 1)
            try step.bind(below, at: 3)
            guard let (action, tree, previous) = try step.firstRow(walkedEntry) else { break }
            entries.append((action, tree))
            below = action.version
            next = previous
        }
        return (entries, snapshot != nil)
    }

    /// Where a walk of a session's (`?1`) log to a version (`?2`) can start: the nearest
    /// snapshot at or past it (`actions_snapshots`), and the session's newest entry
    /// (`log_heads`); each NULL without one.
    static let walkStartSQL = """
        SELECT (SELECT rowid FROM actions WHERE session_id = ?1 AND version >= ?2 AND tree IS NOT NULL ORDER BY version LIMIT 1),
               (SELECT newest FROM log_heads WHERE session_id = ?1)
        """

    /// One step of a walk: the entry `?1` if it is the session's (`?2`) and its version is
    /// below the one before (`?3`) and above the first wanted (`?4`), as `walkedEntry` reads it.
    static let walkStepSQL = """
        SELECT version, type, source, params, interactive, handled_by, transition, created_at, client_at, user_state, tree, previous
        FROM actions WHERE rowid = ?1 AND session_id = ?2 AND version < ?3 AND version > ?4
        """

    /// A row of `walkStepSQL`: the entry, its tree (at a snapshot), and the entry before it.
    static func walkedEntry(_ row: SQLiteStatement) throws -> (ActionRecord, [UInt8]?, Int?) {
        let action = ActionRecord(
            version: try DirectStatement.requiredInt(row, 0, column: "version"),
            type: try DirectStatement.text(row, 1, column: "type"),
            source: try DirectStatement.optionalText(row, 2, column: "source"),
            params: try DirectStatement.text(row, 3, column: "params"),
            interactive: try DirectStatement.bool(row, 4, column: "interactive"),
            handledBy: try DirectStatement.optionalText(row, 5, column: "handled_by"),
            transition: try DirectStatement.optionalText(row, 6, column: "transition"),
            createdAt: try DirectStatement.text(row, 7, column: "created_at"),
            clientAt: try DirectStatement.optionalText(row, 8, column: "client_at"),
            userState: try DirectStatement.optionalText(row, 9, column: "user_state"))
        return (action, DirectStatement.optionalBytes(row, 10), DirectStatement.optionalInt(row, 11))
    }

    /// Deletes a session's (`?1`) log entries below a version (`?2`; `Int64.max` for all), along
    /// its chain as `log(of:after:limit:in:)` walks it, from the nearest snapshot at or above the version, or
    /// from the head. The store deletes entries only below a version (compaction) or all of
    /// them, so a chain is never broken in its middle: a walk from the head finds every entry.
    static let cutLogSQL = """
        WITH RECURSIVE chain(entry, version, previous) AS (
            SELECT rowid, version, previous FROM actions
            WHERE rowid = coalesce((SELECT rowid FROM actions WHERE session_id = ?1 AND version >= ?2 AND tree IS NOT NULL
                                    ORDER BY version LIMIT 1),
                                   (SELECT newest FROM log_heads WHERE session_id = ?1))
              AND session_id = ?1
            UNION ALL
            SELECT a.rowid, a.version, a.previous FROM chain c JOIN actions a ON a.rowid = c.previous
            WHERE a.session_id = ?1 AND a.version < c.version
        )
        DELETE FROM actions WHERE rowid IN (SELECT entry FROM chain WHERE version < ?2)
        """

    /// Deletes a session's log entries below `version` (all of them by default) and, when none
    /// is left and it names no key still stored, its head; returns how many entries were
    /// deleted. Every deletion of entries goes through here (the log has no foreign key to
    /// cascade from `sessions`: migration 20). A head kept for its keys names an entry that is
    /// gone, which reads as none (`newestEntryJoin`).
    @discardableResult
    static func cutLog(of sessionId: String, below version: Int64 = .max, in db: Database) throws -> Int {
        try db.cachedStatement(sql: cutLogSQL).execute(arguments: [sessionId, version])
        let removed = db.changesCount
        try db.cachedStatement(sql: """
            DELETE FROM log_heads WHERE session_id = ?1
              AND NOT EXISTS (SELECT 1 FROM actions a WHERE a.rowid = log_heads.newest AND a.session_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.id = log_heads.newest_key AND k.session_id = ?1)
            """).execute(arguments: [sessionId])
        return removed
    }

    /// The entries up to `after + limit` from the nearest tree at or below `after`: the newest
    /// entry with one (found through `actions_snapshots`, at most `LogSnapshots.interval`
    /// entries back), else the session's row.
    public func actionLog(sessionId: String, after: Int, limit: Int) throws -> ActionLogSlice? {
        try reading { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT version, tree FROM sessions WHERE id = ?"),
                                             arguments: [sessionId]) else { return nil }
            var start: (version: Int, tree: [UInt8]) = (try row.decode(atIndex: 0), [UInt8]((try row.decode(atIndex: 1) as Data?) ?? Data()))
            let snapshot = try db.cachedStatement(sql: """
                SELECT version, tree FROM actions WHERE session_id = ? AND version <= ? AND version > ? AND tree IS NOT NULL
                ORDER BY version DESC LIMIT 1
                """)
            if let entry = try Row.fetchOne(snapshot, arguments: [sessionId, after, start.version]) {
                start = (try entry.decode(atIndex: 0), [UInt8]((try entry.decode(atIndex: 1) as Data?) ?? Data()))
            }
            let entries = try Self.log(of: sessionId, after: start.version, limit: max(0, after - start.version) + limit, in: db)
            return ActionLogSlice(startVersion: start.version, startTree: start.tree, entries: entries)
        }
    }

    /// The answer stored under `key` for this session, or nil. Every keyed action asks before
    /// it is judged, so it is one statement stepped directly, outside a read transaction.
    public func idempotentAnswer(sessionId: String, key: String) throws -> IdempotentAnswer? {
        let location = path
        return try readingOneStatement { db in
            let statement = DirectStatement(try db.cachedStatement(sql: """
                SELECT request_hash, status, version, body FROM idempotency_keys WHERE session_id = ? AND key = ?
                """), in: db)
            try statement.bind(sessionId, at: 1)
            try statement.bind(key, at: 2)
            let row = try statement.firstRow { row in
                (requestHash: DirectStatement.bytes(row, 0), status: DirectStatement.integer(row, 1),
                 version: DirectStatement.integer(row, 2), body: DirectStatement.optionalBytes(row, 3))
            }
            guard let row else { return nil }
            guard let status = row.status, let version = row.version else {
                throw StoreError.undecodableRow(location: location, detail: "a row of idempotency_keys lacks its status or version")
            }
            return IdempotentAnswer(requestHash: row.requestHash, status: status, version: version, body: row.body)
        }
    }

    /// The session's stored keys, at most `limit` (nil when there are more): its chain walked
    /// from its newest key, reading the key alone (`usedKeyStepSQL`).
    public func usedKeys(sessionId: String, limit: Int) throws -> [String]? {
        let keys = try reading { db in
            try Self.walkKeys(of: sessionId, limit: limit + 1, step: Self.usedKeyStepSQL, in: db) { row in
                try DirectStatement.text(row, 0, column: "key")
            }
        }
        return keys.count > limit ? nil : keys
    }

    /// Up to `limit` of a session's stored keys, newest first, as an export lists them.
    static func keys(of sessionId: String, limit: Int, in db: Database) throws -> [ExportedIdempotencyKey] {
        try walkKeys(of: sessionId, limit: limit, step: keyStepSQL, in: db) { row in
            ExportedIdempotencyKey(key: try DirectStatement.text(row, 0, column: "key"),
                                   status: try DirectStatement.requiredInt(row, 1, column: "status"),
                                   version: try DirectStatement.requiredInt(row, 2, column: "version"),
                                   createdAt: try DirectStatement.text(row, 3, column: "created_at"))
        }
    }

    /// Up to `limit` of a session's stored keys, newest first, each as `decode` reads a row of
    /// `step` (whose last column is `previous`): its chain (migration 21) walked from the key its
    /// head names, one look-up by rowid a step. A step must stay in the session and go down in
    /// rowid, so the walk ends at a key retention deleted (it deletes the oldest first: a chain
    /// is only ever cut below), or at a `previous` SQLite numbered again. Reloading a session
    /// walks up to `UsedKeys.loadedLimit` + 1 keys, about 0.3 µs each: a session with hundreds of
    /// keys reads more than the range of an index led by the session did (BENCHMARKS.md).
    private static func walkKeys<Key>(of sessionId: String, limit: Int, step sql: String, in db: Database,
                                      decode: (SQLiteStatement) throws -> Key) throws -> [Key] {
        guard limit > 0 else { return [] }
        let start = DirectStatement(try db.cachedStatement(sql: "SELECT newest_key FROM log_heads WHERE session_id = ?"), in: db)
        try start.bind(sessionId, at: 1)
        let step = DirectStatement(try db.cachedStatement(sql: sql), in: db)
        try step.bind(sessionId, at: 2)
        var keys: [Key] = []
        var below = Int64.max
        var next = try start.firstRow { DirectStatement.optionalInt($0, 0) }.flatMap { $0 }.map(Int64.init)
        while let row = next, keys.count < limit {
            try step.bind(row, at: 1)
            try step.bind(below, at: 3)
            guard let (key, previous) = try step.firstRow({ row in
                (try decode(row), DirectStatement.optionalInt(row, sqlite3_column_count(row) - 1).map(Int64.init))
            }) else { break }
            keys.append(key)
            below = row
            next = previous
        }
        return keys
    }

    /// One step of a walk of keys: the key `?1` if it is the session's (`?2`) and its rowid is
    /// below the one before (`?3`), with what an export lists.
    static let keyStepSQL = """
        SELECT key, status, version, created_at, previous FROM idempotency_keys WHERE id = ?1 AND session_id = ?2 AND id < ?3
        """

    /// `keyStepSQL` reading the key alone, for a reloaded session's filter.
    static let usedKeyStepSQL = """
        SELECT key, previous FROM idempotency_keys WHERE id = ?1 AND session_id = ?2 AND id < ?3
        """

    /// Deletes a session's (`?1`) keys along their chain, as `keys(of:limit:in:)` walks it.
    static let cutKeysSQL = """
        WITH RECURSIVE chain(row, previous) AS (
            SELECT id, previous FROM idempotency_keys
            WHERE id = (SELECT newest_key FROM log_heads WHERE session_id = ?1) AND session_id = ?1
            UNION ALL
            SELECT k.id, k.previous FROM chain c JOIN idempotency_keys k ON k.id = c.previous
            WHERE k.session_id = ?1 AND k.id < c.row
        )
        DELETE FROM idempotency_keys WHERE id IN (SELECT row FROM chain)
        """

    /// Deletes a session's keys and log (before its row, whose deletion takes its head along)
    /// and returns how many of each were deleted. The key table and the log have no foreign key
    /// to cascade from `sessions` (migrations 20 and 21): whatever deletes a session calls this.
    @discardableResult
    static func cutSession(_ sessionId: String, in db: Database) throws -> (keys: Int, entries: Int) {
        try db.cachedStatement(sql: cutKeysSQL).execute(arguments: [sessionId])
        let keys = db.changesCount  // first: the head that names the newest key goes with the log
        return (keys, try cutLog(of: sessionId, in: db))
    }

    /// The answers stored under any of `keys` for this session, in one read transaction.
    public func idempotentAnswers(sessionId: String, keys: [String]) throws -> [String: IdempotentAnswer] {
        guard !keys.isEmpty else { return [:] }
        return try reading { db in
            let statement = try db.cachedStatement(sql: """
                SELECT request_hash, status, version, body FROM idempotency_keys WHERE session_id = ? AND key = ?
                """)
            var answers: [String: IdempotentAnswer] = [:]
            for key in keys {
                if let row = try Row.fetchOne(statement, arguments: [sessionId, key]) {
                    answers[key] = IdempotentAnswer(requestHash: [UInt8]((try row.decode(atIndex: 0) as Data?) ?? Data()), status: try row.decode(atIndex: 1), version: try row.decode(atIndex: 2),
                                                    body: (try row.decode(atIndex: 3) as Data?).map { [UInt8]($0) })
                }
            }
            return answers
        }
    }

    /// Deletes the session, its log and its idempotent answers (those its chains reach: a row
    /// written into the file without its link stays, unread, until retention or an erasure);
    /// false when there was none.
    @discardableResult
    public func deleteSession(id: String) throws -> Bool {
        try writing { db in
            try Self.cutSession(id, in: db)
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE id = ?").execute(arguments: [id])
            let deleted = db.changesCount > 0
            try lowerCompactionCursor(db)
            return deleted
        }
    }

    /// One write transaction on the writer connection, as the group commit writes: a commit of
    /// the session runs wholly before it (its entry is counted and deleted with the rest) or
    /// wholly after it (no session: `sessionNotFound`, nothing written). The rows keyed by the
    /// session are deleted before it, so that each is counted (the cascade would find none).
    public func endSession(id: String, audit: AuditStamp) throws -> SessionEnding? {
        try writing { db in
            guard let userId = try String.fetchOne(db, sql: "SELECT user_id FROM sessions WHERE id = ?", arguments: [id]) else {
                return nil
            }
            let version = try Int.fetchOne(db.cachedStatement(sql: Self.headSQL), arguments: [id]) ?? 0
            var ended = SessionEnding(sessionId: id, userId: userId, version: version)
            (ended.idempotencyKeys, ended.actions) = try Self.cutSession(id, in: db)
            try db.execute(sql: "DELETE FROM stream_tickets WHERE session_id = ?", arguments: [id])
            ended.streamTickets = db.changesCount
            try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [id])
            try lowerCompactionCursor(db)
            try Self.appendAudit(db, at: Timestamp.string(), action: AuditAction.sessionEnd, subject: id, old: version, new: nil,
                                 AuditStamp(credential: audit.credential, detail: ended.countsJSON))
            return ended
        }
    }

    /// How many sessions are stored.
    public func sessionCount() throws -> Int {
        try reading { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions") ?? 0 }
    }

    public func headVersion(sessionId: String) throws -> Int? {
        try reading { db in
            try Int.fetchOne(db.cachedStatement(sql: Self.headSQL), arguments: [sessionId])
        }
    }

    public func headVersions(sessionIds: [String]) throws -> [String: Int] {
        guard !sessionIds.isEmpty else { return [:] }
        return try reading { db in
            var heads: [String: Int] = [:]
            let statement = try db.cachedStatement(sql: Self.headSQL)
            for id in sessionIds {
                if let head = try Int.fetchOne(statement, arguments: [id]) { heads[id] = head }
            }
            return heads
        }
    }

    public func insertStreamTicket(hash: [UInt8], sessionId: String, expiresAt: Int, endsAt: Int, now: Int) throws {
        try writing { db in
            try db.cachedStatement(sql: "DELETE FROM stream_tickets WHERE expires_at < ? OR ends_at < ?").execute(arguments: [now, now])
            try db.cachedStatement(sql: "INSERT INTO stream_tickets (ticket_hash, session_id, expires_at, ends_at) VALUES (?, ?, ?, ?)")
                .execute(arguments: [Data(hash), sessionId, expiresAt, endsAt])
        }
    }

    public func takeStreamTicket(hash: [UInt8], sessionId: String, now: Int, holdUntil: Int) throws -> StreamTicketHold? {
        try writing { db in
            let row = try Row.fetchOne(
                db.cachedStatement(sql: """
                    UPDATE stream_tickets SET generation = generation + 1, expires_at = ?
                    WHERE ticket_hash = ? AND session_id = ? AND expires_at >= ? AND ends_at >= ?
                    RETURNING generation, ends_at
                    """),
                arguments: [holdUntil, Data(hash), sessionId, now, now])
            return try row.map { try StreamTicketHold(hash: hash, generation: $0.decode(forColumn: "generation"), endsAt: $0.decode(forColumn: "ends_at")) }
        }
    }

    public func renewStreamTickets(_ holds: [StreamTicketHold], until: Int) throws -> [StreamTicketHold] {
        guard !holds.isEmpty else { return [] }
        return try writing { db in
            let statement = try db.cachedStatement(sql: "UPDATE stream_tickets SET expires_at = ? WHERE ticket_hash = ? AND generation = ?")
            var lost: [StreamTicketHold] = []
            for hold in holds {
                try statement.execute(arguments: [until, Data(hold.hash), hold.generation])
                if db.changesCount == 0 { lost.append(hold) }
            }
            return lost
        }
    }

    static func recordFeature(_ db: Database, session: String, feature: String) throws {
        try db.cachedStatement(sql: "INSERT INTO session_features (session_id, feature) VALUES (?, ?) ON CONFLICT DO NOTHING")
            .execute(arguments: [session, feature])
    }

    /// The columns `sessionRecord` reads, in its order: selected by name, read by index (a
    /// column looked up by name lowercases its name on every row, a twentieth of a replay's CPU).
    static let sessionColumns = """
        id, user_id, token_hash, version, tree, context, flags, experiments, flow_versions, last_transition, handled_by,
        created_at, updated_at, client
        """

    /// A session's row, selected as `SELECT \(sessionColumns) FROM sessions`.
    static func sessionRecord(_ row: Row) throws -> SessionRecord {
        try SessionRecord(
            id: row.decode(atIndex: 0), userId: row.decode(atIndex: 1),
            tokenHash: [UInt8]((row.decode(atIndex: 2) as Data?) ?? Data()),
            version: row.decode(atIndex: 3), tree: [UInt8]((row.decode(atIndex: 4) as Data?) ?? Data()),
            context: row.decode(atIndex: 5), flags: row.decode(atIndex: 6), experiments: row.decode(atIndex: 7),
            flowVersions: row.decode(atIndex: 8), lastTransition: row.decode(atIndex: 9),
            handledBy: row.decode(atIndex: 10), createdAt: row.decode(atIndex: 11), updatedAt: row.decode(atIndex: 12),
            client: row.decode(atIndex: 13))
    }

    /// One read transaction per batch: a range scan of `sessions_by_created_at` from the
    /// cursor down, then each session's log along its chain (`log(of:after:limit:in:)`). The cursor is a
    /// range on `created_at` plus a filter, not `created_at < ? OR (created_at = ? AND id < ?)`:
    /// SQLite 3.40 plans that OR as two index searches and a sort of every row below the cursor,
    /// which made each batch read the whole window (100,000 sessions replayed in minutes).
    public func recordedSessions(createdSince since: String, before cursor: RecordedSessionCursor?, limit: Int,
                                 maxActions: Int) throws -> [RecordedSessionRecord] {
        try reading { db in
            let rows: [Row]
            if let cursor {
                rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT \(Self.sessionColumns) FROM sessions WHERE created_at >= ? AND created_at <= ? AND (created_at < ? OR id < ?)
                    ORDER BY created_at DESC, id DESC LIMIT ?
                    """), arguments: [since, cursor.createdAt, cursor.createdAt, cursor.id, limit])
            } else {
                rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT \(Self.sessionColumns) FROM sessions WHERE created_at >= ? ORDER BY created_at DESC, id DESC LIMIT ?
                    """), arguments: [since, limit])
            }
            return try rows.map { row in
                let session = try Self.sessionRecord(row)
                let actions = try Self.log(of: session.id, after: session.version, limit: maxActions, in: db)
                return RecordedSessionRecord(session: session, actions: actions)
            }
        }
    }

    /// One range scan of `sessions_by_created_at`, grouped by the client text.
    public func clientCounts(createdSince since: String, limit: Int) throws -> (total: Int, clients: [ClientSessionCount]) {
        try reading { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions WHERE created_at >= ?", arguments: [since]) ?? 0
            let clients = try Row.fetchAll(db, sql: """
                SELECT client, COUNT(*) AS n FROM sessions WHERE created_at >= ?
                GROUP BY client ORDER BY n DESC, client LIMIT ?
                """, arguments: [since, limit]).map { ClientSessionCount(client: try $0.decode(atIndex: 0), sessions: try $0.decode(atIndex: 1)) }
            return (total, clients)
        }
    }
}

/// The statements every action's commit runs, looked up once per batch: `cachedStatement(sql:)`
/// hashes and compares its SQL at each call, some 700 to 1,300 instructions for each of these
/// three (callgrind), which each action of a batch paid again.
struct EntryStatements {
    /// The log entry.
    let insert: DirectStatement
    /// The session's head, moved to the entry and its key.
    let moveHead: DirectStatement
    /// A keyed action's key.
    let remember: DirectStatement
    /// Where the three statements' texts and blobs are kept (`DirectStatement.bind(_:at:keptIn:)`),
    /// reset at every commit: the writer's (`CommittedVersions.bindArena`, 16 KiB) holds an
    /// action's many times over; a longer value (large params, user state or tree) is copied by
    /// SQLite as before.
    let arena: BindArena

    init(_ db: Database, arena: BindArena) throws {
        self.arena = arena
        insert = DirectStatement(try db.cachedStatement(sql: """
            INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition, created_at, tree,
                client_at, user_state, previous)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """), in: db)
        moveHead = DirectStatement(try db.cachedStatement(sql: """
            INSERT INTO log_heads (session_id, newest, newest_key) VALUES (?, ?, ?)
            ON CONFLICT (session_id) DO UPDATE SET newest = excluded.newest, newest_key = excluded.newest_key
            """), in: db)
        remember = DirectStatement(try db.cachedStatement(sql: """
            INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at, previous)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """), in: db)
    }

    /// Sets the statements' parameters back to NULL: none points into `arena` any more.
    func clearBindings() {
        withExtendedLifetime(arena) {
            insert.clearBindings()
            moveHead.clearBindings()
            remember.clearBindings()
        }
    }
}

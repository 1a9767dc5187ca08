// The sessions role of a store: sessions, their action log and the answers kept under
// Idempotency-Keys, written by the group commit and read by the session service.
import Foundation
import Locking

/// Sessions as stored: each one's row, its action log, and its idempotent answers.
///
/// The database guards a session's invariants: a log entry's key is `(session_id, version)`, a
/// version is written only on top of version − 1, an `Idempotency-Key` is stored once per
/// session. (Named for ``SessionRecord``: the Swift client's `SessionStore`, where an app keeps
/// its token and queued taps, is another thing in another module.)
///
/// ```swift
/// try store.insert(record)                                       // a new session, version 0
/// try store.commit(ActionCommit(sessionId: record.id, version: 1, …))   // waits for its transaction
/// try store.actions(sessionId: record.id, after: 0, limit: 100)  // the log, oldest first
/// ```
public protocol SessionRecordStore: AnyObject, Sendable {
    /// Inserts a new session, and its user when the user is new. `exposures` are the
    /// experiments it was placed in; for those sessions the features shown on top are
    /// recorded, starting with `firstFeature`. `exclusions` are the experiments that bucketed it
    /// into a variant but did not enrol it (its client cannot render the experiment), counted
    /// as `excluded` by ``experimentReport(_:)``.
    func insert(_ session: SessionRecord, exposures: [(experiment: String, variant: String)],
                exclusions: [(experiment: String, variant: String)], firstFeature: String?) throws
    /// The session as it stands now (its newest version), or nil.
    func session(id: String) throws -> SessionRecord?
    /// What checking a request for session `id` needs, without its tree: its token's hash and
    /// when it was last active (its newest log entry's time, else its row's), or nil when there
    /// is no such session. The server asks it before a session that is not cached takes a cache
    /// slot, then reads the session itself (``session(id:)``) under the slot's lock.
    func sessionCredentials(id: String) throws -> SessionCredentials?
    /// Lets the store keep the session's head only every ``LogSnapshots/headInterval`` versions
    /// and rebuild it on a read with `rebuilder`. A store that rewrites the head at every
    /// commit anyway (PostgreSQL, where other nodes read it) ignores it.
    func rebuildHeads(with rebuilder: any SessionHeadRebuilder)
    /// Whether the commit of `version` stores the session's tree (`ActionCommit.tree`). Where
    /// it does not, the server leaves the tree out of the commit (empty bytes) and does not
    /// encode it. True unless the store keeps the head only every
    /// ``LogSnapshots/headInterval`` versions (``rebuildHeads(with:)``).
    func storesTree(atVersion version: Int) -> Bool
    /// Queues one action's writes without waiting; `completion` gets the result once the
    /// transaction holding it is over (committed, or not), on the store's writer thread. Keep
    /// it short. Nothing is written when the stored version is not `commit.version - 1`
    /// (`CommitError.versionConflict`), or when the session is gone (`.sessionNotFound`).
    func submit(_ commit: ActionCommit, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    /// Queues the successive commits of one session together, in order, so that they share a
    /// transaction where the store can; `completion` gets each one's result, in order, once the
    /// last is over. A commit whose predecessor failed fails too: its version is not next, or,
    /// when another writer took that version, the entry below it is not the one it `follows`.
    func submit(_ commits: [ActionCommit], completion: @escaping @Sendable ([Result<Void, any Error>]) -> Void)
    /// Up to `limit` log entries with a version above `after`, oldest first, as stored: an
    /// entry that carries no tree has no `handledBy` or `transition` (see ``LogSnapshots``).
    func actions(sessionId: String, after: Int, limit: Int) throws -> [ActionRecord]
    /// The log entries of session `sessionId` up to version `after + limit`, starting after the
    /// newest tree kept at or below `after` (a snapshot entry's, else the session row's), with
    /// that tree: what a reader needs to rebuild each entry's tree, handler and transition.
    /// Nil when there is no such session.
    func actionLog(sessionId: String, after: Int, limit: Int) throws -> ActionLogSlice?
    /// The answer stored under `key` for this session, or nil.
    func idempotentAnswer(sessionId: String, key: String) throws -> IdempotentAnswer?
    /// The answers stored under any of `keys` for this session, by key, in one look-up (a batch
    /// of offline taps: one round trip, not one per tap).
    func idempotentAnswers(sessionId: String, keys: [String]) throws -> [String: IdempotentAnswer]
    /// Every idempotency key stored for this session, when there are at most `limit`; nil when
    /// there are more, or when the store does not tell (then each key is looked up when used).
    /// Read after the session, so that it holds every key of the session as read, and more.
    /// (On SQLite, every key its chain reaches: a row written into the file without its link is
    /// missed, and a retry under it is still replayed from the look-up of its turn.)
    func usedKeys(sessionId: String, limit: Int) throws -> [String]?
    /// Deletes the session, its log and its idempotent answers; false when there was none.
    @discardableResult
    func deleteSession(id: String) throws -> Bool
    /// Ends session `id` for an admin: in one transaction, deletes it as `deleteSession` does
    /// (its log, idempotent answers and stream tickets; not its experiment and funnel rows,
    /// nor its user), counting what went, and appends `session.end` (subject: the session id,
    /// old version: the one it stood at, detail: the counts). Nil, and no audit entry, when
    /// there is no such session. A commit of the session that comes after it fails
    /// (`CommitError.sessionNotFound`) and writes nothing.
    func endSession(id: String, audit: AuditStamp) throws -> SessionEnding?
    /// How many sessions are stored.
    func sessionCount() throws -> Int
    /// Sessions created at or after `since` (a stored time), counted per client text, the
    /// most frequent first (ties by text), at most `limit` clients; `total` counts them all.
    func clientCounts(createdSince since: String, limit: Int) throws -> (total: Int, clients: [ClientSessionCount])
    /// The version session `id` stands at now (its newest log entry, or its row), nil when it
    /// does not exist: one look-up by key, for a node to tell whether its cached copy is current.
    func headVersion(sessionId: String) throws -> Int?
    /// `headVersion` of each session in `sessionIds` that exists, in one query: a node following
    /// sessions for event streams asks for all of them at once.
    func headVersions(sessionIds: [String]) throws -> [String: Int]
    /// Up to `limit` sessions created at or after `since` (a stored time), newest first
    /// (`created_at`, then id, descending), starting below `cursor` (the last one of the batch
    /// before), each as created (its row) with the first `maxActions` entries of its log, each
    /// with its tree where it keeps one (see ``LogSnapshots``): what a replay reads, in batches,
    /// on a read connection, and rebuilds the other trees from.
    func recordedSessions(createdSince since: String, before cursor: RecordedSessionCursor?, limit: Int,
                          maxActions: Int) throws -> [RecordedSessionRecord]
}

extension SessionRecordStore {
    /// A store that rewrites the head at every commit needs no rebuilder.
    public func rebuildHeads(with rebuilder: any SessionHeadRebuilder) {}

    /// A store that rewrites the head at every commit stores every tree.
    public func storesTree(atVersion version: Int) -> Bool { true }

    /// Read from the whole session, for a store with no cheaper way.
    public func sessionCredentials(id: String) throws -> SessionCredentials? {
        try session(id: id).map { SessionCredentials(tokenHash: $0.tokenHash, lastActiveAt: $0.updatedAt) }
    }

    /// Inserts a session that is in no experiment.
    public func insert(_ session: SessionRecord) throws {
        try insert(session, exposures: [], exclusions: [], firstFeature: nil)
    }

    /// Inserts a session that no experiment excluded.
    public func insert(_ session: SessionRecord, exposures: [(experiment: String, variant: String)], firstFeature: String?) throws {
        try insert(session, exposures: exposures, exclusions: [], firstFeature: firstFeature)
    }

    /// Not told (PostgreSQL, where it would be one more round trip at every load): each key of
    /// a loaded session is looked up when it is used.
    public func usedKeys(sessionId: String, limit: Int) throws -> [String]? { nil }

    /// One look-up per key, for a store without a query for several.
    public func idempotentAnswers(sessionId: String, keys: [String]) throws -> [String: IdempotentAnswer] {
        var answers: [String: IdempotentAnswer] = [:]
        for key in keys {
            if let answer = try idempotentAnswer(sessionId: sessionId, key: key) { answers[key] = answer }
        }
        return answers
    }

    /// One commit after another through `submit(_:completion:)`, for a store without a group
    /// commit of its own: each is queued once the one before it is over.
    public func submit(_ commits: [ActionCommit], completion: @escaping @Sendable ([Result<Void, any Error>]) -> Void) {
        @Sendable func next(_ index: Int, _ results: [Result<Void, any Error>]) {
            guard index < commits.count else { return completion(results) }
            submit(commits[index]) { result in next(index + 1, results + [result]) }
        }
        next(0, [])
    }

    /// Commits `commit` and waits for the transaction holding it; throws its own error.
    public func commit(_ commit: ActionCommit) throws {
        let done = DispatchSemaphore(value: 0)
        let result = PThreadMutex<Result<Void, any Error>?>(nil)
        submit(commit) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        try result.withLock { $0 }?.get()
    }
}

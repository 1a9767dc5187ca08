// What the server needs from storage: one protocol, implemented by SQLiteStore and PostgresStore.
import Foundation
import Locking
import Synchronization

/// How much a committed transaction survives. Each store says what the two levels mean on it.
public enum Durability: String, Sendable, CaseIterable {
    /// SQLite: WAL with `synchronous=NORMAL`, a commit survives a crash of the process, not a
    /// power loss. PostgreSQL: `synchronous_commit = on`, a commit is flushed to the server's WAL
    /// (and to a synchronous standby's, where the operator runs one) before it is acknowledged.
    case normal
    /// SQLite: `synchronous=FULL`, every commit is fsynced and survives a power loss.
    /// PostgreSQL: `synchronous_commit = remote_apply`, a synchronous standby has also applied it.
    case full
}

/// The database of a FlowStack server: sessions and their action log, users, definitions.
///
/// The server talks only to this protocol; `SQLiteStore` (one file, the embedded default) and
/// `PostgresStore` (one database shared by several nodes) implement it. The database, not the
/// process, guards the invariants: a log entry's key is `(session_id, version)`, a version is
/// written only on top of version − 1, an `Idempotency-Key` is stored once per session.
///
/// ```swift
/// let store: any FlowStore = try SQLiteStore(path: "./flowstack.sqlite")
/// try store.migrate()            // applies the bundled migrations of its dialect not yet applied
/// store.healthCheck()           // the schema version, nil when the database does not answer
/// ```
public protocol FlowStore: AnyObject, Sendable, RolloutStore, UserDataStore, RetentionStore {
    /// Where the database is, for logs and messages: a path, or a URL without its password.
    var location: String { get }
    /// The dialect whose migrations this store applies.
    var dialect: SQLDialect { get }
    /// Whether other processes may write this database too (several nodes on one PostgreSQL):
    /// then a cached session or user state may be behind it, and the server checks.
    var isShared: Bool { get }
    /// What the store counts of its own work, for `/metrics`.
    var counters: StoreCounters { get }

    // MARK: Schema

    /// The highest migration applied, 0 for a new database.
    func schemaVersion() throws -> Int
    /// Applies, in order, the migrations not yet applied; returns those applied. Refuses a
    /// database migrated by a newer binary (`StoreError.schemaTooNew`) without touching it.
    @discardableResult
    func migrate(_ migrations: [Migration]) throws -> [Migration]
    /// The schema version when the database answers a query now, nil when it does not.
    func healthCheck() -> Int?
    /// Why the server must not be reported healthy although the database answers (a split
    /// brain among a PostgreSQL URL's hosts, commits that do not finish), or nil.
    func healthProblem() -> String?
    /// Writes what is queued and closes every connection. Calling it again does nothing.
    func close() throws

    // MARK: Sessions

    /// Inserts a new session, and its user when the user is new. `exposures` are the
    /// experiments it was placed in; for those sessions the features shown on top are
    /// recorded, starting with `firstFeature`. `exclusions` are the experiments that bucketed it
    /// into a variant but did not enrol it (its client cannot render the experiment), counted
    /// as `excluded` by ``experimentReport(_:)``.
    func insert(_ session: SessionRecord, exposures: [(experiment: String, variant: String)],
                exclusions: [(experiment: String, variant: String)], firstFeature: String?) throws
    /// The session as it stands now (its newest version), or nil.
    func session(id: String) throws -> SessionRecord?
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
    /// Up to `limit` log entries with a version above `after`, oldest first.
    func actions(sessionId: String, after: Int, limit: Int) throws -> [ActionRecord]
    /// The answer stored under `key` for this session, or nil.
    func idempotentAnswer(sessionId: String, key: String) throws -> IdempotentAnswer?
    /// The answers stored under any of `keys` for this session, by key, in one look-up (a batch
    /// of offline taps: one round trip, not one per tap).
    func idempotentAnswers(sessionId: String, keys: [String]) throws -> [String: IdempotentAnswer]
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
    /// before), each as created (its row) with the first `maxActions` entries of its log and the
    /// tree each left: what a replay reads, in batches, on a read connection.
    func recordedSessions(createdSince since: String, before cursor: RecordedSessionCursor?, limit: Int,
                          maxActions: Int) throws -> [RecordedSessionRecord]

    // MARK: Stream tickets

    /// Stores a ticket (its SHA-256) that may open session `sessionId`'s event stream until
    /// `expiresAt`, and reopen it within its reconnection window, never after `endsAt`
    /// (milliseconds since 1970); tickets past either time at `now` are deleted with it.
    func insertStreamTicket(hash: [UInt8], sessionId: String, expiresAt: Int, endsAt: Int, now: Int) throws
    /// Opens a stream with the ticket: when it was made for `sessionId` and `now` is within both
    /// its window and its end, it gets a new generation (the stream that held it before is
    /// replaced) and its window moves to `holdUntil`. Returns that generation and the ticket's
    /// end, or nil (unknown, for another session, out of its window or past its end).
    func takeStreamTicket(hash: [UInt8], sessionId: String, now: Int, holdUntil: Int) throws -> StreamTicketHold?
    /// Moves to `until` the window of each ticket in `holds` that is still at the generation
    /// given; returns the holds that are not (a newer stream took the ticket, or it is gone).
    func renewStreamTickets(_ holds: [StreamTicketHold], until: Int) throws -> [StreamTicketHold]

    // MARK: Client keys

    /// Stores a new client key; with `audit`, appends `clientKey.create` to the audit log in
    /// the same transaction.
    func insertClientKey(_ key: ClientKeyRecord, audit: AuditStamp?) throws
    /// Every client key, live and revoked, oldest first.
    func clientKeys() throws -> [ClientKeyRecord]
    /// The live (not revoked) key whose SHA-256 is `hash`, or nil.
    func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord?
    /// Revokes key `id` at `at` (a key revoked before keeps its time); nil when there is no such
    /// key, else the key as it stands. With `audit`, a revocation (not a repeated one) appends
    /// `clientKey.revoke` to the audit log in the same transaction.
    func revokeClientKey(id: String, at: String, audit: AuditStamp?) throws -> ClientKeyRecord?

    // MARK: Admin keys

    /// Stores a new admin key unless a live key has its name (then false, nothing stored);
    /// with `audit`, appends `adminKey.create` in the same transaction.
    func insertAdminKey(_ key: AdminKeyRecord, audit: AuditStamp?) throws -> Bool
    /// Every admin key, live and revoked, oldest first.
    func adminKeys() throws -> [AdminKeyRecord]
    /// The live (not revoked) admin key whose SHA-256 is `hash`, or nil.
    func liveAdminKey(hash: [UInt8]) throws -> AdminKeyRecord?
    /// Revokes admin key `id` at `at` (a key revoked before keeps its time); nil when there is
    /// no such key, else the key as it stands. With `audit`, a revocation (not a repeated one)
    /// appends `adminKey.revoke` in the same transaction.
    func revokeAdminKey(id: String, at: String, audit: AuditStamp?) throws -> AdminKeyRecord?
    /// The SHA-256 of the bootstrap admin token kept in the database, or nil when none was made.
    func adminTokenHash() throws -> [UInt8]?
    /// Keeps `hash` as the bootstrap admin token's: always when `replace` (with `audit`,
    /// appending `adminToken.reset`), else only when none is kept yet. Returns the hash kept
    /// afterwards: a node that lost the race to make the first one gets the winner's.
    func keepAdminTokenHash(_ hash: [UInt8], at: String, replace: Bool, audit: AuditStamp?) throws -> [UInt8]

    // MARK: Users

    /// The user with this id, or nil when no session was ever made for them.
    func user(id: String) throws -> UserRecord?
    /// Removes `key` from the user's state; nil when the user is unknown, else the new state.
    /// With `audit`, appends `user.<key>.reset` (or the stamp's action) to the audit log in the
    /// same transaction, with the user's state revision before and after where the store keeps one.
    func removeUserState(id: String, key: String, audit: AuditStamp?) throws -> UserRecord?

    // MARK: Definitions

    /// Stores `definition` as the next version of flow `name` (1 for a new flow); when
    /// `activate`, it becomes the live version in the same transaction. Returns the version.
    /// With `audit`, appends `flow.put` (latest version before → the new one) and, when
    /// activated, `flow.activate` (live version before → the new one) in the same transaction.
    func addFlowVersion(name: String, definition: String, activate: Bool, audit: AuditStamp?) throws -> Int
    /// Makes version `version` of flow `name` live; false when that version does not exist.
    /// With `audit`, appends `flow.activate` (live version before → `version`) in the same transaction.
    func activateFlow(name: String, version: Int, audit: AuditStamp?) throws -> Bool
    /// One version of a flow, or nil.
    func flowVersion(name: String, version: Int) throws -> FlowVersionRecord?
    /// Every stored flow version, by name and version.
    func allFlowVersions() throws -> [FlowVersionRecord]
    /// The live version of each flow, by name.
    func liveFlowVersions() throws -> [String: Int]
    /// Every version each flow has ever had live (made live by a PUT, the activate route or
    /// seeding), in ascending order, by name.
    func flowActivations() throws -> [String: [Int]]
    /// Seeds flow `name` as version 1, live, when the store has no version of it yet.
    func seedFlow(name: String, definition: String) throws
    /// Stores the definition of `key`, replacing any earlier one; returns the new revision.
    /// With `audit`, appends `flag.put` or `experiment.put` (revision before → the new one) in
    /// the same transaction.
    func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String, audit: AuditStamp?) throws -> Int
    /// Stores `definition` as the next revision of experiment `key`, only when its stored
    /// revision is `revision` (a compare-and-set: nil, and nothing written, when another change
    /// came first or the experiment is gone), and makes each flow of `activating` live at its
    /// version in the same transaction (a conclusion: the winner's pins become live; versions
    /// already live, or that do not exist, are left alone). With `audit`, appends the stamp's
    /// action (`experiment.stop`, …; `experiment.put` without one) with the revision before →
    /// after, then `flow.activate` for each flow made live. Returns the new revision.
    func changeExperiment(key: String, definition: String, revision: Int, activating: [String: Int], audit: AuditStamp?) throws -> Int?
    /// Stores the definition of `key` only when there is none yet (to seed shipped defaults).
    func seedDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws
    /// Every definition of a kind, by key order.
    func allDefinitions(_ kind: KeyedDefinitionKind) throws -> [KeyedDefinitionRecord]
    /// A text that changes whenever a flow version is added or made live, or a flag or an
    /// experiment is stored: a node polls it to know when to reload its definitions.
    func definitionsFingerprint() throws -> String
    /// Per variant of `experiment`: sessions exposed, distinct users who completed onboarding in
    /// those sessions, per feature the sessions that showed it on top, and sessions excluded
    /// (bucketed into it, not enrolled: their client cannot render the experiment).
    func experimentReport(_ experiment: String) throws -> [String: ExperimentVariantCounts]

    // MARK: Releases

    /// Stores `release` (its `versions` are the versions to give its flows, `texts` their
    /// definitions) and each flow version as an ordinary, non-live version, in one transaction,
    /// with `release.create` in the audit log. Throws `ReleaseConflict("release-stale")` when a
    /// version is taken already (another version of the flow was stored meanwhile). Returns it
    /// with its id.
    func createRelease(_ release: ReleaseRecord, texts: [String: String], audit: AuditStamp) throws -> ReleaseRecord
    /// One release, or nil.
    func release(id: Int) throws -> ReleaseRecord?
    /// Every release, newest first.
    func releases() throws -> [ReleaseRecord]
    /// Records a test run: its result, `passed` makes it `ready` else `failed`, and `base` the
    /// live versions it ran on. Refuses (`release-state`) a release no longer draft, failed or ready.
    func recordReleaseTests(id: Int, tests: String, passed: Bool, base: [String: Int]) throws -> ReleaseRecord?
    /// Approves a draft, failed or ready release by `audit.credential`, which must not be its
    /// creator's (`self-approval`); `release.approve` in the audit log.
    func approveRelease(id: Int, audit: AuditStamp) throws -> ReleaseRecord?
    /// Makes the whole release live in one transaction (see `ReleaseRules.checkActivation`):
    /// its flow versions live, its flags and experiments put, what was live before recorded in
    /// `previous`, `release.activate` (and a `flow.activate`, `flag.put`, `experiment.put` per
    /// change) in the audit log. Nil when there is no such release.
    func activateRelease(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord?
    /// Marks a release `rolling-out` (the rollouts branch serves its versions to a share of new
    /// sessions; nothing is made live) after the checks of activation; `release.rollout` in the
    /// audit log. A rollout reaching 100 % then calls `activateRelease`, a failed one
    /// `rollbackRelease`, which for a release rolling out only marks it `rolled-back`.
    func beginReleaseRollout(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord?
    /// Restores what was live before the release in one transaction (see
    /// `ReleaseRules.checkRollback`): previous flow versions live (a flow new with it is live no
    /// more), previous flag and experiment texts put back (a flag new with it removed), each
    /// experiment it started stored as `stopped[key]`; `release.rollback` with `reason` as its
    /// detail. Nil when there is no such release.
    func rollbackRelease(id: Int, reason: String?, stopped: [String: String], audit: AuditStamp) throws -> ReleaseRecord?

    // MARK: Audit log

    /// Up to `limit` entries of the audit log with an id above `after`, oldest first. Ids grow
    /// in the order entries were committed, so paging by the last id seen misses none.
    func auditLog(after: Int, limit: Int) throws -> [AuditRecord]
}

extension FlowStore {
    /// A store with nothing to report beyond `healthCheck()` (SQLite).
    public func healthProblem() -> String? { nil }

    /// Stores a flow version without an audit entry (seeding, tools, tests).
    public func addFlowVersion(name: String, definition: String, activate: Bool) throws -> Int {
        try addFlowVersion(name: name, definition: definition, activate: activate, audit: nil)
    }

    /// Makes a version live without an audit entry.
    public func activateFlow(name: String, version: Int) throws -> Bool {
        try activateFlow(name: name, version: version, audit: nil)
    }

    /// Stores a flag or experiment without an audit entry.
    public func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws -> Int {
        try putDefinition(kind, key: key, definition: definition, audit: nil)
    }

    /// Removes user state without an audit entry.
    public func removeUserState(id: String, key: String) throws -> UserRecord? {
        try removeUserState(id: id, key: key, audit: nil)
    }

    /// Stores a client key without an audit entry.
    public func insertClientKey(_ key: ClientKeyRecord) throws {
        try insertClientKey(key, audit: nil)
    }

    /// Revokes a client key without an audit entry.
    public func revokeClientKey(id: String, at: String) throws -> ClientKeyRecord? {
        try revokeClientKey(id: id, at: at, audit: nil)
    }

    /// Applies this dialect's bundled migrations not yet applied.
    @discardableResult
    public func migrate() throws -> [Migration] {
        try migrate(Migration.bundled(dialect))
    }

    /// Inserts a session that is in no experiment.
    public func insert(_ session: SessionRecord) throws {
        try insert(session, exposures: [], exclusions: [], firstFeature: nil)
    }

    /// Inserts a session that no experiment excluded.
    public func insert(_ session: SessionRecord, exposures: [(experiment: String, variant: String)], firstFeature: String?) throws {
        try insert(session, exposures: exposures, exclusions: [], firstFeature: firstFeature)
    }

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

/// The SQL dialect of a store, which names its folder of migrations (`migrations/sqlite/`).
public enum SQLDialect: String, Sendable, CaseIterable {
    case sqlite
    case postgresql
}

/// What an experiment's report counts for one variant.
public struct ExperimentVariantCounts: Sendable, Equatable {
    public var sessions: Int
    public var onboarded: Int
    public var funnel: [String: Int]
    /// Sessions bucketed into the variant but not enrolled: their client cannot render the
    /// experiment. Not in `sessions`.
    public var excluded: Int

    public init(sessions: Int = 0, onboarded: Int = 0, funnel: [String: Int] = [:], excluded: Int = 0) {
        self.sessions = sessions
        self.onboarded = onboarded
        self.funnel = funnel
        self.excluded = excluded
    }
}

/// The time format of every stored time: ISO 8601 UTC with milliseconds.
public enum Timestamp {
    /// Now, or `date`, as stored.
    public static func string(_ date: Date = Date()) -> String {
        style.format(date)
    }

    /// Made once: every action is stamped, and making the style cost a third of formatting.
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

/// Counters of a store's work, read by `/metrics`: round trips to the database, failed calls,
/// and the group commit's transactions and the actions they carried (actions per round trip).
public final class StoreCounters: Sendable {
    public let roundTrips = Atomic<Int>(0)
    public let errors = Atomic<Int>(0)
    public let commitBatches = Atomic<Int>(0)
    public let committedActions = Atomic<Int>(0)

    public init() {}
}

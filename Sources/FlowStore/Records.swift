// What the store keeps of sessions, actions, idempotent answers, users and definitions.

/// A session as stored: its row, brought up to its newest log entry. JSON columns are kept as
/// text: the store does not interpret them.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userId: String
    /// SHA-256 of the bearer token.
    public var tokenHash: [UInt8]
    public var version: Int
    /// The flow tree in the engine's storage encoding.
    public var tree: [UInt8]
    public var context: String
    public var flags: String
    public var experiments: String
    public var flowVersions: String
    public var lastTransition: String?
    public var handledBy: String?
    public var createdAt: String
    public var updatedAt: String
    /// The client it was made for (`{"platform", "appVersion", "features"}`, canonical JSON), nil
    /// when the client said nothing.
    public var client: String?

    public init(id: String, userId: String, tokenHash: [UInt8], version: Int, tree: [UInt8], context: String,
                flags: String, experiments: String, flowVersions: String, lastTransition: String? = nil,
                handledBy: String? = nil, createdAt: String, updatedAt: String, client: String? = nil) {
        self.id = id
        self.userId = userId
        self.tokenHash = tokenHash
        self.version = version
        self.tree = tree
        self.context = context
        self.flags = flags
        self.experiments = experiments
        self.flowVersions = flowVersions
        self.lastTransition = lastTransition
        self.handledBy = handledBy
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.client = client
    }
}

/// What a request for a session is checked against before the session is read
/// (`SessionRecordStore.sessionCredentials(id:)`).
public struct SessionCredentials: Sendable, Equatable {
    /// SHA-256 of the bearer token.
    public var tokenHash: [UInt8]
    /// The time of the session's newest version (`SessionRecord.updatedAt` of the session as it
    /// stands now), which expiry counts from.
    public var lastActiveAt: String

    public init(tokenHash: [UInt8], lastActiveAt: String) {
        self.tokenHash = tokenHash
        self.lastActiveAt = lastActiveAt
    }
}

/// What ending one session removed (`FlowStore.endSession`): whose it was, the version it
/// stood at, and the rows that went with it, counted, never the data.
public struct SessionEnding: Sendable, Equatable {
    public var sessionId: String
    /// Whose session it was; the user's own row and state stay.
    public var userId: String
    /// The version the session stood at when it ended.
    public var version: Int
    /// Log entries.
    public var actions = 0
    public var idempotencyKeys = 0
    public var streamTickets = 0

    public init(sessionId: String, userId: String, version: Int) {
        self.sessionId = sessionId
        self.userId = userId
        self.version = version
    }

    /// The rows removed by name, in a fixed order (the HTTP answer, the audit entry's detail);
    /// named as a user's erasure names them.
    public var counts: [(name: String, count: Int)] {
        [("sessions", 1), ("actions", actions), ("idempotencyKeys", idempotencyKeys), ("streamTickets", streamTickets)]
    }

    /// The counts as a JSON object, `{"sessions":1,"actions":4,…}`: the audit entry's `detail`.
    public var countsJSON: String {
        "{" + counts.map { "\"\($0.name)\":\($0.count)" }.joined(separator: ",") + "}"
    }
}

/// How many sessions created since a time came from one client (its stored text, nil for
/// sessions whose client said nothing): what activation impact is computed from.
public struct ClientSessionCount: Sendable, Equatable {
    public var client: String?
    public var sessions: Int

    public init(client: String?, sessions: Int) {
        self.client = client
        self.sessions = sessions
    }
}

/// One entry of a session's action log: what happened and what replaying it needs. The log
/// does not keep the tree each action left (see ``LogSnapshots``): `handledBy` and `transition`
/// are stored only on the entries that carry a tree, and rebuilt with the engine for the others.
public struct ActionRecord: Sendable, Equatable {
    public var version: Int
    public var type: String
    public var source: String?
    /// JSON object text.
    public var params: String
    public var interactive: Bool
    public var handledBy: String?
    /// JSON text, nil when nothing moved.
    public var transition: String?
    /// When the server committed it (ISO 8601 UTC with milliseconds).
    public var createdAt: String
    /// When the client says the action happened, in the same format: set for taps made offline
    /// and sent later in a batch, nil otherwise.
    public var clientAt: String?
    /// The user's state the action was judged with (a JSON object, keys sorted), stored where a
    /// rebuild could not derive it from the entries before (see ``LogSnapshots``); nil elsewhere.
    public var userState: String?

    public init(version: Int, type: String, source: String?, params: String, interactive: Bool,
                handledBy: String?, transition: String?, createdAt: String, clientAt: String? = nil,
                userState: String? = nil) {
        self.version = version
        self.type = type
        self.source = source
        self.params = params
        self.interactive = interactive
        self.handledBy = handledBy
        self.transition = transition
        self.createdAt = createdAt
        self.clientAt = clientAt
        self.userState = userState
    }
}

/// A client key as stored: its SHA-256, never the key.
public struct ClientKeyRecord: Sendable, Equatable {
    public var id: String
    public var name: String
    public var keyHash: [UInt8]
    public var createdAt: String
    /// When it was revoked; nil while it is live.
    public var revokedAt: String?

    public init(id: String, name: String, keyHash: [UInt8], createdAt: String, revokedAt: String? = nil) {
        self.id = id
        self.name = name
        self.keyHash = keyHash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// A named admin key as stored: its role and its SHA-256, never the key.
public struct AdminKeyRecord: Sendable, Equatable {
    public var id: String
    /// Unique among live keys: the audit log names a key by it (`key:<name>`).
    public var name: String
    /// `read`, `edit`, `publish` or `admin`.
    public var role: String
    public var keyHash: [UInt8]
    public var createdAt: String
    /// The credential that made it, as the audit log spells it (`admin`, `key:ops`).
    public var createdBy: String
    /// When it was revoked; nil while it is live.
    public var revokedAt: String?

    public init(id: String, name: String, role: String, keyHash: [UInt8], createdAt: String, createdBy: String,
                revokedAt: String? = nil) {
        self.id = id
        self.name = name
        self.role = role
        self.keyHash = keyHash
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.revokedAt = revokedAt
    }
}

/// A stream ticket held by one stream: which ticket (its SHA-256), the generation that stream
/// took, and the ticket's absolute end (milliseconds since 1970, UTC).
public struct StreamTicketHold: Sendable, Hashable {
    public var hash: [UInt8]
    public var generation: Int
    public var endsAt: Int

    public init(hash: [UInt8], generation: Int, endsAt: Int) {
        self.hash = hash
        self.generation = generation
        self.endsAt = endsAt
    }
}

/// An answer stored under an `Idempotency-Key`.
public struct IdempotentAnswer: Sendable, Equatable {
    public var requestHash: [UInt8]
    public var status: Int
    /// The session version the answer showed, for its `ETag`.
    public var version: Int
    /// The answer's body as it was sent; nil when it is not stored, and the server makes it
    /// again from the session's log at `version` (the state document of that version). Answers
    /// stored before migration 19 (SQLite) or 16 (PostgreSQL) keep theirs.
    public var body: [UInt8]?

    public init(requestHash: [UInt8], status: Int, version: Int, body: [UInt8]?) {
        self.requestHash = requestHash
        self.status = status
        self.version = version
        self.body = body
    }
}

/// Everything one applied action writes, committed in one transaction.
///
/// A value, held by one reference: a commit is copied on its way to the store (into the group
/// commit's queue, out of it into a batch), and each copy of its eighteen strings and arrays
/// (its action's among them) retained them all, some 125 retains and releases an action. A
/// change makes a new box.
public struct ActionCommit: Sendable {
    /// What a commit holds; the properties of the same names below read and change it.
    @usableFromInline
    struct Fields: Sendable {
        @usableFromInline var sessionId: String
        @usableFromInline var userId: String
        @usableFromInline var version: Int
        @usableFromInline var tree: [UInt8]
        @usableFromInline var action: ActionRecord
        @usableFromInline var userPatch: String?
        @usableFromInline var idempotency: (key: String, answer: IdempotentAnswer)?
        @usableFromInline var reachedFeature: String?
        @usableFromInline var completesOnboarding: Bool
        @usableFromInline var userRevision: Int?
        @usableFromInline var follows: String?
        @usableFromInline var judgedUserState: String?
        @usableFromInline var leaseEpoch: Int?
    }

    @usableFromInline
    final class Box: Sendable {
        @usableFromInline let fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    @usableFromInline var box: Box

    private mutating func change(_ body: (inout Fields) -> Void) {
        var fields = box.fields
        body(&fields)
        box = Box(fields)
    }

    // Inlinable, so that a store reads `commit.action.type` in place: a getter called across
    // the module's boundary returned the whole action, retaining each of its strings.
    public var sessionId: String {
        @inlinable get { box.fields.sessionId }
        set { change { $0.sessionId = newValue } }
    }
    public var userId: String {
        @inlinable get { box.fields.userId }
        set { change { $0.userId = newValue } }
    }
    /// The new version; the session must stand at `version - 1` for the commit to apply.
    public var version: Int {
        @inlinable get { box.fields.version }
        set { change { $0.version = newValue } }
    }
    public var tree: [UInt8] {
        @inlinable get { box.fields.tree }
        set { change { $0.tree = newValue } }
    }
    public var action: ActionRecord {
        @inlinable get { box.fields.action }
        set { change { $0.action = newValue } }
    }
    /// The user-state keys the action set, as a JSON object, when it changed any: each replaces
    /// the stored value, and a null removes the key (a merge of top-level keys only; a nested
    /// object is stored as given, not merged into the one stored).
    public var userPatch: String? {
        @inlinable get { box.fields.userPatch }
        set { change { $0.userPatch = newValue } }
    }
    public var idempotency: (key: String, answer: IdempotentAnswer)? {
        @inlinable get { box.fields.idempotency }
        set { change { $0.idempotency = newValue } }
    }
    /// The feature now on top, recorded for experiment funnels (nil for sessions in no experiment).
    public var reachedFeature: String? {
        @inlinable get { box.fields.reachedFeature }
        set { change { $0.reachedFeature = newValue } }
    }
    /// The action completed onboarding: the session's exposures count it as onboarded.
    public var completesOnboarding: Bool {
        @inlinable get { box.fields.completesOnboarding }
        set { change { $0.completesOnboarding = newValue } }
    }
    /// The revision of the user's state the action was judged with: when set, nothing is
    /// written unless the user's state is still at it (another node changed it meanwhile is a
    /// `CommitError.versionConflict`). Nil: not checked (one process owns the database).
    public var userRevision: Int? {
        @inlinable get { box.fields.userRevision }
        set { change { $0.userRevision = newValue } }
    }
    /// The idempotency key of the commit this one follows (the previous tap of a batch): nothing
    /// is written unless the log's `version - 1` is that commit's (its key is stored for that
    /// version), else `CommitError.versionConflict`. Without it, a later tap of a batch whose
    /// earlier tap lost its version to another writer would be written on top of that writer's
    /// entry, which it was not judged on. Nil: only the version is checked.
    public var follows: String? {
        @inlinable get { box.fields.follows }
        set { change { $0.follows = newValue } }
    }
    /// The user's state the action was judged with (a JSON object, keys sorted), whether or not
    /// `action.userState` stores it: a store that keeps trees only at snapshots stores it too
    /// when the entry before is not in the log (the session's start, or retention folded the
    /// log into the session's row), where a rebuild must start without it.
    public var judgedUserState: String? {
        @inlinable get { box.fields.judgedUserState }
        set { change { $0.judgedUserState = newValue } }
    }
    /// The epoch of this node's lease of the session (see `SessionLeaseStore`): when set, nothing
    /// is written unless the session's lease is still under it (another node took the lease over
    /// is a `CommitError.versionConflict`). Nil: no lease is checked (one node owns the database).
    public var leaseEpoch: Int? {
        @inlinable get { box.fields.leaseEpoch }
        set { change { $0.leaseEpoch = newValue } }
    }

    public init(sessionId: String, userId: String, version: Int, tree: [UInt8], action: ActionRecord,
                userPatch: String? = nil, idempotency: (key: String, answer: IdempotentAnswer)? = nil,
                reachedFeature: String? = nil, completesOnboarding: Bool = false, userRevision: Int? = nil,
                follows: String? = nil, judgedUserState: String? = nil, leaseEpoch: Int? = nil) {
        box = Box(Fields(
            sessionId: sessionId, userId: userId, version: version, tree: tree, action: action,
            userPatch: userPatch, idempotency: idempotency, reachedFeature: reachedFeature,
            completesOnboarding: completesOnboarding, userRevision: userRevision, follows: follows,
            judgedUserState: judgedUserState, leaseEpoch: leaseEpoch))
    }
}

/// Why a commit did not apply.
public enum CommitError: Error, Equatable {
    /// The session is gone.
    case sessionNotFound
    /// The session's stored version is not the one the action was applied to.
    case versionConflict(stored: Int)
    /// The commit carries no tree where the store writes one (see
    /// `SessionRecordStore.storesTree(atVersion:)`): a server's mistake, written nowhere.
    case treeMissing
}

/// A user's stored state.
public struct UserRecord: Sendable, Equatable {
    public var id: String
    /// JSON object text, e.g. `{"onboarded":true}`.
    public var state: String
    public var createdAt: String
    public var updatedAt: String
    /// Grows with every change of `state` (on a shared database; 0 on SQLite, whose one
    /// process sees every change), so a commit can require the state it was judged with.
    public var revision: Int

    public init(id: String, state: String, createdAt: String, updatedAt: String, revision: Int = 0) {
        self.id = id
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.revision = revision
    }
}

/// One stored flow version.
public struct FlowVersionRecord: Sendable, Equatable {
    public var name: String
    public var version: Int
    public var definition: String
    public var createdAt: String

    public init(name: String, version: Int, definition: String, createdAt: String) {
        self.name = name
        self.version = version
        self.definition = definition
        self.createdAt = createdAt
    }
}

/// What tells one stored flow version from another without its text: a version is never
/// changed once stored, so a reader that holds (name, version) stored at `createdAt` holds it.
public struct FlowVersionStamp: Sendable, Hashable {
    public var name: String
    public var version: Int
    public var createdAt: String

    public init(name: String, version: Int, createdAt: String) {
        self.name = name
        self.version = version
        self.createdAt = createdAt
    }
}

/// Where a store's flow versions stand: the definitions' revision, which every version stored
/// or edited raises and carries, and a count of the versions removed. A reader that read every
/// version up to a mark finds the later ones with `flowVersionChanges(since:)`, as long as the
/// count of removals and the epoch have not moved.
public struct FlowVersionMark: Sendable, Hashable {
    public var revision: Int
    public var removals: Int
    /// What the revision's numbers belong to: another when its row was made again, and its
    /// numbers started over.
    public var epoch: String

    public init(revision: Int, removals: Int, epoch: String = "") {
        self.revision = revision
        self.removals = removals
        self.epoch = epoch
    }
}

/// The order of the definitions' revisions, as fingerprints that carry one read them
/// (`r<number>.<epoch>`, PostgreSQL's since migration 19). Writes to the definitions commit one
/// at a time and raise the number as they do, so of two fingerprints read under one epoch, the
/// lower number was read first, and what a node read at the higher one already holds what the
/// lower one counts.
///
/// ```swift
/// DefinitionsRevision.isEarlier("r6.a1", than: "r7.a1")   // true: read before
/// ```
public enum DefinitionsRevision {
    /// Whether fingerprint `seen` was read before `known`: both revisions of one epoch, `seen`'s
    /// lower. False whenever the two cannot be ordered (a fingerprint that carries no revision:
    /// SQLite's, or PostgreSQL's counted form when the revision's row is gone).
    public static func isEarlier(_ seen: String, than known: String) -> Bool {
        guard let seen = parts(seen), let known = parts(known) else { return false }
        return seen.number < known.number && seen.epoch == known.epoch
    }

    /// The number and the epoch of a fingerprint that carries a revision, else nil.
    private static func parts(_ fingerprint: String) -> (number: Int, epoch: Substring)? {
        guard fingerprint.hasPrefix("r"), let dot = fingerprint.firstIndex(of: "."),
              let number = Int(fingerprint[fingerprint.index(after: fingerprint.startIndex)..<dot]) else { return nil }
        return (number, fingerprint[fingerprint.index(after: dot)...])
    }
}

/// The flow versions stored or edited after a mark, by name and version, and the mark they bring
/// their reader to.
public struct FlowVersionChanges: Sendable {
    public var mark: FlowVersionMark
    public var changed: [FlowVersionRecord]

    public init(mark: FlowVersionMark, changed: [FlowVersionRecord]) {
        self.mark = mark
        self.changed = changed
    }
}

/// The definitions a node reads to take other nodes' changes over (`DefinitionStore.definitionsRead`).
public struct DefinitionsRead: Sendable {
    /// The flow versions stored or edited since the mark given, with the mark now; nil where
    /// the store keeps no marks.
    public var changes: FlowVersionChanges?
    public var live: [String: Int]
    public var activations: [String: [Int]]
    public var flags: [KeyedDefinitionRecord]
    public var experiments: [KeyedDefinitionRecord]

    public init(changes: FlowVersionChanges?, live: [String: Int], activations: [String: [Int]],
                flags: [KeyedDefinitionRecord], experiments: [KeyedDefinitionRecord]) {
        self.changes = changes
        self.live = live
        self.activations = activations
        self.flags = flags
        self.experiments = experiments
    }
}

/// A flag or an experiment as stored.
public struct KeyedDefinitionRecord: Sendable, Equatable {
    public var key: String
    public var definition: String
    public var revision: Int
    public var updatedAt: String

    public init(key: String, definition: String, revision: Int, updatedAt: String) {
        self.key = key
        self.definition = definition
        self.revision = revision
        self.updatedAt = updatedAt
    }
}

/// Which table a keyed definition lives in.
public enum KeyedDefinitionKind: String, Sendable {
    case flag = "flags"
    case experiment = "experiments"
}

/// Who makes an admin change, for the audit log: the fingerprint of the credential (never the
/// credential), and optionally the name of the change where the store method is more general.
public struct AuditStamp: Sendable, Equatable {
    /// Who: `admin` (the bootstrap admin token), `key:<name>` (a named admin key); entries
    /// written before named keys say `admin:` and the first 8 hex digits of the token's SHA-256.
    public var credential: String
    /// The action to record instead of the store method's own (`user.onboarding.reset` for a
    /// removal of `onboarded`).
    public var action: String?
    /// Why the change was made (a rollback's reason), stored in the entry's `detail`.
    public var detail: String?

    public init(credential: String, action: String? = nil, detail: String? = nil) {
        self.credential = credential
        self.action = action
        self.detail = detail
    }
}

/// One entry of the audit log: an admin change, when, by which credential, and the version or
/// revision of what it changed before and after.
public struct AuditRecord: Sendable, Equatable {
    /// Grows by one with every entry, in commit order; `GET /v1/audit?after=<id>` pages by it.
    public var id: Int
    public var at: String
    /// `flow.put`, `flow.activate`, `flag.put`, `experiment.put`, `experiment.start`,
    /// `experiment.stop`, `experiment.conclude`, `user.onboarding.reset`, `clientKey.create`,
    /// `clientKey.revoke`, `adminKey.create`, `adminKey.revoke`, `adminToken.reset`, `session.end`, ….
    public var action: String
    /// What changed: a flow's name, a flag's or experiment's key, a user id, a client key's id,
    /// a session's id.
    public var subject: String
    /// The version (flows) or revision (flags, experiments, user state) before; nil when there
    /// was none, or for changes that have no versions (client keys).
    public var oldVersion: Int?
    /// The version or revision after.
    public var newVersion: Int?
    public var credential: String
    /// Why the change was made (a rollback's reason; the release a flow change belongs to), or nil.
    public var detail: String?

    public init(id: Int, at: String, action: String, subject: String, oldVersion: Int?, newVersion: Int?, credential: String,
                detail: String? = nil) {
        self.detail = detail
        self.id = id
        self.at = at
        self.action = action
        self.subject = subject
        self.oldVersion = oldVersion
        self.newVersion = newVersion
        self.credential = credential
    }
}

/// The names of admin changes in the audit log.
public enum AuditAction {
    public static let flowPut = "flow.put"
    public static let flowActivate = "flow.activate"
    public static let clientKeyCreate = "clientKey.create"
    public static let clientKeyRevoke = "clientKey.revoke"
    public static let adminKeyCreate = "adminKey.create"
    public static let adminKeyRevoke = "adminKey.revoke"
    /// The bootstrap admin token replaced (`flowstack admin-token --reset`).
    public static let adminTokenReset = "adminToken.reset"
    /// An experiment's lifecycle moves (`PATCH /v1/experiments/{key}`, or a PUT that changes `status`).
    public static let experimentStart = "experiment.start"
    public static let experimentStop = "experiment.stop"
    public static let experimentConclude = "experiment.conclude"
    public static let releaseCreate = "release.create"
    public static let releaseApprove = "release.approve"
    public static let releaseActivate = "release.activate"
    public static let releaseRollout = "release.rollout"
    public static let releaseRollback = "release.rollback"
    /// One session ended by an admin (`DELETE /v1/sessions/{id}` with an admin credential); the
    /// subject is the session id, never the user's.
    public static let sessionEnd = "session.end"

    /// `flag.put` or `experiment.put`.
    public static func put(_ kind: KeyedDefinitionKind) -> String {
        switch kind {
        case .flag: return "flag.put"
        case .experiment: return "experiment.put"
        }
    }

    /// `user.<key>.reset`, unless the stamp names the change.
    public static func userStateReset(_ key: String, _ stamp: AuditStamp) -> String {
        stamp.action ?? "user.\(key).reset"
    }
}

/// A stored session as a replay reads it: its row as created, and its log with the trees it keeps.
public struct RecordedSessionRecord: Sendable, Equatable {
    /// The row: `version` and `tree` are the session's as created (0 for every session made
    /// since the log carries trees; an older row may stand at a later version).
    public var session: SessionRecord
    /// Log entries oldest first, each with the tree it left where it keeps one (a snapshot, see
    /// ``LogSnapshots``; nil for the others, and for entries written before the log carried trees).
    public var actions: [(action: ActionRecord, tree: [UInt8]?)]

    public init(session: SessionRecord, actions: [(action: ActionRecord, tree: [UInt8]?)]) {
        self.session = session
        self.actions = actions
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.session == rhs.session && lhs.actions.count == rhs.actions.count
            && zip(lhs.actions, rhs.actions).allSatisfy { $0.action == $1.action && $0.tree == $1.tree }
    }

    /// Where the next batch starts: below this session.
    public var cursor: RecordedSessionCursor { RecordedSessionCursor(createdAt: session.createdAt, id: session.id) }
}

/// A position in the newest-first order of sessions (`created_at`, then id, descending).
public struct RecordedSessionCursor: Sendable, Equatable {
    public var createdAt: String
    public var id: String

    public init(createdAt: String, id: String) {
        self.createdAt = createdAt
        self.id = id
    }
}

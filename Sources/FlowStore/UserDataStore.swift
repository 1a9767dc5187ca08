// The user-data role of a store: a user's state, and everything kept about one user, erased or
// exported at once.

/// What one erasure removed, by table: counts, never the data.
///
/// Erasing a user no longer stored removes nothing and answers zeros, so an erasure can be
/// repeated safely.
public struct UserErasure: Sendable, Equatable {
    /// The `users` row (0 or 1).
    public var users = 0
    /// Session rows; `sessionIds` names them, with the sessions deleted earlier whose
    /// experiment records still named the user.
    public var sessions = 0
    public var actions = 0
    public var idempotencyKeys = 0
    public var exposures = 0
    public var exclusions = 0
    /// Rows of the report's funnel (features a session showed on top).
    public var sessionFeatures = 0
    public var streamTickets = 0
    /// Guardrail rows of rollouts.
    public var rolloutSessions = 0
    /// Earlier audit entries about the user (an onboarding reset) whose subject, the user id, was
    /// replaced by the erasure's subject (its hash).
    public var auditEntries = 0
    /// Every session whose rows were removed: the server evicts them from its caches and ends
    /// their event streams.
    public var sessionIds: [String] = []

    public init() {}

    /// The counts by name, in a fixed order (the audit entry's detail, the HTTP answer).
    public var counts: [(name: String, count: Int)] {
        [("users", users), ("sessions", sessions), ("actions", actions), ("idempotencyKeys", idempotencyKeys),
         ("exposures", exposures), ("exclusions", exclusions), ("sessionFeatures", sessionFeatures),
         ("streamTickets", streamTickets), ("rolloutSessions", rolloutSessions), ("auditEntries", auditEntries)]
    }

    /// The counts as a JSON object, `{"users":1,"sessions":2,…}`: the audit entry's `detail`.
    public var countsJSON: String {
        "{" + counts.map { "\"\($0.name)\":\($0.count)" }.joined(separator: ",") + "}"
    }
}

/// How much of one user's data an export reads at most; past any bound it says `truncated`.
public struct UserExportLimits: Sendable, Equatable {
    /// Sessions with their rows, newest first.
    public var sessions: Int
    /// Log entries over all those sessions: each session's log oldest first, sessions newest first.
    public var actions: Int
    /// Rows of each other kind (idempotency keys, exposures, exclusions, funnel rows, rollout rows).
    public var rows: Int

    public init(sessions: Int = 1000, actions: Int = 10_000, rows: Int = 10_000) {
        self.sessions = sessions
        self.actions = actions
        self.rows = rows
    }
}

/// One session of an export: its row as it stands now (its head's tree), the first
/// entries of its log, and the Idempotency-Keys it used (not the answers kept under them).
public struct ExportedSession: Sendable, Equatable {
    public var session: SessionRecord
    public var actions: [ActionRecord]
    /// The tree each of `actions` carries (a snapshot, see ``LogSnapshots``), nil for the others.
    public var actionTrees: [[UInt8]?] = []
    /// The session row's own version and tree, which the first of `actions` after it follows:
    /// where a rebuild of the others' handlers and transitions starts.
    public var startVersion = 0
    public var startTree: [UInt8] = []
    /// Its log goes on past `actions` (the export's action bound was reached).
    public var actionsTruncated: Bool
    public var idempotencyKeys: [ExportedIdempotencyKey]

    public init(session: SessionRecord, actions: [ActionRecord], actionsTruncated: Bool, idempotencyKeys: [ExportedIdempotencyKey]) {
        self.session = session
        self.actions = actions
        self.actionsTruncated = actionsTruncated
        self.idempotencyKeys = idempotencyKeys
    }
}

/// An Idempotency-Key a session used: the key, and the status and version of the answer kept.
public struct ExportedIdempotencyKey: Sendable, Equatable {
    public var key: String
    public var status: Int
    public var version: Int
    public var createdAt: String

    public init(key: String, status: Int, version: Int, createdAt: String) {
        self.key = key
        self.status = status
        self.version = version
        self.createdAt = createdAt
    }
}

/// A session placed in an experiment (an exposure) or kept out of it (an exclusion).
public struct ExportedExperimentRow: Sendable, Equatable {
    public var sessionId: String
    public var experiment: String
    public var variant: String
    /// Exposures: the session completed onboarding. Always false for exclusions.
    public var onboarded: Bool
    public var createdAt: String

    public init(sessionId: String, experiment: String, variant: String, onboarded: Bool, createdAt: String) {
        self.sessionId = sessionId
        self.experiment = experiment
        self.variant = variant
        self.onboarded = onboarded
        self.createdAt = createdAt
    }
}

/// A session's guardrail row in a rollout.
public struct ExportedRolloutSession: Sendable, Equatable {
    public var sessionId: String
    public var releaseId: Int
    public var arm: String
    public var marks: GuardrailMarks
    public var createdAt: String

    public init(sessionId: String, releaseId: Int, arm: String, marks: GuardrailMarks, createdAt: String) {
        self.sessionId = sessionId
        self.releaseId = releaseId
        self.arm = arm
        self.marks = marks
        self.createdAt = createdAt
    }
}

/// Everything stored about one user, read in one transaction.
public struct UserExport: Sendable, Equatable {
    public var user: UserRecord?
    public var sessions: [ExportedSession]
    public var exposures: [ExportedExperimentRow]
    public var exclusions: [ExportedExperimentRow]
    /// The features each of the user's sessions in an experiment showed on top: (session, feature).
    public var features: [(sessionId: String, feature: String)]
    public var rolloutSessions: [ExportedRolloutSession]
    /// A bound of `UserExportLimits` was reached: there is more than this.
    public var truncated: Bool

    public init(user: UserRecord? = nil, sessions: [ExportedSession] = [], exposures: [ExportedExperimentRow] = [],
                exclusions: [ExportedExperimentRow] = [], features: [(sessionId: String, feature: String)] = [],
                rolloutSessions: [ExportedRolloutSession] = [], truncated: Bool = false) {
        self.user = user
        self.sessions = sessions
        self.exposures = exposures
        self.exclusions = exclusions
        self.features = features
        self.rolloutSessions = rolloutSessions
        self.truncated = truncated
    }

    /// Nothing at all is stored about the user.
    public var isEmpty: Bool {
        user == nil && sessions.isEmpty && exposures.isEmpty && exclusions.isEmpty && features.isEmpty && rolloutSessions.isEmpty
    }

    public static func == (lhs: UserExport, rhs: UserExport) -> Bool {
        lhs.user == rhs.user && lhs.sessions == rhs.sessions && lhs.exposures == rhs.exposures && lhs.exclusions == rhs.exclusions
            && lhs.features.elementsEqual(rhs.features, by: { $0 == $1 }) && lhs.rolloutSessions == rhs.rolloutSessions
            && lhs.truncated == rhs.truncated
    }
}

/// A user's state (which outlives sessions: onboarding first), and the erasure and export of
/// one user's data, for access and erasure requests (migrations sqlite 0015, postgresql 0012 add
/// the indexes that keep both to the user's own rows). Sessions create users and commits patch
/// their state (``SessionRecordStore``); this role reads, resets, erases and exports it.
///
/// The user's sessions are those whose row names the user, and those deleted earlier that an
/// exposure or exclusion row still names (experiment records outlive sessions); every table
/// keyed by a session is read or emptied for all of them.
///
/// ```swift
/// let erased = try store.eraseUser(id: "u-1", auditSubject: "sha256:…", audit: AuditStamp(credential: "admin"))
/// erased.sessions            // 2; erasing again answers zeros
/// try store.exportUser(id: "u-1", limits: UserExportLimits()).isEmpty   // true
/// ```
public protocol UserDataStore: AnyObject, Sendable {
    /// The user with this id, or nil when no session was ever made for them.
    func user(id: String) throws -> UserRecord?
    /// `user(id:)`, and the definitions' fingerprint (`DefinitionStore.definitionsFingerprint()`)
    /// read in the same round trip where the store can (PostgreSQL), else nil. A new session on a
    /// shared database needs both: the user as other nodes left them, and the definitions as
    /// other nodes changed them.
    func userAndDefinitionsFingerprint(id: String) throws -> (user: UserRecord?, fingerprint: String?)
    /// Removes `key` from the user's state; nil when the user is unknown, else the new state.
    /// With `audit`, appends `user.<key>.reset` (or the stamp's action) to the audit log in the
    /// same transaction, with the user's state revision before and after where the store keeps one.
    func removeUserState(id: String, key: String, audit: AuditStamp?) throws -> UserRecord?

    /// Removes in one transaction the user's row, their sessions and everything keyed by those
    /// sessions (log, idempotency records, stream tickets, funnel rows, rollout guardrail rows)
    /// and their exposures and exclusions; replaces the user id by `auditSubject` in earlier
    /// audit entries about the user; appends `user.erase` with `auditSubject` as its subject
    /// and the counts as its detail. A commit of one of the sessions that comes after it fails
    /// (`CommitError.sessionNotFound`) and writes nothing.
    func eraseUser(id: String, auditSubject: String, audit: AuditStamp) throws -> UserErasure
    /// Everything stored about the user, in one read transaction, within `limits`.
    func exportUser(id: String, limits: UserExportLimits) throws -> UserExport
}

extension UserDataStore {
    /// The user alone: a store of one process reads no fingerprint with it.
    public func userAndDefinitionsFingerprint(id: String) throws -> (user: UserRecord?, fingerprint: String?) {
        (try user(id: id), nil)
    }

    /// Removes user state without an audit entry.
    public func removeUserState(id: String, key: String) throws -> UserRecord? {
        try removeUserState(id: id, key: key, audit: nil)
    }
}

extension AuditAction {
    /// A user's data erased (`DELETE /v1/users/{userId}`); the subject is the id's hash.
    public static let userErase = "user.erase"
}

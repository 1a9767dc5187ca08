// The rollouts role of a store: a release live for a share of new sessions, and its guardrail counts.

/// A rollout as stored: the release it rolls out, where it stands, and what the new side runs.
public struct RolloutRecord: Sendable, Equatable {
    public var releaseId: Int
    /// `rolling-out`, `completed` (reached 100 %: a full activation) or `rolled-back`.
    public var state: String
    /// The share of new sessions put on the release, 0…100.
    public var percentage: Int
    /// The plan as accepted (steps, interval, guardrails), JSON.
    public var plan: String
    /// What the new side runs, `{"flow": version}`, JSON.
    public var flows: String
    /// When the schedule raises the percentage next (a stored time); nil: by hand only.
    public var nextStepAt: String?
    /// The guardrails' last word, in a sentence.
    public var verdict: String?
    public var startedAt: String
    public var updatedAt: String

    public init(releaseId: Int, state: String, percentage: Int, plan: String, flows: String, nextStepAt: String? = nil,
                verdict: String? = nil, startedAt: String, updatedAt: String) {
        self.releaseId = releaseId
        self.state = state
        self.percentage = percentage
        self.plan = plan
        self.flows = flows
        self.nextStepAt = nextStepAt
        self.verdict = verdict
        self.startedAt = startedAt
        self.updatedAt = updatedAt
    }

    public static let rollingOut = "rolling-out"
    public static let completed = "completed"
    public static let rolledBack = "rolled-back"
}

/// What one side of a rollout counts: its sessions and, of those, how many hit a refused
/// action, a dead end, or converted.
public struct GuardrailCounts: Sendable, Equatable {
    public var sessions: Int
    public var refused: Int
    public var deadEnds: Int
    public var conversions: Int

    public init(sessions: Int = 0, refused: Int = 0, deadEnds: Int = 0, conversions: Int = 0) {
        self.sessions = sessions
        self.refused = refused
        self.deadEnds = deadEnds
        self.conversions = conversions
    }
}

/// A session's guardrail outcomes, each only ever set: a mark never clears one.
public struct GuardrailMarks: Sendable, Equatable, OptionSet {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let refused = GuardrailMarks(rawValue: 1)
    public static let deadEnd = GuardrailMarks(rawValue: 2)
    public static let converted = GuardrailMarks(rawValue: 4)
}

/// Rollouts and their sessions' guardrail outcomes (migrations sqlite 0013, postgresql 0010).
///
/// ```swift
/// try store.insertRollout(record)                                  // false: that release has one
/// try store.insertRolloutSession(sessionId: "s_1", releaseId: 3, arm: "new", at: now)
/// try store.markRolloutSession(sessionId: "s_1", .refused)
/// try store.rolloutCounts(releaseId: 3)                            // ["new": GuardrailCounts(…)]
/// ```
public protocol RolloutStore: AnyObject, Sendable {
    /// Stores a new rollout; false (and nothing stored) when release `releaseId` has one already,
    /// or when another rollout is in progress (one at a time, for every node).
    func insertRollout(_ rollout: RolloutRecord) throws -> Bool
    /// The rollout of a release, or nil.
    func rollout(releaseId: Int) throws -> RolloutRecord?
    /// Every rollout, or only those in `state`, newest release first.
    func rollouts(state: String?) throws -> [RolloutRecord]
    /// Moves a rollout to `to` only while it stands at `from` (state and percentage): the
    /// compare-and-set that lets one node, not two, raise or end it. False when it had moved.
    /// With `audit`, a move that happened appends `rollout.raise` (or the stamp's action; the
    /// release id, the percentage before and after) to the audit log in the same transaction.
    func updateRollout(releaseId: Int, from: (state: String, percentage: Int), to: RolloutRecord, audit: AuditStamp?) throws -> Bool
    /// Records a session of a rollout and its side (`new` or `old`); again for the same session
    /// does nothing.
    func insertRolloutSession(sessionId: String, releaseId: Int, arm: String, at: String) throws
    /// Sets `marks` on a session of a rollout; a session in none is left alone.
    func markRolloutSession(sessionId: String, _ marks: GuardrailMarks) throws
    /// Per side of a release's rollout, what its sessions count.
    func rolloutCounts(releaseId: Int) throws -> [String: GuardrailCounts]
}

extension RolloutStore {
    /// A move without an audit entry (ends whose release change is audited, tests).
    public func updateRollout(releaseId: Int, from: (state: String, percentage: Int), to: RolloutRecord) throws -> Bool {
        try updateRollout(releaseId: releaseId, from: from, to: to, audit: nil)
    }
}

// The retention role of a store: the action log and expired sessions removed in small batches.

/// What one retention batch did.
public struct RetentionBatch: Sendable, Equatable {
    /// Rows deleted (action log entries, sessions, or idempotency records).
    public var removed: Int
    /// Action compaction: sessions whose head was folded into their row before their log went
    /// (the row then holds the tree, version, transition, handler and time of that version),
    /// and entries passed over (left until a later snapshot of their session is
    /// old, see `LogSnapshots`; the next batch starts after them).
    /// Session removal: sessions still active whose row time was brought forward to their
    /// newest entry's, so the next batch does not look at them again.
    public var kept: Int
    /// Rows examined: a batch that examined fewer than its limit found no more to do.
    public var examined: Int
    /// Session removal: the ids of the sessions removed (so a server drops them from its cache).
    public var sessionIds: [String]

    public init(removed: Int = 0, kept: Int = 0, examined: Int = 0, sessionIds: [String] = []) {
        self.removed = removed
        self.kept = kept
        self.examined = examined
        self.sessionIds = sessionIds
    }
}

/// Removing what is older than the retention period, in batches of at most `limit` rows, each
/// its own short transaction, so that commits of actions go on between them. Every call is
/// idempotent (a row another node removed meanwhile is simply not there) and keeps what
/// sessions need to go on: a session's newest log entry is folded into its row before it is
/// deleted, so its tree and version numbering continue. Users are never removed.
///
/// Times are stored times (`Timestamp.string`), compared as text (they sort in time order).
public protocol RetentionStore: AnyObject, Sendable {
    /// Deletes up to `limit` action log entries created before `horizon`, oldest first. Before
    /// a session's newest entry goes, its tree, version, transition, handler and time are
    /// copied into the session's row (only ever to a higher version).
    func compactActions(before horizon: String, limit: Int) throws -> RetentionBatch
    /// Deletes up to `limit` sessions whose last activity (the row's time, or its newest log
    /// entry's when newer) is before `horizon`, with their log, idempotency records and stream
    /// tickets. A session found active after all has its row's time brought forward instead.
    /// Experiment exposures, funnel features and rollout outcomes of sessions stay (they are
    /// the reports' summary); so do users.
    func removeSessions(idleBefore horizon: String, limit: Int) throws -> RetentionBatch
    /// Deletes up to `limit` stored `Idempotency-Key` answers recorded before `horizon`.
    func pruneIdempotencyRecords(before horizon: String, limit: Int) throws -> RetentionBatch
}

// The nodes role of a store shared by several nodes: who serves now, and whether each owns sessions.

/// The nodes serving on a database that several nodes share (PostgreSQL), and whether each owns
/// sessions under leases (`SessionLeaseStore`): a node that owns sessions trusts its memory only
/// while no node that takes no leases serves beside it (see `ClusterMembership` in FlowServer).
///
/// ```swift
/// try store.announceNode("http://10.0.0.11:8080#3f9a…", ownsSessions: true)
/// let others = try store.nodesSeen(ownsSessions: false, withinMilliseconds: 5_000)  // [] when alone in its kind
/// ```
public protocol ClusterNodeStore: Sendable {
    /// Says that `node` serves now, owning sessions or not (its row seen now, by the database's
    /// clock); rows not seen for a day go. Committed when it returns, so that a later
    /// `nodesSeen` of any node counts it.
    func announceNode(_ node: String, ownsSessions: Bool) throws
    /// The nodes that own sessions (or, `ownsSessions` false, that do not) seen within the last
    /// `withinMilliseconds`.
    func nodesSeen(ownsSessions: Bool, withinMilliseconds: Int) throws -> [String]
    /// `node` stops serving: its row goes (a node stopping cleanly).
    func withdrawNode(_ node: String) throws
}

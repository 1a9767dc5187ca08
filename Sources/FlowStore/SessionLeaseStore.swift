// The lease role of a store shared by several nodes: which node owns a session now.

/// Session leases on a database that several nodes share (PostgreSQL): one node at a time owns
/// a session, answers its reads from memory while its lease holds, and is the only node whose
/// commits of it apply (each commit names its lease's epoch, `ActionCommit.leaseEpoch`, and
/// writes nothing when the epoch is no longer the session's). A lease is taken over only once it
/// has expired, by the database's clock, so a node that counts its lease from before it asked
/// (`SessionLeases`) stops trusting it before any other node may take it.
///
/// ```swift
/// switch try store.acquireLease(sessionId: id, node: "http://10.0.0.11:8080", milliseconds: 2_000) {
/// case .granted(let epoch, let head): …   // ours until sent + 2 s; the session stands at `head`
/// case .held(let owner, _, let head): …   // another node's: forward writes to `owner`
/// case .missing: …                        // no such session
/// }
/// ```
public protocol SessionLeaseStore: Sendable {
    /// Takes session `sessionId`'s lease for `node`, or renews it when `node` holds it (the epoch
    /// kept), for `milliseconds` from now; or says who holds it. One round trip: the head version
    /// is read after the lease is taken, so it counts every commit made under an earlier epoch.
    func acquireLease(sessionId: String, node: String, milliseconds: Int) throws -> LeaseGrant
    /// Renews `node`'s leases of these sessions that have not expired, for `milliseconds` from
    /// now (never shortened), their epochs kept; returns the sessions renewed with their epochs
    /// (one round trip for them all).
    func renewLeases(node: String, sessionIds: [String], milliseconds: Int) throws -> [String: Int]
    /// Deletes session `sessionId` if its lease is still under `epoch` (the deleting node's):
    /// true when deleted, false when there is no such session, nil when another node has taken
    /// the lease over (nothing is deleted; the owner decides).
    func deleteLeasedSession(id sessionId: String, epoch: Int) throws -> Bool?
    /// Gives up `node`'s leases of these sessions (a node shutting down hands its sessions on at
    /// once instead of after their leases run out).
    func releaseLeases(node: String, sessionIds: [String]) throws
}

/// What asking for a session's lease came to.
public enum LeaseGrant: Sendable, Equatable {
    /// The lease is the asker's, under `epoch`; the session stands at version `head`.
    case granted(epoch: Int, head: Int)
    /// Another node holds it (`owner`, its address, under `epoch`) and it has not expired; the
    /// session stands at version `head`.
    case held(owner: String, epoch: Int, head: Int)
    /// There is no such session.
    case missing
}

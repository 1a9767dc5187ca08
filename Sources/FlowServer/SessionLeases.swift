// This node's session leases on a shared database: which sessions it owns now, and until when it
// may trust that without asking the database.
import FlowStore
import Locking

/// The leases this node holds (see `SessionLeaseStore`), counted on this node's clock from
/// before it asked for them: a lease granted for `duration` is trusted until
/// `sent + duration − margin`, which is before the database lets any other node take it over
/// (the database counts from when it granted it, later than `sent`). A paused process finds on
/// waking that its leases ran out, and asks again before it answers from memory.
///
/// While it holds a session's lease the node answers the session's reads from memory, with no
/// round trip; it renews the lease on a read or write once less than half of it is left. Its
/// commits name the lease's epoch (`ActionCommit.leaseEpoch`), so a commit made after another
/// node took the lease over writes nothing.
///
/// ```swift
/// let leases = SessionLeases(node: "http://10.0.0.11:8080", store: store)
/// if leases.fresh(id) { … }                        // trusted: no round trip
/// switch try leases.acquire(id) { … }            // one round trip
/// ```
final class SessionLeases: Sendable {
    /// This node's address as the other nodes reach it (they forward writes there).
    let node: String
    let store: any SessionLeaseStore
    /// How long a lease lasts, and how much of it is not trusted (clock rates differ a little).
    let duration: Duration
    let margin: Duration
    /// Leases granted, not yet released. Pruned of expired ones as it grows.
    private let held = PThreadMutex<Table>(Table())
    /// Round trips to take or renew a lease, reads answered from memory under one, writes
    /// forwarded (shown at /metrics).
    let counters: ClusterCounters

    private struct Lease {
        var epoch: Int
        /// Trusted until then.
        var until: ContinuousClock.Instant
    }

    private struct Table {
        var leases: [String: Lease] = [:]
        var prunedAt = 0
    }

    init(node: String, store: any SessionLeaseStore, duration: Duration = .seconds(2), margin: Duration = .milliseconds(100),
         counters: ClusterCounters = ClusterCounters()) {
        self.counters = counters
        self.node = node
        self.store = store
        self.duration = duration
        self.margin = margin
    }

    /// True when this node holds session `id`'s lease with more than half of it left: its
    /// cached state is the committed one, and no other node can commit meanwhile.
    func fresh(_ id: String) -> Bool {
        let now = ContinuousClock.now
        return held.withLock { $0.leases[id].map { $0.until - now > duration / 2 } ?? false }
    }

    /// The epoch of session `id`'s lease while this node trusts it, else nil.
    func epoch(_ id: String) -> Int? {
        let now = ContinuousClock.now
        return held.withLock { table in table.leases[id].flatMap { $0.until > now ? $0.epoch : nil } }
    }

    /// Takes or renews session `id`'s lease (one round trip), and keeps it when granted.
    func acquire(_ id: String) throws -> LeaseGrant {
        let sent = ContinuousClock.now
        let grant = try store.acquireLease(sessionId: id, node: node, milliseconds: Int(duration / .milliseconds(1)))
        counters.leaseRequests.add(1, ordering: .relaxed)
        let until = sent + duration - margin
        held.withLock { table in
            switch grant {
            case .granted(let epoch, _):
                table.leases[id] = Lease(epoch: epoch, until: until)
                if table.leases.count > max(1024, 2 * table.prunedAt) {
                    let now = ContinuousClock.now
                    table.leases = table.leases.filter { $0.value.until > now }
                    table.prunedAt = table.leases.count
                }
            case .held, .missing:
                table.leases[id] = nil
            }
        }
        if case .held = grant { counters.leasesHeldElsewhere.add(1, ordering: .relaxed) }
        return grant
    }

    /// Stops trusting session `id`'s lease (a commit under it failed, the session went).
    func forget(_ id: String) {
        _ = held.withLock { $0.leases.removeValue(forKey: id) }
    }

    /// Gives up every lease this node holds (a node shutting down), so other nodes take its
    /// sessions at once rather than when the leases run out. Best effort.
    func releaseAll() {
        let ids = held.withLock { table -> [String] in
            defer { table.leases = [:] }
            return Array(table.leases.keys)
        }
        for start in stride(from: 0, to: ids.count, by: 1000) {
            try? store.releaseLeases(node: node, sessionIds: Array(ids[start..<min(start + 1000, ids.count)]))
        }
    }
}

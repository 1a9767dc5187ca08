// This node's session leases on a shared database: which sessions it owns now, and until when it
// may trust that without asking the database.
import Dispatch
import FlowStore
import Locking
import Synchronization

/// The leases this node holds (see `SessionLeaseStore`), counted on this node's clock from
/// before it asked for them: a lease granted for `duration` is trusted until
/// `sent + duration − margin`, which is before the database lets any other node take it over
/// (the database counts from when it granted it, later than `sent`). A paused process finds on
/// waking that its leases ran out, and asks again before it answers from memory.
///
/// While it holds a session's lease the node answers the session's reads from memory, with no
/// round trip; a read or write once less than half of the lease is left renews it in the
/// background. Its
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
    /// Who holds the leases: the address and this process's own random mark
    /// (`http://10.0.0.11:8080#3f9a…`), so that a node restarted on the same address does not
    /// renew, under the same epoch, a lease its previous process held (whose commits may still
    /// be landing); the address is what comes before `#`.
    let holder: String
    let store: any SessionLeaseStore
    /// How long a lease lasts, and how much of it is not trusted (clock rates differ a little).
    let duration: Duration
    let margin: Duration
    /// Leases granted, not yet released. Pruned of expired ones as it grows.
    private let held = PThreadMutex<Table>(Table())
    /// Until when owned sessions' memory may be trusted at all, in nanoseconds after `started`
    /// (`ClusterMembership`: while no node without leases serves beside this one); `Int.max`
    /// when nothing limits it, −1 when not now.
    private let trustedUntil = Atomic<Int>(Int.max)
    private let started = ContinuousClock.now
    /// Where leases are renewed, off the requests' threads.
    private let renewals = DispatchQueue(label: "fs-lease-renewals")
    /// Round trips to take or renew a lease, reads answered from memory under one, writes
    /// forwarded (shown at /metrics).
    let counters: ClusterCounters

    private struct Lease {
        var epoch: Int
        /// Trusted until then.
        var until: ContinuousClock.Instant
        /// The session's version when the lease was granted: a cached state older than this is
        /// not the committed one (another node committed before this one took the lease), and
        /// only this node's own commits move the version past it while the lease holds.
        var floor: Int
        /// A renewal is on its way.
        var renewing = false
    }

    private struct Table {
        var leases: [String: Lease] = [:]
        var prunedAt = 0
        /// Sessions whose leases are to be renewed, and whether a renewal is on its way.
        var due: [String] = []
        var renewalScheduled = false
    }

    init(node: String, store: any SessionLeaseStore, duration: Duration = .seconds(2), margin: Duration = .milliseconds(100),
         counters: ClusterCounters = ClusterCounters()) {
        self.counters = counters
        self.node = node
        self.holder = node + "#" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        self.store = store
        self.duration = duration
        self.margin = margin
    }

    /// True when this node holds session `id`'s lease and trusts it now (see `owned`).
    func fresh(_ id: String) -> Bool {
        owned(id) != nil
    }

    /// The session's version when this node was granted the lease it holds and trusts now (a
    /// cached state at least this new is the committed one, and no other node can commit
    /// meanwhile), nil when it holds none it trusts. Once less than half of the lease is left, it
    /// is renewed in the background, with the other leases due, so a read of an owned session
    /// never waits for the database.
    func owned(_ id: String) -> Int? {
        let now = ContinuousClock.now
        guard Self.nanoseconds(now - started) < trustedUntil.load(ordering: .relaxed) else { return nil }
        let (floor, renew) = held.withLock { table -> (Int?, Bool) in
            guard var lease = table.leases[id], lease.until > now else { return (nil, false) }
            guard lease.until - now < duration / 2, !lease.renewing else { return (lease.floor, false) }
            lease.renewing = true
            table.leases[id] = lease
            return (lease.floor, true)
        }
        if renew { scheduleRenewal(id) }
        return floor
    }

    /// Trusts owned sessions' memory until `instant` at most (nil: not now), whatever their leases.
    func trustMemory(until instant: ContinuousClock.Instant?) {
        trustedUntil.store(instant.map { Self.nanoseconds($0 - started) } ?? -1, ordering: .relaxed)
    }

    private static func nanoseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
    }

    /// The epoch of session `id`'s lease while this node trusts it, else nil.
    func epoch(_ id: String) -> Int? {
        let now = ContinuousClock.now
        return held.withLock { table in table.leases[id].flatMap { $0.until > now ? $0.epoch : nil } }
    }

    /// Takes or renews session `id`'s lease (one round trip), and keeps it when granted.
    func acquire(_ id: String) throws -> LeaseGrant {
        let sent = ContinuousClock.now
        let grant = try store.acquireLease(sessionId: id, node: holder, milliseconds: Int(duration / .milliseconds(1)))
        counters.leaseRequests.add(1, ordering: .relaxed)
        let until = sent + duration - margin
        held.withLock { table in
            switch grant {
            case .granted(let epoch, let head):
                table.leases[id] = Lease(epoch: epoch, until: until, floor: head)
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

    /// Adds session `id` to the next renewal: every lease due then is renewed in one round trip.
    private func scheduleRenewal(_ id: String) {
        let schedule = held.withLock { table -> Bool in
            table.due.append(id)
            defer { table.renewalScheduled = true }
            return !table.renewalScheduled
        }
        guard schedule else { return }
        // An eighth of a lease later, with every other lease that fell due meanwhile: a few round
        // trips a second renew all of a busy node's sessions, each before it has a quarter left.
        renewals.asyncAfter(deadline: .now() + .nanoseconds(Int(duration / .nanoseconds(1)) / 8)) { [self] in
            while true {
                let due = held.withLock { table -> [String] in
                    let batch = Array(table.due.prefix(1000))
                    table.due.removeFirst(batch.count)
                    if batch.isEmpty { table.renewalScheduled = false }
                    return batch
                }
                guard !due.isEmpty else { return }
                renew(due)
            }
        }
    }

    private func renew(_ ids: [String]) {
        let sent = ContinuousClock.now
        let renewed: [String: Int]
        do {
            renewed = try store.renewLeases(node: holder, sessionIds: ids, milliseconds: Int(duration / .milliseconds(1)))
            counters.leaseRenewals.add(1, ordering: .relaxed)
        } catch {
            // The next use of each tries again (and, once the lease ran out, asks for it anew).
            held.withLock { table in for id in ids { table.leases[id]?.renewing = false } }
            return
        }
        let until = sent + duration - margin
        held.withLock { table in
            for id in ids {
                guard var lease = table.leases[id] else { continue }
                if renewed[id] == lease.epoch {
                    lease.until = max(until, lease.until)
                    lease.renewing = false
                    table.leases[id] = lease
                } else if renewed[id] == nil {
                    table.leases[id] = nil  // taken over, or the session went
                }
            }
        }
    }

    /// The address of a lease's holder, as the other nodes reach it.
    static func address(of holder: String) -> String {
        holder.firstIndex(of: "#").map { String(holder[..<$0]) } ?? holder
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
            try? store.releaseLeases(node: holder, sessionIds: Array(ids[start..<min(start + 1000, ids.count)]))
        }
    }
}

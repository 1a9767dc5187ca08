// What an operator of several nodes watches: how often the cache answers, and how often it
// had to catch up with the database.
import Synchronization

/// Counters of the session cache and of the checks a node makes against a shared database,
/// exposed at `/metrics`.
public final class ClusterCounters: Sendable {
    /// A request found its session cached (and, on a shared database, current).
    public let cacheHits = Atomic<Int>(0)
    /// A session read from the database because it was not cached.
    public let sessionLoads = Atomic<Int>(0)
    /// Reads checked against the database's head version (shared database only).
    public let headChecks = Atomic<Int>(0)
    /// Cached sessions found behind the database (another node wrote them) and read again.
    public let staleReloads = Atomic<Int>(0)
    /// Commits refused because the session had moved, applied again on the newer state.
    public let conflictsRetried = Atomic<Int>(0)
    /// Refusals (409, 412, 422) judged again on the stored state because the cache was behind.
    public let refusalsRechecked = Atomic<Int>(0)
    /// Times the definitions were read again because another node changed them.
    public let definitionReloads = Atomic<Int>(0)
    /// Round trips that asked for a session's lease, on a request's path (a node that owns sessions).
    public let leaseRequests = Atomic<Int>(0)
    /// Round trips that renewed the leases due, in the background (one for many sessions).
    public let leaseRenewals = Atomic<Int>(0)
    /// Lease requests answered that another node holds the lease.
    public let leasesHeldElsewhere = Atomic<Int>(0)
    /// Reads answered from memory under this node's lease: no round trip.
    public let ownedReads = Atomic<Int>(0)
    /// Writes forwarded to the node that owns their session.
    public let forwardedWrites = Atomic<Int>(0)
    /// Idempotency keys looked up in the database before their action was judged.
    public let keyLookups = Atomic<Int>(0)
    /// Keyed actions judged without a lookup: this node knows the key was never committed on
    /// the session (see `UsedKeys`).
    public let keyLookupsSpared = Atomic<Int>(0)
    /// Replayed keys whose answer, the state of an older version than the session's, was made
    /// again from the log (see `SessionService.rebuiltReplay`).
    public let replaysRebuilt = Atomic<Int>(0)
    /// Replayed keys whose version could not be made again (its log compacted, damaged): they
    /// were answered with the session's current state.
    public let replaysNotRebuilt = Atomic<Int>(0)

    public init() {}
}

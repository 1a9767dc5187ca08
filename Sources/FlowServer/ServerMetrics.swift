// Request counters and latency histograms, exposed in Prometheus text format at /metrics.
import FlowStore
import Locking
import Synchronization

/// The server's metrics: requests by route, method and status, and a latency histogram by route,
/// written as Prometheus text (format 0.0.4) by `exposition()`.
///
/// ```swift
/// let metrics = ServerMetrics()
/// metrics.prepare(routes: ["/healthz"])
/// metrics.record(route: "/healthz", method: "GET", status: 200, nanoseconds: 120_000)
/// String(decoding: metrics.exposition(), as: UTF8.self)
/// // …flowstack_http_requests_total{route="/healthz",method="GET",status="200"} 1
/// ```
/// Recording takes no lock: every request of every thread records here, and with more threads
/// than cores a lock on this path became a convoy (Swift's `Mutex` on Linux is a
/// priority-inheritance futex, which hands the lock from thread to thread through the
/// scheduler): at 16 threads the server spent 70% of its time here and served a quarter of the
/// requests. Each route's figures are atomic counters in a table made once, by `prepare`, before
/// the server starts; a route or status outside that table is counted through a lock instead.
public final class ServerMetrics: Sendable {
    /// Methods are labelled from a closed set, so clients cannot grow the metrics with made-up ones.
    static let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "OTHER"]
    /// The statuses counted without a lock; others go through `overflow`.
    static let statuses = [200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 408, 409, 411, 412,
                           413, 414, 415, 416, 422, 428, 429, 431, 500, 501, 503, 505]
    /// Histogram bucket bounds in nanoseconds, and as the `le` label shows them (seconds).
    static let bucketBounds: [Int64] = [50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
                                        10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000,
                                        500_000_000, 1_000_000_000]
    static let bucketLabels = ["0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
                               "0.025", "0.05", "0.1", "0.25", "0.5", "1.0"]
    /// Each status's place in `statuses`, at `status - 100` for 100…599 (-1: not counted without
    /// a lock): read on every request, so an array, not a dictionary hashing the status.
    private static let statusIndex: [Int] = (100..<600).map { statuses.firstIndex(of: $0) ?? -1 }

    /// The routes known in advance, set once by `prepare` (holding one reference, given back in
    /// `deinit`), then only read. Not an `AtomicLazyReference`: its `load()` is not specialized
    /// across the module boundary, and cost every request 650 instructions of generic
    /// `Unmanaged` metadata and `Optional.map` (callgrind); this is an atomic load and a retain.
    private let prepared = Atomic<Unmanaged<PreparedRoutes>?>(nil)
    /// Routes not prepared, and statuses outside `statuses`: counted under a lock (rare).
    private let overflow = Mutex<Overflow>(Overflow())

    private struct Overflow {
        var routes: [String: RouteFigures] = [:]
        var order: [RouteFigures] = []
        var counts: [CounterKey: Int] = [:]
    }

    private struct CounterKey: Hashable {
        let route: String
        let method: Int
        let status: Int
    }

    public init() {}

    /// Makes the lock-free table for these route patterns (and `unmatched`). Call it once, before
    /// any request is recorded; later calls do nothing.
    public func prepare(routes: [String]) {
        guard preparedRoutes == nil else { return }
        var byPattern: [String: RouteFigures] = [:]
        var order: [RouteFigures] = []
        var byRoute: [RouteFigures] = []
        for pattern in routes + ["unmatched"] {
            let figures = byPattern[pattern] ?? RouteFigures(pattern: pattern)
            if byPattern[pattern] == nil {
                byPattern[pattern] = figures
                order.append(figures)
            }
            byRoute.append(figures)  // one per route given (and `unmatched` last, never indexed)
        }
        let routes = Unmanaged.passRetained(PreparedRoutes(byPattern: byPattern, byRoute: byRoute, order: order))
        if !prepared.compareExchange(expected: nil, desired: routes, ordering: .acquiringAndReleasing).exchanged {
            routes.release()  // another call prepared them first
        }
    }

    /// The table `prepare` made, nil before.
    private var preparedRoutes: PreparedRoutes? {
        prepared.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    deinit {
        prepared.load(ordering: .acquiring)?.release()
    }

    /// Counts one answered request and its latency under its route pattern (`unmatched` for 404s).
    /// `index`, when given, is the route's place in the list `prepare` was given (whose pattern is
    /// `route`): its figures are found there, without hashing the pattern.
    public func record(route: String, index: Int? = nil, method: String, status: Int, nanoseconds: Int64) {
        let methodIndex = Self.methods.firstIndex(of: method) ?? Self.methods.count - 1
        let prepared = preparedRoutes
        // The pattern is compared too (the same string's storage: one comparison of its bits), so
        // an index from another list can only cost the hash, never count under another route.
        let figures = if let index, let prepared, prepared.byRoute.indices.contains(index), prepared.byRoute[index].pattern == route {
            prepared.byRoute[index]
        } else {
            prepared?.byPattern[route] ?? overflowFigures(route)
        }
        figures.observe(nanoseconds)
        if (100..<600).contains(status), case let statusIndex = Self.statusIndex[status - 100], statusIndex >= 0 {
            figures.count(method: methodIndex, status: statusIndex)
        } else {
            overflow.withLock { $0.counts[CounterKey(route: route, method: methodIndex, status: status), default: 0] += 1 }
        }
    }

    private func overflowFigures(_ route: String) -> RouteFigures {
        overflow.withLock { overflow in
            if let figures = overflow.routes[route] { return figures }
            let figures = RouteFigures(pattern: route)
            overflow.routes[route] = figures
            overflow.order.append(figures)
            return figures
        }
    }

    /// The session cache's and the cluster checks' counters.
    public let cluster = ClusterCounters()
    /// The event streams' counters.
    public let events = EventCounters()
    /// What retention removed, and the sessions refused as expired.
    public let retention = RetentionCounters()
    /// The store's own counters (round trips, errors, commit batches), set once the store is known.
    private let storeCounters = AtomicLazyReference<StoreCounters>()
    /// The bounded in-memory tables shown as `flowstack_cache_*` (see `ServerMetrics+caches.swift`).
    let caches = Mutex<[(name: String, figures: @Sendable () -> CacheFigures)]>([])

    /// Shows `counters` (the store's) at `/metrics` from now on.
    public func attach(_ counters: StoreCounters) {
        _ = storeCounters.storeIfNil(counters)
    }

    /// The Prometheus text exposition of every metric with at least one request, then the
    /// cache's, the cluster checks' and the store's counters.
    public func exposition() -> [UInt8] {
        var out = requestExposition()
        let cluster = self.cluster
        var counters: [(name: String, help: String, value: Int)] = [
            ("flowstack_session_cache_hits_total", "Requests that found their session cached and current.",
             cluster.cacheHits.load(ordering: .relaxed)),
            ("flowstack_session_loads_total", "Sessions read from the database because they were not cached.",
             cluster.sessionLoads.load(ordering: .relaxed)),
            ("flowstack_session_head_checks_total", "Cached sessions checked against the shared database's head version.",
             cluster.headChecks.load(ordering: .relaxed)),
            ("flowstack_session_stale_reloads_total", "Cached sessions found behind the database (another node wrote them) and read again.",
             cluster.staleReloads.load(ordering: .relaxed)),
            ("flowstack_version_conflicts_retried_total", "Commits refused because the session moved, applied again on the newer state.",
             cluster.conflictsRetried.load(ordering: .relaxed)),
            ("flowstack_refusals_rechecked_total", "Refusals judged again on the stored state because the cache was behind.",
             cluster.refusalsRechecked.load(ordering: .relaxed)),
            ("flowstack_definition_reloads_total", "Times the definitions were read again after another node changed them.",
             cluster.definitionReloads.load(ordering: .relaxed)),
            ("flowstack_lease_requests_total", "Round trips on a request's path that asked for a session's lease (took, renewed or found it held).",
             cluster.leaseRequests.load(ordering: .relaxed)),
            ("flowstack_lease_renewals_total", "Round trips that renewed this node's leases due, in the background (one for many sessions).",
             cluster.leaseRenewals.load(ordering: .relaxed)),
            ("flowstack_leases_held_elsewhere_total", "Lease requests answered that another node holds the session's lease.",
             cluster.leasesHeldElsewhere.load(ordering: .relaxed)),
            ("flowstack_owned_reads_total", "Reads answered from memory under this node's lease of the session (no round trip).",
             cluster.ownedReads.load(ordering: .relaxed)),
            ("flowstack_forwarded_writes_total", "Writes forwarded to the node that owns their session.",
             cluster.forwardedWrites.load(ordering: .relaxed)),
            ("flowstack_idempotency_lookups_total", "Idempotency keys looked up in the database before their action was judged.",
             cluster.keyLookups.load(ordering: .relaxed)),
            ("flowstack_idempotency_lookups_spared_total", "Keyed actions judged without a lookup: the session's filter of used keys says the key was never committed.",
             cluster.keyLookupsSpared.load(ordering: .relaxed)),
            ("flowstack_idempotency_replays_rebuilt_total", "Replayed keys whose answer, an older version's state, was made again from the log.",
             cluster.replaysRebuilt.load(ordering: .relaxed)),
            ("flowstack_idempotency_replays_not_rebuilt_total", "Replayed keys whose version could not be made again from the log, answered with the current state.",
             cluster.replaysNotRebuilt.load(ordering: .relaxed)),
        ]
        counters += [
            ("flowstack_event_streams_opened_total", "Event streams opened (GET /v1/sessions/{id}/events).",
             events.opened.load(ordering: .relaxed)),
            ("flowstack_events_sent_total", "State events queued to streams (a slow client's unsent one may be replaced by a newer).",
             events.events.load(ordering: .relaxed)),
            ("flowstack_event_polls_total", "Head-version checks of streamed sessions on a shared database (one query each).",
             events.polls.load(ordering: .relaxed)),
        ]
        counters += [
            ("flowstack_retention_actions_removed_total", "Action log entries older than --retention removed.",
             retention.actionsRemoved.load(ordering: .relaxed)),
            ("flowstack_retention_sessions_removed_total", "Sessions removed after being idle for --session-idle plus --retention.",
             retention.sessionsRemoved.load(ordering: .relaxed)),
            ("flowstack_retention_idempotency_removed_total", "Stored Idempotency-Key answers older than --retention removed.",
             retention.idempotencyRemoved.load(ordering: .relaxed)),
            ("flowstack_retention_sessions_expired_total", "Requests refused with session-expired (idle for longer than --session-idle).",
             retention.sessionsExpired.load(ordering: .relaxed)),
            ("flowstack_retention_runs_total", "Retention runs completed.", retention.runs.load(ordering: .relaxed)),
            ("flowstack_retention_failed_runs_total", "Retention runs stopped by a database error (the next run tries again).",
             retention.failedRuns.load(ordering: .relaxed)),
        ]
        if let store = storeCounters.load() {
            counters += [
                ("flowstack_db_round_trips_total", "Round trips to the database (each carries one or more statements).",
                 store.roundTrips.load(ordering: .relaxed)),
                ("flowstack_db_errors_total", "Database calls that failed (unreachable, timed out, or refused).",
                 store.errors.load(ordering: .relaxed)),
                ("flowstack_db_commit_batches_total", "Group-commit transactions, one round trip each.",
                 store.commitBatches.load(ordering: .relaxed)),
                ("flowstack_db_committed_actions_total", "Actions written by group commit (divided by the batches: actions per round trip).",
                 store.committedActions.load(ordering: .relaxed)),
            ]
        }
        for counter in counters {
            out.append(contentsOf: "# HELP \(counter.name) \(counter.help)\n# TYPE \(counter.name) counter\n\(counter.name) \(counter.value)\n".utf8)
        }
        let lastRun = ServerMetrics.seconds(retention.lastRunMicroseconds.load(ordering: .relaxed) * 1000)
        out.append(contentsOf: "# HELP flowstack_retention_last_run_seconds How long the last retention run took.\n# TYPE flowstack_retention_last_run_seconds gauge\nflowstack_retention_last_run_seconds \(lastRun)\n".utf8)
        let open = events.open.load(ordering: .relaxed)
        out.append(contentsOf: "# HELP flowstack_event_streams_open Event streams open now.\n# TYPE flowstack_event_streams_open gauge\nflowstack_event_streams_open \(open)\n".utf8)
        appendCaches(to: &out)
        return out
    }

    private func requestExposition() -> [UInt8] {
        let (extraRoutes, extraCounts) = overflow.withLock { ($0.order, $0.counts) }
        let routes = (preparedRoutes?.order ?? []) + extraRoutes
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        out.append(contentsOf: "# TYPE flowstack_http_requests_total counter\n".utf8)
        for figures in routes {
            for method in Self.methods.indices {
                for status in Self.statuses.indices {
                    let count = figures.requests(method: method, status: status)
                    if count > 0 { Self.appendCounter(figures.pattern, method, Self.statuses[status], count, to: &out) }
                }
            }
        }
        for (key, count) in extraCounts.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            Self.appendCounter(key.route, key.method, key.status, count, to: &out)
        }
        out.append(contentsOf: "# TYPE flowstack_http_request_duration_seconds histogram\n".utf8)
        for figures in routes {
            let buckets = figures.bucketCounts()
            let total = buckets.reduce(0, +)
            guard total > 0 else { continue }
            let label = Self.escape(figures.pattern)
            var cumulative = 0
            for (index, bound) in Self.bucketLabels.enumerated() {
                cumulative += buckets[index]
                out.append(contentsOf: "flowstack_http_request_duration_seconds_bucket{route=\"\(label)\",le=\"\(bound)\"} \(cumulative)\n".utf8)
            }
            out.append(contentsOf: "flowstack_http_request_duration_seconds_bucket{route=\"\(label)\",le=\"+Inf\"} \(total)\n".utf8)
            out.append(contentsOf: "flowstack_http_request_duration_seconds_sum{route=\"\(label)\"} \(Self.seconds(figures.totalNanoseconds))\n".utf8)
            out.append(contentsOf: "flowstack_http_request_duration_seconds_count{route=\"\(label)\"} \(total)\n".utf8)
        }
        return out
    }

    private static func appendCounter(_ route: String, _ method: Int, _ status: Int, _ count: Int, to out: inout [UInt8]) {
        out.append(contentsOf: "flowstack_http_requests_total{route=\"\(escape(route))\",method=\"\(methods[method])\",status=\"\(status)\"} \(count)\n".utf8)
    }

    /// A label value as Prometheus text wants it: backslash, quote and newline escaped.
    static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }) else {
            return value
        }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Nanoseconds as decimal seconds, without trailing zeros (`0.000360878`).
    static func seconds(_ nanoseconds: Int) -> String {
        let whole = nanoseconds / 1_000_000_000
        var fraction = String(nanoseconds % 1_000_000_000)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole).0" : "\(whole).\(fraction)"
    }
}

/// The lock-free table of `ServerMetrics`: made once, never changed.
final class PreparedRoutes: Sendable {
    let byPattern: [String: RouteFigures]
    /// The figures of each route `prepare` was given, in its order (routes of one pattern share them).
    let byRoute: [RouteFigures]
    /// The order routes are shown in.
    let order: [RouteFigures]

    init(byPattern: [String: RouteFigures], byRoute: [RouteFigures], order: [RouteFigures]) {
        self.byPattern = byPattern
        self.byRoute = byRoute
        self.order = order
    }
}

/// One route's counters: requests by method and status, latencies by bucket. Atomic cells in
/// one allocation, made once and never resized.
final class RouteFigures: Sendable {
    let pattern: String
    private static let requestCells = ServerMetrics.methods.count * ServerMetrics.statuses.count
    private static let bucketCells = ServerMetrics.bucketBounds.count + 1
    /// Requests (method × status), then buckets (one more for above the last bound), then the sum.
    nonisolated(unsafe) private let cells: UnsafeMutablePointer<Atomic<Int>>
    private static let cellCount = requestCells + bucketCells + 1

    init(pattern: String) {
        self.pattern = pattern
        cells = .allocate(capacity: Self.cellCount)
        for index in 0..<Self.cellCount { (cells + index).initialize(to: Atomic<Int>(0)) }
    }

    deinit {
        cells.deinitialize(count: Self.cellCount)
        cells.deallocate()
    }

    func count(method: Int, status: Int) {
        cells[method * ServerMetrics.statuses.count + status].add(1, ordering: .relaxed)
    }

    func requests(method: Int, status: Int) -> Int {
        cells[method * ServerMetrics.statuses.count + status].load(ordering: .relaxed)
    }

    func observe(_ nanoseconds: Int64) {
        let bounds = ServerMetrics.bucketBounds
        var bucket = bounds.count
        for (index, bound) in bounds.enumerated() where nanoseconds <= bound {
            bucket = index
            break
        }
        cells[Self.requestCells + bucket].add(1, ordering: .relaxed)
        cells[Self.requestCells + Self.bucketCells].add(Int(max(0, nanoseconds)), ordering: .relaxed)
    }

    /// Requests per bucket (not cumulative), the last one above every bound.
    func bucketCounts() -> [Int] {
        (0..<Self.bucketCells).map { cells[Self.requestCells + $0].load(ordering: .relaxed) }
    }

    var totalNanoseconds: Int {
        cells[Self.requestCells + Self.bucketCells].load(ordering: .relaxed)
    }
}

// Failover safety on a multi-host URL: refuse a split brain, report commits that do not finish.
import CPostgres
import FlowStore
import Foundation
import Locking

/// Watches the hosts of a multi-host URL (`postgresql://u@h1,h2,h3/db?target_session_attrs=read-write`)
/// so that a node never writes to, or reads from, the wrong database after a failover.
///
/// libpq takes the first host that accepts writes. After a failover, a former primary started
/// again as it was also accepts writes, and when it comes first in the URL a node that connects
/// then serves the database as it stood before the failover. So the guard asks every host
/// whether it is in recovery and which timeline it is on, and refuses (every database call of
/// the node fails 503, `/healthz` says why) when
///   - two hosts or more accept writes (a split brain: picking one is a coin toss), or
///   - the host that accepts writes is on an older timeline than another host (a former
///     primary, whose history ends before the promotion of a newer one).
/// Otherwise the writable host is the one the node's connections must reach: a connection the
/// pool opens elsewhere starts a check at once (at connect), and a check runs every
/// `interval` on one open connection per host (a query each: the cost of the periodic check).
/// Hosts that do not answer are left out: a dead former primary is the normal failover.
final class FailoverGuard: @unchecked Sendable {
    // @unchecked: `connections` is touched only by `check()`, serialized by `checking`.
    /// Between two periodic checks.
    static let interval: Duration = .seconds(2)
    /// How long one host may take to connect and answer in a check.
    static let hostTimeout: Duration = .seconds(1)
    /// A connection-time check within this long of the last one reuses its verdict.
    static let recheckAfter: Duration = .milliseconds(200)

    struct HostState: Equatable {
        let endpoint: String
        let writable: Bool
        let timeline: Int?
    }

    enum Verdict: Equatable {
        case unchecked
        /// The one writable host (nil when no host answered as writable).
        case writer(String?)
        case refused(String)
    }

    private struct State {
        var verdict = Verdict.unchecked
        var checkedAt: ContinuousClock.Instant?
        var stopped = false
    }

    /// One libpq connection string per host, the URL's other parameters kept.
    let targets: [String]
    private let state = PThreadMutex(State())
    private let checking = PThreadMutex<Void>(())
    private var connections: [PGConnection?]
    private let wake = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)
    private var started = false

    /// Nil when the URL names fewer than two hosts: there is nothing to compare.
    init?(uri: String) {
        let targets = Self.perHostConnectionStrings(uri)
        guard targets.count >= 2 else { return nil }
        self.targets = targets
        connections = Array(repeating: nil, count: targets.count)
    }

    /// Starts the periodic check on a thread of its own (`fs-pg-failover`).
    func start() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in
            Thread.current.name = "fs-pg-failover"
            while !state.withLock({ $0.stopped }) {
                _ = check()
                _ = wake.wait(timeout: .now() + .milliseconds(Int(Self.interval.components.seconds * 1000)))
            }
            stoppedSignal.signal()
        }
        thread.start()
    }

    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first, started else { return }
        wake.signal()
        stoppedSignal.wait()
    }

    /// Why the node must not use the database now, or nil.
    func refusal() -> String? {
        if case .refused(let reason) = state.withLock({ $0.verdict }) { reason } else { nil }
    }

    /// Whether a connection to `endpoint` (`host:port`) may be used: nil when it reaches the
    /// one writable host, else why not. Checks the hosts first when the last verdict does not
    /// already say so (a new writer after a failover, or the first connection).
    func admit(endpoint: String) -> String? {
        let (verdict, checkedAt) = state.withLock { ($0.verdict, $0.checkedAt) }
        if verdict == .writer(endpoint) { return nil }
        var current = verdict
        if checkedAt.map({ $0.duration(to: .now) > Self.recheckAfter }) ?? true {
            current = check()
        }
        switch current {
        case .writer(let writer?) where writer == endpoint: return nil
        case .refused(let reason): return reason
        case .writer(let other?):
            return "connected to \(endpoint), but the host that accepts writes is \(other): not using it"
        case .writer(nil), .unchecked:
            return "connected to \(endpoint), but no host of the URL answered as accepting writes"
        }
    }

    /// Asks every host, decides, and remembers the verdict.
    @discardableResult
    func check() -> Verdict {
        checking.withLock { _ in
            var hosts: [HostState] = []
            for index in targets.indices {
                if let host = probe(index) { hosts.append(host) }
            }
            let verdict = Self.decide(hosts)
            state.withLock { state in
                state.verdict = verdict
                state.checkedAt = .now
            }
            return verdict
        }
    }

    /// The verdict on what the hosts that answered said (pure, for tests).
    static func decide(_ hosts: [HostState]) -> Verdict {
        func named(_ host: HostState) -> String {
            host.endpoint + (host.timeline.map { " (timeline \($0))" } ?? "")
        }
        let writable = hosts.filter(\.writable)
        if writable.count >= 2 {
            return .refused("\(writable.count) database hosts accept writes: \(writable.map(named).joined(separator: ", ")). "
                + "One is a former primary started again after a failover (a split brain); this node uses neither "
                + "until only one accepts writes. Stop the stale one and make it a standby of the newest "
                + "(docs/operations.md, \"After a failover\").")
        }
        if let writer = writable.first, let timeline = writer.timeline,
           let newer = hosts.first(where: { ($0.timeline ?? 0) > timeline }) {
            return .refused("the host that accepts writes, \(named(writer)), is on an older timeline than \(named(newer)): "
                + "it is a former primary whose history ends before a failover; this node does not use it. Stop it and "
                + "make it a standby of the newest primary (docs/operations.md, \"After a failover\").")
        }
        return .writer(writable.first?.endpoint)
    }

    /// What host `index` says, or nil when it does not answer within `hostTimeout`.
    private func probe(_ index: Int) -> HostState? {
        let deadline = ContinuousClock.now + Self.hostTimeout
        do throws(PGError) {
            let connection: PGConnection
            if let open = connections[index], !open.broken {
                connection = open
            } else {
                connections[index] = nil
                connection = try PGConnection.connect(uri: targets[index], setup: [], deadline: deadline)
                connections[index] = connection
            }
            // A primary's timeline is its current WAL file's; a standby's, the one it receives
            // (or, when not streaming, its last restartpoint's).
            let outcomes = try connection.run([PGStatement("""
                SELECT pg_is_in_recovery(),
                       CASE WHEN pg_is_in_recovery()
                            THEN COALESCE((SELECT received_tli FROM pg_stat_wal_receiver),
                                          (SELECT timeline_id FROM pg_control_checkpoint()))
                            ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int
                       END
                """)], deadline: deadline)
            if let rows = outcomes.first?.rows, rows.count == 1 {
                return HostState(endpoint: connection.endpoint, writable: !(try rows.boolean(0, 0)), timeline: try rows.integer(0, 1))
            }
            // Not allowed to read the timeline (a restricted role): recovery alone.
            let fallback = try connection.run([PGStatement("SELECT pg_is_in_recovery()")], deadline: deadline)
            guard let rows = fallback.first?.rows, rows.count == 1 else { return nil }
            return HostState(endpoint: connection.endpoint, writable: !(try rows.boolean(0, 0)), timeline: nil)
        } catch {
            connections[index] = nil
            return nil
        }
    }

    /// One libpq `keyword='value'` connection string per host of `uri`, with the URL's other
    /// parameters, for any server role (`target_session_attrs` dropped). Empty when libpq cannot
    /// parse the URL.
    static func perHostConnectionStrings(_ uri: String) -> [String] {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &error) else {
            if let error { PQfreemem(error) }
            return []
        }
        defer { PQconninfoFree(options) }
        var common: [(String, String)] = []
        var hosts: [String] = [], hostaddrs: [String] = [], ports: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if let value = option.pointee.val.map({ String(cString: $0) }) {
                switch name {
                case "host": hosts = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                case "hostaddr": hostaddrs = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                case "port": ports = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                case "target_session_attrs", "load_balance_hosts", "connect_timeout": break
                default: common.append((name, value))
                }
            }
            option += 1
        }
        let count = max(hosts.count, hostaddrs.count)
        guard count >= 2 else { return [] }
        func quoted(_ value: String) -> String {
            "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        return (0..<count).map { index in
            var pairs = common
            if index < hosts.count, !hosts[index].isEmpty { pairs.append(("host", hosts[index])) }
            if index < hostaddrs.count, !hostaddrs[index].isEmpty { pairs.append(("hostaddr", hostaddrs[index])) }
            let port = ports.count == 1 ? ports[0] : (index < ports.count ? ports[index] : "")
            if !port.isEmpty { pairs.append(("port", port)) }
            return pairs.map { "\($0.0)=\(quoted($0.1))" }.joined(separator: " ")
        }
    }
}

/// Notices commits that do not finish while the database otherwise answers: a synchronous
/// standby that is down holds every `COMMIT` on the primary, yet `SELECT`s (and so a plain
/// health check) still work. A write sent and not answered within its deadline marks the
/// store *stalled*; a write committed clears it. While stalled, `/healthz` runs a test commit
/// (at most once a second, 1 s deadline) and reports 503 with the reason until one finishes.
final class CommitWatch: Sendable {
    private struct State {
        var stalledSince: ContinuousClock.Instant?
        var lastProbe: ContinuousClock.Instant?
        var lastProbeFinished = false
    }

    static let probeTimeout: Duration = .seconds(1)
    static let probeEvery: Duration = .seconds(1)
    private let state = PThreadMutex(State())

    /// Records what one write batch came to, and whether it came before the batch's deadline.
    func record(_ results: [Result<Void, any Error>], beforeDeadline: Bool = true) {
        // Only a commit that wrote something and finished in time proves commits finish: a
        // refused action (a version conflict) commits a transaction that wrote nothing, which
        // never waits for a standby; and a COMMIT whose wait for a synchronous standby is
        // cancelled at the deadline still answers success (committed locally, maybe not
        // replicated), which is a stuck commit, not a finished one.
        var unanswered = false, answered = false
        for result in results {
            switch result {
            case .success: if beforeDeadline { answered = true } else { unanswered = true }
            case .failure(let error): if case StoreError.outcomeUnknown = error { unanswered = true }
            }
        }
        state.withLock { state in
            if answered { state.stalledSince = nil } else if unanswered, state.stalledSince == nil { state.stalledSince = .now }
        }
    }

    /// Why commits are stuck, or nil; `probe` runs a test commit and says whether it finished
    /// (nil when it could not be sent, which leaves the store stalled).
    func problem(probe: () -> Bool?) -> String? {
        let (since, due, lastFinished) = state.withLock { state -> (ContinuousClock.Instant?, Bool, Bool) in
            guard let since = state.stalledSince else { return (nil, false, true) }
            let due = state.lastProbe.map { $0.duration(to: .now) >= Self.probeEvery } ?? true
            if due { state.lastProbe = .now }
            return (since, due, state.lastProbeFinished)
        }
        guard let since else { return nil }
        // A probe that could not be sent proves nothing either way (the pool may be reconnecting
        // after the stuck commit's deadline broke its connection): still stalled, as only a
        // finished commit clears it; answering 200 then would flap between 200 and 503.
        let finished = (due ? probe() : lastFinished) ?? false
        state.withLock { state in
            state.lastProbeFinished = finished
            if finished { state.stalledSince = nil }
        }
        if finished { return nil }
        let seconds = Double(since.duration(to: .now).components.seconds)
            + Double(since.duration(to: .now).components.attoseconds) / 1e18
        return "Commits do not finish: the database accepts connections, but a write got no answer within its deadline "
            + "(the first \(String(format: "%.1f", seconds)) s ago) and a test commit did not finish within "
            + "\(Self.probeTimeout.components.seconds) s (a synchronous standby down or far behind? docs/operations.md, \"Synchronous standbys\")."
    }
}

extension PostgresStore {
    /// Why `/healthz` must answer 503 although the database answers queries: a split brain
    /// among the URL's hosts, or commits that do not finish. Nil when neither.
    public func healthProblem() -> String? {
        if let reason = failover?.refusal() {
            return "This node refuses to use the database: \(reason)"
        }
        return commitWatch.problem { [pool] in
            let deadline = ContinuousClock.now + CommitWatch.probeTimeout
            // The COMMIT of a transaction that wrote WAL waits for the synchronous standbys as an
            // action's does. One that only took a transaction id (`SELECT txid_current()`) writes
            // no WAL before its commit record and does not wait at all, so it would report
            // commits finishing while every write is stuck: a temporary table, dropped at commit,
            // writes catalog WAL and changes no table of ours.
            let statements = [PGStatement("BEGIN"),
                              PGStatement("CREATE TEMPORARY TABLE flowstack_commit_probe (probe int) ON COMMIT DROP"),
                              PGStatement("COMMIT")]
            do throws(PGError) {
                let outcomes = try pool.withConnection(deadline: deadline) { connection throws(PGError) in
                    try connection.runTransaction(statements, deadline: deadline)
                }
                // A COMMIT whose wait for a synchronous standby is cancelled at the deadline
                // still answers success (with a warning: committed locally, maybe not
                // replicated): only one that finished before the deadline proves commits finish.
                return outcomes.allSatisfy { $0.rows != nil } && ContinuousClock.now < deadline - .milliseconds(50)
            } catch {
                return error.unsent ? nil : false  // not sent: unreachable, not stuck
            }
        }
    }
}

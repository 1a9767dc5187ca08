// Removes what is older than the retention period, in the background, in small batches.
import Foundation
import FlowStore
import Logging
import Synchronization

/// The retention and idle periods and how the background run works through them.
public struct RetentionOptions: Sendable {
    /// How long the action log and stored `Idempotency-Key` answers keep full history
    /// (`--retention`, default 30 days); expired sessions are removed this long after they expired.
    public var retention: Duration
    /// How long a session may go without an action before its token stops working
    /// (`--session-idle`, default 30 days).
    public var sessionIdle: Duration
    /// Rows per transaction. Each batch holds SQLite's one writer while it runs: 500-row
    /// batches put about 4 ms on the action p99 in the soak (BENCHMARKS.md, "Retention soak"),
    /// 100-row ones next to nothing, and still remove some 14,000 rows a second. Stored answers
    /// go `answerBatchFactor` times as many at a time.
    public var batchSize: Int
    /// The pause between two batches, so the writer serves commits in between.
    public var pause: Duration
    /// How often a run starts; nil: a tenth of the retention period, between 1 s and 60 s.
    public var interval: Duration?

    public init(retention: Duration = .seconds(30 * 86_400), sessionIdle: Duration = .seconds(30 * 86_400),
                batchSize: Int = 100, pause: Duration = .milliseconds(5), interval: Duration? = nil) {
        self.retention = retention
        self.sessionIdle = sessionIdle
        self.batchSize = batchSize
        self.pause = pause
        self.interval = interval
    }

    /// How many times `batchSize` answers a batch prunes. An answers batch deletes a run of
    /// the table's first rows and, on SQLite, of its index's first leaves (the clients' keys sort
    /// by time, migration 21; keys in random order, and PostgreSQL's index led by the session,
    /// spread a batch over more leaves), where a log batch folds and cuts sessions one by one; every keyed action
    /// leaves an answer beside its entry, and with batches of the same size retention fell
    /// behind a steady 12,000 keyed actions a second (BENCHMARKS.md, issue 35, nineteenth session).
    public static let answerBatchFactor = 10

    /// The time between two runs.
    var runInterval: Duration {
        if let interval { return interval }
        return min(max(retention / 10, .seconds(1)), .seconds(60))
    }
}

/// What retention did, for `/metrics`.
public final class RetentionCounters: Sendable {
    public let actionsRemoved = Atomic<Int>(0)
    public let sessionsRemoved = Atomic<Int>(0)
    public let idempotencyRemoved = Atomic<Int>(0)
    /// Requests refused with `session-expired`.
    public let sessionsExpired = Atomic<Int>(0)
    public let runs = Atomic<Int>(0)
    public let failedRuns = Atomic<Int>(0)
    /// The last run's duration, in microseconds.
    public let lastRunMicroseconds = Atomic<Int>(0)

    public init() {}
}

/// What one run removed.
struct RetentionRun: Sendable, Equatable {
    var actions = 0
    var sessions = 0
    var idempotencyRecords = 0
    var batches = 0
    var removed: Int { actions + sessions + idempotencyRecords }
}

/// Runs the store's retention batches every `options.runInterval` on a thread of its own:
/// idempotency records and log entries older than `retention`, then sessions idle for longer
/// than `sessionIdle + retention`. Each batch is one short transaction of at most `batchSize`
/// rows (answers: `answerBatchFactor` times as many) with a pause after it, so actions are committed between batches; a run goes on until
/// a batch finds fewer rows than its size. Every node of a cluster runs it; the store's
/// batches are safe to run at once (see `RetentionStore`).
final class RetentionService: Sendable {
    let store: any RetentionStore
    let options: RetentionOptions
    let counters: RetentionCounters
    let logger: Logger
    /// Gets the ids of the sessions each batch removed (the server drops them from its cache).
    let removedSessions: @Sendable ([String]) -> Void
    private let stop = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    init(store: any RetentionStore, options: RetentionOptions, counters: RetentionCounters, logger: Logger,
         removedSessions: @escaping @Sendable ([String]) -> Void = { _ in }) {
        self.removedSessions = removedSessions
        self.store = store
        self.options = options
        self.counters = counters
        self.logger = logger
    }

    /// Starts the runs; they end once this object is released.
    func start() {
        let stop = self.stop
        let interval = Self.milliseconds(options.runInterval)
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-retention"
            while stop.wait(timeout: .now() + .milliseconds(interval)) == .timedOut {
                guard let self else { return }
                runLogged()
            }
        }
        thread.start()
    }

    deinit {
        stopping.store(true, ordering: .relaxed)
        stop.signal()
    }

    /// One run, counted, and logged at info when it removed something.
    func runLogged(now: Date = Date()) {
        let started = ContinuousClock.now
        do {
            let run = try self.run(now: now)
            let elapsed = ContinuousClock.now - started
            counters.runs.add(1, ordering: .relaxed)
            counters.lastRunMicroseconds.store(Self.milliseconds(elapsed * 1000), ordering: .relaxed)
            if run.removed > 0 {
                logger.info("retention run", metadata: [
                    "actions": "\(run.actions)", "sessions": "\(run.sessions)", "idempotencyRecords": "\(run.idempotencyRecords)",
                    "batches": "\(run.batches)", "ms": "\(Self.milliseconds(elapsed))",
                ])
            }
        } catch {
            counters.failedRuns.add(1, ordering: .relaxed)
            logger.warning("retention run failed; the next one tries again", metadata: ["error": "\(error)"])
        }
    }

    /// Removes, batch by batch, what is past its period at `now`.
    func run(now: Date = Date()) throws -> RetentionRun {
        let retention = DurationText.seconds(options.retention)
        let logHorizon = Timestamp.string(now.addingTimeInterval(-retention))
        let sessionHorizon = Timestamp.string(now.addingTimeInterval(-retention - DurationText.seconds(options.sessionIdle)))
        var run = RetentionRun()
        // Answers first: a replayed key's answer is rebuilt from the log at its version, so no
        // answer may outlive its entry. An answer is stamped with its entry's time, so every
        // answer this leaves is newer than the horizon, and so are the entries it is rebuilt
        // from (compaction keeps the kept tree they start from).
        run.idempotencyRecords = try batches(&run, size: options.batchSize * RetentionOptions.answerBatchFactor) {
            try store.pruneIdempotencyRecords(before: logHorizon, limit: $0)
        }
        counters.idempotencyRemoved.add(run.idempotencyRecords, ordering: .relaxed)
        run.actions = try batches(&run) { try store.compactActions(before: logHorizon, limit: $0) }
        counters.actionsRemoved.add(run.actions, ordering: .relaxed)
        run.sessions = try batches(&run) { limit in
            let batch = try store.removeSessions(idleBefore: sessionHorizon, limit: limit)
            if !batch.sessionIds.isEmpty { removedSessions(batch.sessionIds) }
            return batch
        }
        counters.sessionsRemoved.add(run.sessions, ordering: .relaxed)
        return run
    }

    /// Runs `batch` until one examines fewer rows than the batch size, or changes nothing (the
    /// oldest rows are ones that must stay, such as a log head that cannot be folded: the next
    /// batch would examine the same rows), or the service stops, pausing between two; the
    /// rows removed.
    private func batches(_ run: inout RetentionRun, size: Int? = nil, _ batch: (Int) throws -> RetentionBatch) throws -> Int {
        let size = size ?? options.batchSize
        var removed = 0
        while !stopping.load(ordering: .relaxed) {
            let done = try batch(size)
            run.batches += 1
            removed += done.removed
            guard done.examined >= size, done.removed > 0 || done.kept > 0 else { break }
            Thread.sleep(forTimeInterval: DurationText.seconds(options.pause))
        }
        return removed
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

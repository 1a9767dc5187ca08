// Group commit: actions submitted while a transaction is being written share the next one.
import Foundation
import Locking

/// Writes `ActionCommit`s on a thread of its own, batching those that arrive while a transaction
/// is being written into the next one. The store writes a batch (`write`): in one transaction,
/// so that one action's conflict does not undo another's, and it returns each commit's own
/// result. Each commit's completion runs, on that thread, only after the transaction holding it
/// is over.
///
/// Submitting does not wait: an HTTP thread hands its action over and goes on serving other
/// connections, so a transaction carries as many actions as arrived during the previous one,
/// however few threads serve HTTP. (Before, each caller blocked until its own commit, so a
/// transaction carried at most one action per HTTP thread.)
public final class GroupCommit: Sendable {
    public typealias Completion = @Sendable (Result<Void, any Error>) -> Void

    /// What waits for the next transaction, in order: each commit, its completion and when it
    /// was queued (a store with deadlines counts a commit's wait in the queue), in three arrays
    /// of one length. The writer takes the arrays whole (the common case: no more than
    /// `maxBatch` queued) and leaves in their place the emptied ones of its last batch, so no
    /// commit is copied on its way to the store: each copy retained and released some twenty
    /// references (with the store reading each commit in place, the writer thread does 4,300
    /// instructions an action less, callgrind).
    private struct Waiting {
        var commits: [ActionCommit] = []
        var completions: [Completion] = []
        var submitted: [ContinuousClock.Instant] = []

        var count: Int { commits.count }

        mutating func append(_ commit: ActionCommit, _ completion: @escaping Completion, at instant: ContinuousClock.Instant) {
            commits.append(commit)
            completions.append(completion)
            submitted.append(instant)
        }

        /// Moves the first `count` into `batch` (empty, its buffers kept), the rest staying.
        mutating func move(first count: Int, into batch: inout Waiting) {
            if count == commits.count {
                swap(&self, &batch)
            } else {
                batch.commits.append(contentsOf: commits.prefix(count))
                batch.completions.append(contentsOf: completions.prefix(count))
                batch.submitted.append(contentsOf: submitted.prefix(count))
                commits.removeFirst(count)
                completions.removeFirst(count)
                submitted.removeFirst(count)
            }
        }

        /// Empties it, keeping its buffers for the next batch.
        mutating func clear() {
            commits.removeAll(keepingCapacity: true)
            completions.removeAll(keepingCapacity: true)
            submitted.removeAll(keepingCapacity: true)
        }
    }

    private struct Queue {
        var waiting = Waiting()
        /// The writer thread waits for `wake`; whoever queues the first commit signals it.
        var idle = true
        var closed = false
    }

    /// Why a commit was refused without being tried.
    public struct Closed: Error, CustomStringConvertible {
        public var description: String { "the database is closed" }
    }

    /// The store's batch writer gave no result for this commit (it answered fewer results than
    /// it was given commits): a defect of the store; whether the commit was written is unknown.
    public struct MissingResult: Error, CustomStringConvertible {
        public let sessionId: String
        public let version: Int
        public let batchSize: Int
        public let results: Int
        public var description: String {
            "the store answered \(results) results for a batch of \(batchSize) commits, none for session \(sessionId) version \(version): its outcome is unknown"
        }
    }

    /// Writes one batch in one transaction; returns one result per commit, in order. It gets
    /// when the batch's oldest commit was queued, so that a store with deadlines counts the
    /// time that commit already waited behind the previous transaction.
    public typealias BatchWriter = @Sendable (_ batch: [ActionCommit], _ oldest: ContinuousClock.Instant) -> [Result<Void, any Error>]

    private let queue = PThreadMutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let writeBatch: BatchWriter
    /// Told when the writer answers a batch with too few or too many results.
    private let report: @Sendable (String) -> Void
    /// The most actions one transaction carries.
    public let maxBatch: Int

    /// Starts the writer thread; `write` runs on it, one batch at a time. `report` is told
    /// (standard error by default) when `write` answers a batch with another number of results
    /// than it was given commits.
    public init(maxBatch: Int = 512, report: @escaping @Sendable (String) -> Void = GroupCommit.reportToStandardError,
                write: @escaping BatchWriter) {
        self.writeBatch = write
        self.report = report
        self.maxBatch = maxBatch
        let thread = Thread { [self] in
            // Named from inside: Foundation on Linux names only the current thread, and the
            // kernel keeps 15 bytes (so `top -H` and `perf` tell it from the HTTP threads).
            Thread.current.name = "fs-commit"
            run()
        }
        thread.start()
    }

    /// Queues `commit` for the next transaction; `completion` gets its own result (a
    /// `CommitError`, or the database's error when the whole transaction failed) once that
    /// transaction is over. It runs on the writer thread: keep it short, never wait in it for
    /// another commit.
    public func submit(_ commit: ActionCommit, completion: @escaping Completion) {
        let (accepted, signal) = queue.withLock { queue -> (Bool, Bool) in
            guard !queue.closed else { return (false, false) }
            queue.waiting.append(commit, completion, at: .now)
            let signal = queue.idle
            queue.idle = false
            return (true, signal)
        }
        if signal { wake.signal() }
        if !accepted { completion(.failure(Closed())) }
    }

    /// Queues `commits` together, in order, so that they go into the same transaction (unless
    /// they are more than `maxBatch` with what is queued before them: then the rest goes into the
    /// next); `completion` gets every commit's result, in order, once the last is over. For the
    /// successive versions of one session (a batch of offline taps), each commit after the first
    /// names the one before it (`ActionCommit.follows`): when one fails, every later one fails
    /// too (a version conflict), even when another writer took the failed one's version.
    public func submit(_ commits: [ActionCommit], completion: @escaping @Sendable ([Result<Void, any Error>]) -> Void) {
        guard !commits.isEmpty else { return completion([]) }
        let collected = PThreadMutex([Result<Void, any Error>?](repeating: nil, count: commits.count))
        let now = ContinuousClock.now
        let completions = commits.indices.map { index -> Completion in
            { result in
                let all = collected.withLock { results -> [Result<Void, any Error>]? in
                    results[index] = result
                    let done = results.compactMap { $0 }
                    return done.count == results.count ? done : nil
                }
                if let all { completion(all) }
            }
        }
        let (accepted, signal) = queue.withLock { queue -> (Bool, Bool) in
            guard !queue.closed else { return (false, false) }
            for (commit, completion) in zip(commits, completions) { queue.waiting.append(commit, completion, at: now) }
            let signal = queue.idle
            queue.idle = false
            return (true, signal)
        }
        if signal { wake.signal() }
        if !accepted { completion(commits.map { _ in .failure(Closed()) }) }
    }

    /// Writes what is queued, then stops the writer thread; later submissions fail. Safe to
    /// call more than once.
    public func shutdown() {
        let (first, signal) = queue.withLock { queue -> (Bool, Bool) in
            guard !queue.closed else { return (false, false) }
            queue.closed = true
            let signal = queue.idle
            queue.idle = false
            return (true, signal)
        }
        guard first else { return }
        if signal { wake.signal() }
        finished.wait()
    }

    /// Reports a batch answered with another number of results than commits: every commit the
    /// writer gave no result then fails with `MissingResult` (none is left waiting forever), and
    /// extra results are dropped.
    private func reportMismatch(batch: Int, results: Int) {
        report("group commit: the store answered \(results) results for a batch of \(batch) commits"
               + (results < batch ? "; the \(batch - results) without one fail" : "; the extra ones are ignored"))
    }

    public static func reportToStandardError(_ line: String) {
        FileHandle.standardError.write(Data(("flowstack: " + line + "\n").utf8))
    }

    private func run() {
        var batch = Waiting()
        while true {
            wake.wait()
            while true {
                let stop = queue.withLock { queue -> Bool in
                    let count = min(queue.waiting.count, maxBatch)
                    guard count > 0 else {
                        queue.idle = true
                        return queue.closed
                    }
                    queue.waiting.move(first: count, into: &batch)
                    return false
                }
                if batch.count == 0 {
                    if stop { finished.signal(); return }
                    break
                }
                let results = writeBatch(batch.commits, batch.submitted.first ?? .now)  // queued in order
                if results.count != batch.count { reportMismatch(batch: batch.count, results: results.count) }
                for (completion, result) in zip(batch.completions, results) { completion(result) }
                for index in batch.commits.indices.dropFirst(results.count) {
                    let commit = batch.commits[index]
                    batch.completions[index](.failure(MissingResult(sessionId: commit.sessionId, version: commit.version,
                                                                    batchSize: batch.count, results: results.count)))
                }
                // Emptied outside the lock; its arrays become the queue's at the next batch.
                batch.clear()
            }
        }
    }
}

// Group commit: actions submitted while a transaction is being written share the next one.
import Foundation
import GRDB
import Locking

/// Writes `ActionCommit`s on a thread of its own, batching those that arrive while a transaction
/// is being written into the next one, each in a savepoint of its own, so one action's conflict
/// does not undo another's. Each commit's completion runs, on that thread, only after the
/// transaction holding it is committed.
///
/// Submitting does not wait: an HTTP thread hands its action over and goes on serving other
/// connections, so a transaction carries as many actions as arrived during the previous one,
/// however few threads serve HTTP. (Before, each caller blocked until its own commit, so a
/// transaction carried at most one action per HTTP thread.)
final class GroupCommit: Sendable {
    typealias Completion = @Sendable (Result<Void, any Error>) -> Void

    private struct Pending {
        let commit: ActionCommit
        let completion: Completion
    }

    private struct Queue {
        var pending: [Pending] = []
        /// The writer thread waits for `wake`; whoever queues the first commit signals it.
        var idle = true
        var closed = false
    }

    /// Why a commit was refused without being tried.
    struct Closed: Error, CustomStringConvertible {
        var description: String { "the database is closed" }
    }

    private let queue = PThreadMutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let pool: DatabasePool
    /// The most actions one transaction carries.
    let maxBatch: Int

    init(pool: DatabasePool, maxBatch: Int = 512) {
        self.pool = pool
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
    func submit(_ commit: ActionCommit, completion: @escaping Completion) {
        let (accepted, signal) = queue.withLock { queue -> (Bool, Bool) in
            guard !queue.closed else { return (false, false) }
            queue.pending.append(Pending(commit: commit, completion: completion))
            let signal = queue.idle
            queue.idle = false
            return (true, signal)
        }
        if signal { wake.signal() }
        if !accepted { completion(.failure(Closed())) }
    }

    /// Commits `commit` and waits for it; throws its own error.
    func commit(_ commit: ActionCommit) throws {
        let done = DispatchSemaphore(value: 0)
        let result = PThreadMutex<Result<Void, any Error>?>(nil)
        submit(commit) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        try result.withLock { $0 }?.get()
    }

    /// Writes what is queued, then stops the writer thread; later submissions fail. Safe to
    /// call more than once.
    func shutdown() {
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

    private func run() {
        while true {
            wake.wait()
            while true {
                let (batch, stop) = queue.withLock { queue -> ([Pending], Bool) in
                    let count = min(queue.pending.count, maxBatch)
                    guard count > 0 else {
                        queue.idle = true
                        return ([], queue.closed)
                    }
                    let batch = Array(queue.pending.prefix(count))
                    queue.pending.removeFirst(count)
                    return (batch, false)
                }
                if batch.isEmpty {
                    if stop { finished.signal(); return }
                    break
                }
                let results = write(batch)
                for (pending, result) in zip(batch, results) { pending.completion(result) }
            }
        }
    }

    /// One transaction for the batch; each commit in its own savepoint. The savepoint
    /// statements are prepared once (GRDB's `inSavepoint` prepares its SQL at every call).
    private func write(_ batch: [Pending]) -> [Result<Void, any Error>] {
        var results: [Result<Void, any Error>] = []
        results.reserveCapacity(batch.count)
        do {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    let savepoint = try db.cachedStatement(sql: "SAVEPOINT action")
                    let release = try db.cachedStatement(sql: "RELEASE SAVEPOINT action")
                    let rollback = try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT action")
                    for pending in batch {
                        try savepoint.execute()
                        do {
                            try FlowStore.write(pending.commit, in: db)
                            try release.execute()
                            results.append(.success(()))
                        } catch {
                            try rollback.execute()
                            try release.execute()
                            results.append(.failure(error))
                        }
                    }
                    return .commit
                }
            }
        } catch {
            // The transaction itself failed: nothing in it is committed.
            return batch.map { _ in .failure(error) }
        }
        return results
    }
}

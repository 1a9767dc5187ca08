// Group commit: actions that arrive while a transaction is being written share the next one.
import Foundation
import GRDB
import Locking

/// Batches concurrent `ActionCommit`s into one SQLite transaction, each in a savepoint of its
/// own, so one action's conflict does not undo another's, and every caller still returns only
/// after its own writes are committed.
///
/// There is no committer thread: the first caller to find no batch being written becomes the
/// leader, writes what is queued (its own commit included), answers every caller in the batch,
/// and hands leadership to the first caller queued meanwhile. Alone, a caller commits at once;
/// under load, a transaction carries as many actions as arrived during the previous one.
final class GroupCommit: Sendable {
    /// One caller's commit and, once written, its result.
    private final class Pending: @unchecked Sendable {
        let commit: ActionCommit
        let wake = DispatchSemaphore(value: 0)
        /// Set before `wake` is signalled: the result, or nil when this caller is to lead.
        var result: Result<Void, any Error>?
        init(_ commit: ActionCommit) { self.commit = commit }
    }

    private struct Queue {
        var pending: [Pending] = []
        var leading = false
    }

    private let queue = PThreadMutex(Queue())
    private let pool: DatabasePool
    /// The most actions one transaction carries.
    let maxBatch: Int

    init(pool: DatabasePool, maxBatch: Int = 256) {
        self.pool = pool
        self.maxBatch = maxBatch
    }

    /// Commits `commit` in the next transaction; throws its own error (a `CommitError`, or the
    /// database's when the whole transaction failed).
    func commit(_ commit: ActionCommit) throws {
        let mine = Pending(commit)
        let lead = queue.withLock { queue -> Bool in
            queue.pending.append(mine)
            if queue.leading { return false }
            queue.leading = true
            return true
        }
        if !lead {
            mine.wake.wait()
            guard let result = mine.result else { return try leadUntilDone(mine) }
            return try result.get()
        }
        try leadUntilDone(mine)
    }

    /// Writes batches until `mine` is answered, then passes leadership on (or ends it).
    private func leadUntilDone(_ mine: Pending) throws {
        while true {
            let batch = queue.withLock { queue -> [Pending] in
                let count = min(queue.pending.count, maxBatch)
                let batch = Array(queue.pending.prefix(count))
                queue.pending.removeFirst(count)
                return batch
            }
            write(batch)
            let wasMine = batch.contains { $0 === mine }
            let next = queue.withLock { queue -> Pending? in
                guard let first = queue.pending.first else {
                    queue.leading = false
                    return nil
                }
                return wasMine ? first : nil
            }
            for pending in batch where pending !== mine { pending.wake.signal() }
            if wasMine {
                // Hand over: the first queued caller leads the next batch (its result stays nil).
                next?.wake.signal()
                return try mine.result?.get() ?? ()
            }
        }
    }

    /// One transaction for the batch; each commit in its own savepoint.
    private func write(_ batch: [Pending]) {
        do {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    for pending in batch {
                        do {
                            try db.inSavepoint {
                                try FlowStore.write(pending.commit, in: db)
                                return .commit
                            }
                            pending.result = .success(())
                        } catch {
                            pending.result = .failure(error)
                        }
                    }
                    return .commit
                }
            }
        } catch {
            // The transaction itself failed: nothing in it is committed.
            for pending in batch { pending.result = .failure(error) }
        }
    }
}

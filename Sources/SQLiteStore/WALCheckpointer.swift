// Checkpoints the WAL in the background, so no commit pays for copying pages into the database.
import Foundation
import FlowStore
import GRDB
import Synchronization

/// SQLite checkpoints automatically in the commit that pushes the WAL past 1,000 pages, with an
/// fsync of the database file (at `synchronous=NORMAL`): that commit, and the requests waiting
/// behind it, stall. Here a background thread checkpoints every `interval` on a connection of
/// its own (a passive checkpoint takes no write lock, so commits go on meanwhile), and the
/// automatic checkpoint is kept only as a backstop at a much larger WAL.
///
/// Under sustained writes a passive checkpoint never catches up with the commits made while it
/// runs, so SQLite cannot start the WAL over; it grows to the backstop, and the commit that
/// reaches it checkpoints the rest itself and syncs (15–50 ms here, with the requests behind
/// it). The backstop sets how often that happens: at 16,384 pages about three times a second at
/// full load (action p99 27–30 ms once the WAL is that large), at 65,536 pages every two
/// seconds or so (p99 16–24 ms; same throughput). Checkpointing every 100 ms rather than 200
/// leaves that commit less to copy. See BENCHMARKS.md, "What limits durable actions".
/// When writes pause, a checkpoint completes and the WAL starts over at its beginning.
final class WALCheckpointer: Sendable {
    /// WAL pages at which a commit checkpoints by itself anyway (256 MiB of 4 KiB pages: the
    /// most the `-wal` file grows to under sustained load).
    static let backstopPages = 65_536

    private let stop = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    /// Set by an erasure until a TRUNCATE checkpoint has emptied the WAL of the erased rows
    /// (a class, so that the thread shares it).
    private final class TruncationDue: Sendable {
        let flag = Atomic<Bool>(false)
    }

    private let truncationDue = TruncationDue()

    /// Starts checkpointing the database at `path` every `interval`.
    init(path: String, interval: Duration = .milliseconds(100)) throws {
        var configuration = Configuration()
        configuration.label = "flowstack.checkpoint"
        configuration.busyMode = .timeout(1)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        running.store(true, ordering: .relaxed)
        let stop = self.stop
        let finished = self.finished
        let truncationDue = self.truncationDue
        let thread = Thread {
            Thread.current.name = "fs-checkpoint"  // see GroupCommit: 15 bytes, set from inside
            let wait = DispatchTimeInterval.nanoseconds(Int(interval.components.seconds * 1_000_000_000
                + interval.components.attoseconds / 1_000_000_000))
            while stop.wait(timeout: .now() + wait) == .timedOut {
                if truncationDue.flag.load(ordering: .acquiring) {
                    // SQLITE_BUSY (a read still in the WAL) throws: tried again next turn.
                    if (try? connection.writeWithoutTransaction({ db in try db.checkpoint(.truncate) })) != nil {
                        truncationDue.flag.store(false, ordering: .releasing)
                    }
                } else {
                    _ = try? connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
                }
            }
            try? connection.close()
            finished.signal()
        }
        thread.start()
    }

    /// Asks for a TRUNCATE checkpoint (an erasure's), tried every turn until one completes.
    func truncateSoon() { truncationDue.flag.store(true, ordering: .releasing) }

    /// Says a TRUNCATE checkpoint completed elsewhere (on the writer, right after the erasure).
    func truncated() { truncationDue.flag.store(false, ordering: .releasing) }

    /// Stops the thread and waits for it; safe to call more than once.
    func shutdown() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stop.signal()
        finished.wait()
    }
}

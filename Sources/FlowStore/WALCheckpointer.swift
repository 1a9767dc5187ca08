// Checkpoints the WAL in the background, so no commit pays for copying pages into the database.
import Foundation
import GRDB
import Synchronization

/// SQLite checkpoints automatically in the commit that pushes the WAL past 1,000 pages, with an
/// fsync of the database file (at `synchronous=NORMAL`): that commit, and the requests waiting
/// behind it, stall. Here a background thread checkpoints every `interval` on a connection of
/// its own (a passive checkpoint takes no write lock, so commits go on meanwhile), and the
/// automatic checkpoint is kept only as a backstop at a much larger WAL.
final class WALCheckpointer: Sendable {
    /// WAL pages at which a commit checkpoints by itself anyway (about 64 MiB of 4 KiB pages).
    static let backstopPages = 16_384

    private let stop = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// Starts checkpointing the database at `path` every `interval`.
    init(path: String, interval: Duration = .milliseconds(200)) throws {
        var configuration = Configuration()
        configuration.label = "flowstack.checkpoint"
        configuration.busyMode = .timeout(1)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        running.store(true, ordering: .relaxed)
        let stop = self.stop
        let finished = self.finished
        let thread = Thread {
            let wait = DispatchTimeInterval.nanoseconds(Int(interval.components.seconds * 1_000_000_000
                + interval.components.attoseconds / 1_000_000_000))
            while stop.wait(timeout: .now() + wait) == .timedOut {
                _ = try? connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            }
            try? connection.close()
            finished.signal()
        }
        thread.name = "flowstack.checkpoint"
        thread.start()
    }

    /// Stops the thread and waits for it; safe to call more than once.
    func shutdown() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stop.signal()
        finished.wait()
    }
}

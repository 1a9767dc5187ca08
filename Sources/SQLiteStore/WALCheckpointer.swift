// Checkpoints the WAL in the background, so no commit pays for copying pages into the database.
import Foundation
import FlowStore
import GRDB
import GRDBSQLite
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
///
/// Starting over, SQLite writes the `-wal` file from its beginning again, in place. A file
/// grown large under a burst keeps pages that no one reads until the next burst reaches them,
/// and a host may drop such pages from its page cache meanwhile (a container's memory limit,
/// or proactive reclaim: on the benchmark machine a resident `-wal` file lost pages while the
/// server was idle). A frame (24 bytes of header and a 4 KiB page) straddles two of the file
/// system's blocks, so rewriting a frame over a dropped block makes the kernel read the block
/// first, inside the writer's `pwrite`: a burst that rewrote a 256 MiB `-wal` file whose pages
/// were dropped ran at 0.6-0.85x the actions a second of the same burst after a truncation
/// (BENCHMARKS.md, "Issue 35, twenty-ninth session"). So once a burst is over (`WALTrim`), the
/// checkpointer truncates a large file, and the next burst appends, with nothing to read.
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
        configuration.busyMode = .timeout(Double(Self.busyMilliseconds) / 1000)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        let walPath = path + "-wal"
        running.store(true, ordering: .relaxed)
        let stop = self.stop
        let finished = self.finished
        let truncationDue = self.truncationDue
        let thread = Thread {
            var trim = WALTrim()
            Thread.current.name = "fs-checkpoint"  // see GroupCommit: 15 bytes, set from inside
            let wait = DispatchTimeInterval.nanoseconds(Int(interval.components.seconds * 1_000_000_000
                + interval.components.attoseconds / 1_000_000_000))
            while stop.wait(timeout: .now() + wait) == .timedOut {
                if truncationDue.flag.load(ordering: .acquiring) {
                    // SQLITE_BUSY (a read still in the WAL) throws: tried again next turn.
                    if (try? connection.writeWithoutTransaction({ db in try db.checkpoint(.truncate) })) != nil {
                        truncationDue.flag.store(false, ordering: .releasing)
                    }
                } else if let frames = try? connection.writeWithoutTransaction({ db in try db.checkpoint(.passive) }),
                          trim.isDue(frames: frames.walFrameCount, checkpointed: frames.checkpointedFrameCount,
                                     fileBytes: { Self.fileBytes(walPath) }) {
                    // Takes the write lock: a commit due meanwhile waits for the truncation
                    // (some 50-120 ms for 256 MiB here, a few for 16), once after a burst. A
                    // read still in the WAL makes it give up after `trimBusyMilliseconds`
                    // rather than hold commits back for it; quiet turns try again, fewer and
                    // fewer while it fails (`WALTrim.tried`).
                    do {
                        try connection.writeWithoutTransaction { db in
                            sqlite3_busy_timeout(db.sqliteConnection, Self.trimBusyMilliseconds)
                            defer { sqlite3_busy_timeout(db.sqliteConnection, Self.busyMilliseconds) }
                            _ = try db.checkpoint(.truncate)
                        }
                        trim.tried(true)
                    } catch {
                        trim.tried(false)
                    }
                }
            }
            try? connection.close()
            finished.signal()
        }
        thread.start()
    }

    /// The checkpointer connection's busy timeout: how long a checkpoint waits for the writer
    /// (and a TRUNCATE one for the reads still in the WAL).
    static let busyMilliseconds: Int32 = 1_000

    /// How long the truncation after a burst waits for the writer and the reads in the WAL.
    static let trimBusyMilliseconds: Int32 = 20

    /// The size of the file at `path`, nil when it cannot be read (none yet).
    static func fileBytes(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_size)
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

/// Whether the `-wal` file is to be truncated after a passive checkpoint (see
/// `WALCheckpointer`): when that checkpoint copied every frame of the WAL into the database, the
/// file is larger than `aboveBytes`, and the turn before it wrote fewer than `quietFrames`
/// frames: the burst that grew the file is over. Under sustained writes the checkpoint seldom
/// copies every frame, and when it does, frames written since the turn before tell the burst
/// is still on (at full load some 1,500 frames a turn of 100 ms), and so does a WAL that
/// started over since: the file is left alone, since its truncation (130 ms for 256 MiB
/// here) would hold every commit back in the middle of the burst.
struct WALTrim {
    /// The size of `-wal` file worth truncating: 16 MiB (some 4,000 frames of 4 KiB pages,
    /// truncated in a few milliseconds). A WAL that never grows past it is rewritten while its
    /// pages are recent.
    static let aboveBytes: Int64 = 16 << 20

    /// Frames written during a turn under which the writes count as quiet: a few hundred
    /// actions a second, at about a frame an action.
    static let quietFrames = 64

    /// The most turns skipped after truncations that gave up (a read kept them from it: a
    /// backup, an export), doubling from one: some 6 s.
    static let mostTurnsSkipped = 64

    /// The WAL's frames at the turn before; nil before the first.
    private var framesBefore: Int?

    /// Quiet turns to let pass before the next try, and how many the next failure skips.
    private var skipping = 0
    private var nextSkip = 1

    /// After a truncation `isDue` asked for: whether it was done. Each that gave up held the
    /// writer back for up to `WALCheckpointer.trimBusyMilliseconds`, so the next tries are
    /// spaced out, twice as far each time.
    mutating func tried(_ done: Bool) {
        if done {
            skipping = 0
            nextSkip = 1
        } else {
            skipping = nextSkip
            nextSkip = min(nextSkip * 2, Self.mostTurnsSkipped)
        }
    }

    /// After a passive checkpoint that found `frames` in the WAL and `checkpointed` of them in
    /// the database; `fileBytes` is read only when the rest says yes.
    mutating func isDue(frames: Int, checkpointed: Int, fileBytes: () -> Int64?) -> Bool {
        defer { framesBefore = frames }
        guard frames >= 0, checkpointed == frames, let before = framesBefore else { return false }
        // Fewer frames than before: the WAL started over since, and the frames written before
        // it did are not known. At full load it starts over after the backstop's checkpoint
        // with a few frames in it, all checkpointed at once: the next turn tells.
        guard frames >= before, frames - before < Self.quietFrames else { return false }
        if skipping > 0 {
            skipping -= 1
            return false
        }
        guard let bytes = fileBytes() else { return false }
        return bytes > Self.aboveBytes
    }
}

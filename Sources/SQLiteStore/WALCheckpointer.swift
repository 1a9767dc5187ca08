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
    /// The erasures' requests for a TRUNCATE checkpoint, numbered, and the newest number a
    /// completed truncation covers: one begun after a request was made empties the WAL of the
    /// rows erased before it. Numbers rather than a flag, so that a truncation that completes
    /// does not clear a request made while it ran (a class, so that the thread shares it).
    private final class Truncations: Sendable {
        let asked = Atomic<Int>(0)
        let done = Atomic<Int>(0)

        /// Whether requests up to `asked` wait for a truncation.
        func due(_ asked: Int) -> Bool { asked > done.load(ordering: .acquiring) }

        /// Raises `done` to `request` unless a later one is there already.
        func covered(_ request: Int) {
            var current = done.load(ordering: .acquiring)
            while current < request {
                let (exchanged, found) = done.compareExchange(expected: current, desired: request, ordering: .acquiringAndReleasing)
                if exchanged { return }
                current = found
            }
        }
    }

    private let truncations = Truncations()

    /// Starts checkpointing the database at `path` every `interval`.
    init(path: String, interval: Duration = .milliseconds(100)) throws {
        let connection = try Self.connection(path: path)
        running.store(true, ordering: .relaxed)
        let stop = self.stop
        let finished = self.finished
        let truncations = self.truncations
        let thread = Thread {
            var turns = CheckpointTurns(connection: connection, walPath: path + "-wal")
            Thread.current.name = "fs-checkpoint"  // see GroupCommit: 15 bytes, set from inside
            let wait = DispatchTimeInterval.nanoseconds(Int(interval.components.seconds * 1_000_000_000
                + interval.components.attoseconds / 1_000_000_000))
            while stop.wait(timeout: .now() + wait) == .timedOut {
                let asked = truncations.asked.load(ordering: .acquiring)
                if turns.turn(truncationDue: truncations.due(asked)) {
                    truncations.covered(asked)
                }
            }
            try? connection.close()
            finished.signal()
        }
        thread.start()
    }

    /// The checkpointer's own connection to the database at `path`.
    static func connection(path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.label = "flowstack.checkpoint"
        configuration.busyMode = .timeout(Double(busyMilliseconds) / 1000)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// The checkpointer connection's busy timeout outside its truncations (a passive
    /// checkpoint never waits: it copies what no lock keeps it from and returns).
    static let busyMilliseconds: Int32 = 1_000

    /// How long a TRUNCATE checkpoint (`Database.truncateWAL()`: the checkpointer's, and the
    /// erasure's own on the writer) waits for the write lock and for the reads still in the
    /// WAL. It holds the write lock meanwhile, so every commit due waits too.
    static let truncateBusyMilliseconds: Int32 = 20

    /// Asks for a TRUNCATE checkpoint (an erasure's, once its rows are committed), tried at the
    /// next turn and, while a read keeps it from finishing, again ever less often (`Backoff`:
    /// tries at most some 6.5 s apart) until one completes. Returns the request's number, for
    /// `truncated(_:)`.
    func truncateSoon() -> Int { truncations.asked.add(1, ordering: .acquiringAndReleasing).newValue }

    /// Says a TRUNCATE checkpoint begun after `request` completed elsewhere (on the writer,
    /// right after the erasure): that request and those before it are done.
    func truncated(_ request: Int) { truncations.covered(request) }

    /// Whether an erasure's truncation is still to be done.
    var truncationDue: Bool { truncations.due(truncations.asked.load(ordering: .acquiring)) }

    /// Stops the thread and waits for it; safe to call more than once.
    func shutdown() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stop.signal()
        finished.wait()
    }
}

/// What the checkpointer's thread does each turn (a test runs the turns itself): a passive
/// checkpoint, then the truncation `WALTrim` asks for; or, while an erasure's is due, that.
struct CheckpointTurns {
    let connection: DatabaseQueue
    let walPath: String
    private var trim = WALTrim()
    private var erasureTries = Backoff()

    /// TRUNCATE checkpoints that gave up (a read in the WAL, a checkpoint under way on another
    /// connection), for the tests.
    private(set) var truncationsGivenUp = 0

    init(connection: DatabaseQueue, walPath: String) {
        self.connection = connection
        self.walPath = walPath
    }

    /// One turn; whether an erasure's truncation (`truncationDue`) was done in it. While one is
    /// due and a read keeps it from finishing, the turns it skips (`Backoff`) checkpoint as
    /// usual.
    mutating func turn(truncationDue: Bool) -> Bool {
        if !truncationDue {
            // Done, here or on the writer: the next erasure's first try comes at once.
            erasureTries = Backoff()
        } else if erasureTries.ready() {
            let done = truncate()
            erasureTries.tried(done)
            return done
        }
        // The WAL's header before and after the checkpoint: when the WAL started over in
        // between, the frames counted belong to either, and the turn tells nothing.
        let before = WALHeader.read(walPath)
        guard let frames = try? connection.writeWithoutTransaction({ db in try db.checkpoint(.passive) }) else {
            trim.forget()
            return false
        }
        let after = WALHeader.read(walPath)
        guard trim.isDue(frames: frames.walFrameCount, checkpointed: frames.checkpointedFrameCount,
                         wal: before?.sequence == after?.sequence ? after : nil) else { return false }
        let done = truncate()
        trim.tried(done)
        return done && truncationDue
    }

    /// `Database.truncateWAL()`; whether it was done. A commit due meanwhile waits for it: some
    /// 50–130 ms for a 256 MiB file here, a few for 16 MiB. A read still in the WAL (a backup,
    /// an export) makes it give up soon rather than hold commits back for the read; the next
    /// tries come ever less often (`Backoff`).
    private mutating func truncate() -> Bool {
        do {
            try connection.writeWithoutTransaction { db in try db.truncateWAL() }
            // The turn after counts from nothing: the truncation started the WAL over without
            // moving the sequence number the writer writes next (see `WALTrim`).
            trim.forget()
            // It covers every erasure asked for before this turn: the next one's first try
            // comes at once.
            erasureTries = Backoff()
            return true
        } catch {
            truncationsGivenUp += 1
            return false
        }
    }
}

extension Database {
    /// A TRUNCATE checkpoint that waits at most `WALCheckpointer.truncateBusyMilliseconds` for
    /// the reads still in the WAL (and for the write lock, on another connection than the
    /// writer's), holding the write lock meanwhile; throws when it gave up. A checkpoint
    /// running elsewhere makes it give up at once. For the store's connections, whose busy
    /// mode is a timeout: a busy callback would be lost.
    func truncateWAL() throws {
        // GRDB's `.timeout` busy mode is this same call; put the connection's back after.
        let own: Int32
        switch configuration.busyMode {
        case let .timeout(seconds): own = Int32(seconds * 1000)
        case .immediateError: own = 0
        case .callback: preconditionFailure("truncateWAL() would replace the connection's busy callback")
        }
        sqlite3_busy_timeout(sqliteConnection, WALCheckpointer.truncateBusyMilliseconds)
        defer { sqlite3_busy_timeout(sqliteConnection, own) }
        _ = try checkpoint(.truncate)
    }
}

/// The first 32 bytes of a `-wal` file, and the file's size.
struct WALHeader {
    /// SQLite's checkpoint sequence number, written with the first frame after each start of
    /// the WAL: the writing connection's count of the starts it made. A truncation by another
    /// connection does not move it.
    var sequence: UInt32
    var fileBytes: Int64

    /// The header of the `-wal` file at `path`; nil when there is none (no file, a file
    /// truncated and not written since, not a WAL).
    static func read(_ path: String) -> WALHeader? {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 32)
        var status = stat()
        guard pread(file, &bytes, 32, 0) == 32, fstat(file, &status) == 0 else { return nil }
        func word(_ offset: Int) -> UInt32 {
            bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        // Big-endian: the magic number (its last bit says the checksums' byte order), the format.
        guard word(0) & ~1 == 0x377f_0682, word(4) == 3_007_000 else { return nil }
        return WALHeader(sequence: word(12), fileBytes: Int64(status.st_size))
    }
}

/// Tries spaced out after failures: after each one the next waits twice as many turns as the
/// one before, from one up to `mostTurnsSkipped` (some 6 s); a success starts the count over.
/// Each failed truncation held the writer back for up to
/// `WALCheckpointer.truncateBusyMilliseconds`.
struct Backoff {
    static let mostTurnsSkipped = 64

    private var skipping = 0
    private var nextSkip = 1

    /// Whether this turn may try; counts a turn skipped when not.
    mutating func ready() -> Bool {
        guard skipping == 0 else {
            skipping -= 1
            return false
        }
        return true
    }

    mutating func tried(_ done: Bool) {
        if done {
            skipping = 0
            nextSkip = 1
        } else {
            skipping = nextSkip
            nextSkip = min(nextSkip * 2, Self.mostTurnsSkipped)
        }
    }
}

/// Whether the `-wal` file is to be truncated after a passive checkpoint (see
/// `WALCheckpointer`): when that checkpoint copied every frame of the WAL into the database, the
/// file is larger than `aboveBytes`, and fewer than `quietFrames` frames were written since the
/// turn before: the burst that grew the file is over. Under sustained writes the checkpoint
/// seldom copies every frame, and when it does, the frames written since the turn before tell
/// the burst is still on (at full load some 1,500 frames a turn of 100 ms): the file is left
/// alone, since its truncation (130 ms for 256 MiB here) would hold every commit back in the
/// middle of the burst.
///
/// The frames written since the turn before are counted with the sequence number in the WAL's
/// header, which grows by one each time the writer starts the WAL over (the store has one
/// writing connection; a truncation by the checkpointer does not move the number, so the turn
/// after one counts nothing):
/// - the same sequence: the frames it has now less those it had;
/// - one more, after a turn that found every frame checkpointed: the frames it has now. The
///   WAL starts over at the first commit after a checkpoint that copied all of it, so none
///   were written before it did, unless a checkpoint other than the turns' copied them: the
///   backstop's, which comes only once the WAL reaches `WALCheckpointer.backstopPages`, so
///   not after a turn that left it at half of that or less;
/// - anything else (the WAL started over twice, or after a turn that had frames left to copy,
///   or during the turn itself): not known, not quiet. Under a moderate load where each turn
///   catches up and the WAL starts over each time, the frames counted are those of one turn.
struct WALTrim {
    /// The size of `-wal` file worth truncating: 16 MiB (some 4,000 frames of 4 KiB pages,
    /// truncated in a few milliseconds). A WAL that never grows past it is rewritten while its
    /// pages are recent.
    static let aboveBytes: Int64 = 16 << 20

    /// Frames written during a turn under which the writes count as quiet: a few hundred
    /// actions a second, at about a frame an action.
    static let quietFrames = 64

    /// What a turn found, for the next one.
    private struct Turn {
        var sequence: UInt32
        var frames: Int
        var caughtUp: Bool
    }

    private var before: Turn?
    private var tries = Backoff()

    /// After a truncation `isDue` asked for: whether it was done.
    mutating func tried(_ done: Bool) { tries.tried(done) }

    /// A turn that counted nothing (no checkpoint, or the WAL truncated): the next turn has
    /// nothing to count from.
    mutating func forget() { before = nil }

    /// After a passive checkpoint that found `frames` in the WAL and `checkpointed` of them in
    /// the database, with `wal` the `-wal` file's header (nil when unknown, or when the WAL
    /// started over during the checkpoint).
    mutating func isDue(frames: Int, checkpointed: Int, wal: WALHeader?) -> Bool {
        let previous = before
        before = wal.map { Turn(sequence: $0.sequence, frames: frames, caughtUp: frames >= 0 && checkpointed == frames) }
        guard frames >= 0, checkpointed == frames, let wal, let previous else { return false }
        let written: Int
        if wal.sequence == previous.sequence, frames >= previous.frames {
            written = frames - previous.frames
        } else if wal.sequence == previous.sequence &+ 1, previous.caughtUp,
                  previous.frames <= WALCheckpointer.backstopPages / 2 {
            written = frames
        } else {
            return false
        }
        guard written < Self.quietFrames, tries.ready() else { return false }
        return wal.fileBytes > Self.aboveBytes
    }
}

// The checkpointer truncates a `-wal` file grown large by a burst once the burst is over, so that
// the next burst appends to it instead of rewriting pages the host may have dropped meanwhile.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing
import TestSupport

@Suite("WAL truncation after a burst (SQLite)")
struct WALTrimTests {
    static let large = WALTrim.aboveBytes + 1

    /// One turn as `WALTrim` sees it: the checkpoint's frames, and the header read around it
    /// (nil: none, or the WAL started over during the checkpoint).
    struct Turn {
        var frames: Int
        var checkpointed: Int
        var sequence: UInt32?
        var bytes: Int64

        init(_ frames: Int, _ checkpointed: Int, sequence: UInt32? = 7, bytes: Int64 = WALTrimTests.large) {
            self.frames = frames
            self.checkpointed = checkpointed
            self.sequence = sequence
            self.bytes = bytes
        }
    }

    /// What `WALTrim` says after each of `turns`.
    static func answers(_ turns: [Turn]) -> [Bool] {
        var trim = WALTrim()
        return turns.map { turn in
            trim.isDue(frames: turn.frames, checkpointed: turn.checkpointed,
                       wal: turn.sequence.map { WALHeader(sequence: $0, fileBytes: turn.bytes) })
        }
    }

    /// The turn that first sees the frames cannot tell whether they were just written.
    @Test func theFirstTurnOnlyCounts() {
        #expect(Self.answers([Turn(10, 10), Turn(10, 10)]) == [false, true])
    }

    /// Each condition alone keeps the file: frames not yet in the database, a burst still
    /// writing, a small file, no header (no file), an unknown count.
    @Test func eachConditionKeepsTheFile() {
        func due(_ turn: Turn, before: Int = 5_000) -> Bool {
            Self.answers([Turn(before, before), turn]) == [false, true]
        }
        let quiet = 5_000 + WALTrim.quietFrames - 1, busy = 5_000 + WALTrim.quietFrames
        #expect(due(Turn(5_000, 5_000)))
        #expect(due(Turn(quiet, quiet)))
        #expect(!due(Turn(5_000, 4_999)))
        #expect(!due(Turn(busy, busy)))
        #expect(!due(Turn(5_000, 5_000, bytes: WALTrim.aboveBytes)))
        #expect(!due(Turn(5_000, 5_000, sequence: nil)))
        #expect(!due(Turn(-1, -1), before: -1))
    }

    /// The WAL started over since the turn before. After a turn that left every frame in the
    /// database, the frames it has now are all that were written since; after a turn that
    /// had frames left to copy (at full load, a WAL that reached the backstop and started over
    /// with a few frames), or one more than half way to the backstop, or two starts, what was
    /// written is not known, and the next turn tells.
    @Test func aWALThatStartedOverCountsFromItsStart() {
        #expect(Self.answers([Turn(5_000, 5_000, sequence: 7), Turn(3, 3, sequence: 8)]) == [false, true])
        #expect(Self.answers([Turn(5_000, 5_000, sequence: 7), Turn(WALTrim.quietFrames, WALTrim.quietFrames, sequence: 8)])
            == [false, false])
        #expect(Self.answers([Turn(60_000, 59_000, sequence: 7), Turn(3, 3, sequence: 8), Turn(3, 3, sequence: 8)])
            == [false, false, true])
        let halfway = WALCheckpointer.backstopPages / 2
        #expect(Self.answers([Turn(halfway, halfway, sequence: 7), Turn(3, 3, sequence: 8)]) == [false, true])
        #expect(Self.answers([Turn(halfway + 1, halfway + 1, sequence: 7), Turn(3, 3, sequence: 8), Turn(3, 3, sequence: 8)])
            == [false, false, true])
        #expect(Self.answers([Turn(5_000, 5_000, sequence: 7), Turn(3, 3, sequence: 9), Turn(3, 3, sequence: 9)])
            == [false, false, true])
        #expect(Self.answers([Turn(5_000, 5_000, sequence: .max), Turn(3, 3, sequence: 0)]) == [false, true])
        // The WAL started over during the turn: nothing to count, now or at the next turn.
        #expect(Self.answers([Turn(5_000, 5_000), Turn(5_000, 5_000, sequence: nil), Turn(5_000, 5_000), Turn(5_000, 5_000)])
            == [false, false, false, true])
    }

    /// A moderate load that the checkpointer keeps up with: every turn copies all, and the
    /// next commit starts the WAL over, so every turn finds about as many frames as the one
    /// before. The load is not quiet, and the file is kept.
    @Test func aModerateLoadThatStartsTheWALOverEachTurnIsNotQuiet() {
        let turns = (0..<20).map { Turn(300 + $0 % 3, 300 + $0 % 3, sequence: UInt32(10 + $0)) }
        #expect(!Self.answers(turns).contains(true))
    }

    /// A truncation that gave up (a read in the WAL) skips one quiet turn, then two, four, up to
    /// `mostTurnsSkipped`; one that is done starts the count over.
    @Test func triesThatGiveUpAreSpacedOut() {
        var trim = WALTrim()
        let wal = WALHeader(sequence: 7, fileBytes: Self.large)
        _ = trim.isDue(frames: 5_000, checkpointed: 5_000, wal: wal)
        func quietTurns(_ count: Int) -> [Bool] {
            (0..<count).map { _ in trim.isDue(frames: 5_000, checkpointed: 5_000, wal: wal) }
        }
        #expect(quietTurns(1) == [true])
        var skipped: [Int] = []
        for _ in 0..<9 {
            trim.tried(false)
            let turns = quietTurns(Backoff.mostTurnsSkipped + 1)
            skipped.append(turns.firstIndex(of: true) ?? -1)
        }
        #expect(skipped == [1, 2, 4, 8, 16, 32, 64, 64, 64])
        trim.tried(true)
        #expect(quietTurns(1) == [true])
        trim.tried(false)
        #expect(quietTurns(2) == [false, true])
    }

    /// A database file in WAL mode, with `connection` writing to it and never checkpointing,
    /// and the checkpointer's turns, run by the test one at a time.
    struct Turns {
        let database: TestDatabase
        let writer: DatabaseQueue
        var turns: CheckpointTurns
        var wal: String { database.location + "-wal" }
        var walBytes: Int64 { WALHeader.read(wal)?.fileBytes ?? 0 }

        init() throws {
            database = try TestDatabase(kind: .sqlite)
            writer = try DatabaseQueue(path: database.location)
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
                try db.execute(sql: "CREATE TABLE ballast (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)")
            }
            turns = CheckpointTurns(connection: try WALCheckpointer.connection(path: database.location),
                                    walPath: database.location + "-wal")
        }

        /// Writes `rows` of about a page each, in one transaction.
        func write(_ rows: Int) throws {
            try writer.write { db in
                for _ in 0..<rows { try db.execute(sql: "INSERT INTO ballast (bytes) VALUES (zeroblob(4000))") }
            }
        }

        func rows() throws -> Int { try writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ballast") ?? -1 } }

        /// Runs a turn; whether an erasure's truncation was done, and how long the turn took.
        mutating func turn(erasure: Bool = false) -> (done: Bool, took: Duration) {
            let started = ContinuousClock.now
            let done = turns.turn(truncationDue: erasure)
            return (done, ContinuousClock.now - started)
        }
    }

    /// A reader that holds its snapshot from `init` until `end()`.
    final class Reader: Sendable {
        private let end = DispatchSemaphore(value: 0)
        private let ended = DispatchSemaphore(value: 0)

        init(_ path: String) throws {
            let queue = try DatabaseQueue(path: path)
            let reading = DispatchSemaphore(value: 0)
            let end = self.end, ended = self.ended
            Thread {
                _ = try? queue.read { db in
                    _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM ballast")
                    reading.signal()
                    end.wait()
                }
                ended.signal()
            }.start()
            reading.wait()
        }

        func stop() {
            end.signal()
            ended.wait()
        }
    }

    /// A burst's WAL (some 24 MiB) is truncated at the second quiet turn. While a read that
    /// began before the checkpoint copied the burst still uses the WAL, each try gives up
    /// within some 20 ms, not the connection's second (it holds the write lock meanwhile, and
    /// every commit with it), and the tries are spaced out; once the read ends, the next try
    /// truncates, with every row kept.
    @Test func aReadInTheWALPutsTheTruncationOffBriefly() throws {
        var test = try Turns()
        try test.write(6_000)
        let grown = test.walBytes
        #expect(grown > WALTrim.aboveBytes)
        let reader = try Reader(test.database.location)
        var slowest = Duration.zero
        var givenUp: [Int] = []
        for _ in 0..<7 {
            let turn = test.turn()
            // The turns that tried: the first one's checkpoint copies (and syncs) the burst.
            if test.turns.truncationsGivenUp > (givenUp.last ?? 0) { slowest = max(slowest, turn.took) }
            givenUp.append(test.turns.truncationsGivenUp)
        }
        // The first turn copies the burst; the second finds nothing new and tries; then one turn
        // skipped, a try, two skipped, a try.
        #expect(givenUp == [0, 1, 1, 2, 2, 2, 3])
        #expect(slowest < .milliseconds(500), "a try that gave up held the writer for \(slowest)")
        #expect(test.walBytes == grown)
        reader.stop()
        var turns = 0
        while test.walBytes > 0, turns < Backoff.mostTurnsSkipped {
            _ = test.turn()
            turns += 1
        }
        #expect(test.walBytes == 0)
        #expect(turns <= 5, "four turns skipped, then the try")
        #expect(test.turns.truncationsGivenUp == 3)
        #expect(try test.rows() == 6_000)
    }

    /// The WAL starts over at each commit after a turn that copied all of it. Under a load of
    /// some 100 frames a turn a large file is kept; after a turn in which a frame or two were
    /// written it is truncated.
    @Test func aLoadThatStartsTheWALOverIsCountedFromItsStart() throws {
        var test = try Turns()
        try test.write(6_000)
        _ = test.turn()
        for _ in 0..<10 {
            try test.write(100)
            _ = test.turn()
            #expect(test.walBytes > WALTrim.aboveBytes, "truncated under a load of 100 frames a turn")
        }
        try test.write(1)
        _ = test.turn()
        #expect(test.walBytes == 0, "a trickle of a frame or two a turn")
        #expect(try test.rows() == 7_001)
    }

    /// An erasure's truncation is tried at the next turn; while a read keeps it from
    /// finishing, each try gives up within some 20 ms and the next comes later, the turns
    /// between checkpointing as usual; once the read ends, a try truncates.
    @Test func anErasuresTruncationWaitsForAReadBriefly() throws {
        var test = try Turns()
        try test.write(10)
        let reader = try Reader(test.database.location)
        let first = test.turn(erasure: true)
        #expect(!first.done && first.took < .milliseconds(500), "gave up in \(first.took)")
        #expect(test.turn(erasure: true).done == false)
        #expect(test.turns.truncationsGivenUp == 1, "the turn after a try that gave up skips")
        #expect(test.turn(erasure: true).done == false)
        #expect(test.turns.truncationsGivenUp == 2)
        reader.stop()
        var done = false
        for _ in 0..<4 where !done { done = test.turn(erasure: true).done }
        #expect(done)
        #expect(test.walBytes == 0)
        #expect(try test.rows() == 10)
        // The next erasure's first try comes at the first turn, whatever the last one's tries
        // left: here two gave up, then the writer truncated (a turn with none due).
        try test.write(10)
        let again = try Reader(test.database.location)
        #expect(test.turn(erasure: true).done == false)
        #expect(test.turn(erasure: true).done == false)
        #expect(test.turn(erasure: true).done == false)
        #expect(test.turns.truncationsGivenUp == 4)
        _ = test.turn(erasure: false)
        again.stop()
        #expect(test.turn(erasure: true).done, "tried at once")
    }

    /// Erasures ask for a truncation one after another: one that completes covers the
    /// requests made before it began, not one made since.
    @Test func aTruncationDoneCoversTheRequestsBeforeIt() throws {
        let database = try TestDatabase(kind: .sqlite)
        let setUp = try DatabaseQueue(path: database.location)
        try setUp.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        // No turn in the test's time: only the calls below change what is due.
        let checkpointer = try WALCheckpointer(path: database.location, interval: .seconds(3_600))
        defer { checkpointer.shutdown() }
        #expect(!checkpointer.truncationDue)
        let first = checkpointer.truncateSoon()
        let second = checkpointer.truncateSoon()
        checkpointer.truncated(first)
        #expect(checkpointer.truncationDue, "the second erasure's request was made after the truncation began")
        checkpointer.truncated(second)
        #expect(!checkpointer.truncationDue)
        checkpointer.truncated(first)
        #expect(!checkpointer.truncationDue, "a late report of an earlier truncation")
    }

    /// A truncation by the checkpointer starts the WAL over without moving the sequence
    /// number the writer writes next: the turn after it counts from nothing, even when the
    /// writer has written as many frames again as the WAL had (here within `quietFrames`).
    @Test func aTruncationIsNotCountedAcross() throws {
        var test = try Turns()
        try test.write(6_000)
        let frames = { (test.walBytes - 32) / 4_120 }
        let truncatedAt = frames()
        _ = test.turn()
        _ = test.turn()
        #expect(test.walBytes == 0)
        try test.write(5_900)
        while frames() < truncatedAt { try test.write(1) }
        try #require(frames() - truncatedAt < Int64(WALTrim.quietFrames), "as many frames again: \(frames()) and \(truncatedAt)")
        _ = test.turn()
        #expect(test.walBytes > WALTrim.aboveBytes, "the frames just written were taken for the ones before")
        _ = test.turn()
        #expect(test.walBytes == 0)
    }

    /// On a real store, end to end: a burst's WAL, written by another connection that does not
    /// checkpoint, is truncated by the store's own checkpointer once the burst is over, with
    /// every row still there, and the store commits after it.
    @Test func aBurstsWALIsTruncatedOnceQuiet() throws {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("s-1"))
        let wal = database.location + "-wal"
        let burst = try DatabaseQueue(path: database.location)
        try burst.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: "CREATE TABLE ballast (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)")
        }
        try burst.write { db in
            for id in 1...6_000 {
                try db.execute(sql: "INSERT INTO ballast (id, bytes) VALUES (?, zeroblob(4000))", arguments: [id])
            }
        }
        #expect((WALHeader.read(wal)?.fileBytes ?? 0) > WALTrim.aboveBytes)
        #expect(eventually(.seconds(20)) { (WALHeader.read(wal)?.fileBytes ?? 0) < WALTrim.aboveBytes })
        #expect(try burst.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ballast") } == 6_000)
        try store.commit(SessionStoreTests.commit("s-1", version: 1))
        #expect(try store.session(id: "s-1")?.version == 1)
    }
}

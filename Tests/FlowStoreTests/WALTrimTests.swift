// The checkpointer truncates a `-wal` file grown large by a burst once the burst is over, so that
// the next burst appends to it instead of rewriting pages the host may have dropped meanwhile.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("WAL truncation after a burst (SQLite)")
struct WALTrimTests {
    static let large = WALTrim.aboveBytes + 1

    /// What `WALTrim` says after each of `turns` (frames, checkpointed, the file's size).
    static func answers(_ turns: [(Int, Int, Int64?)]) -> [Bool] {
        var trim = WALTrim()
        return turns.map { frames, checkpointed, bytes in trim.isDue(frames: frames, checkpointed: checkpointed, fileBytes: { bytes }) }
    }

    /// The turn that first sees the frames cannot tell whether they were just written.
    @Test func theFirstTurnOnlyCounts() {
        #expect(Self.answers([(10, 10, Self.large), (10, 10, Self.large)]) == [false, true])
    }

    /// Each condition alone keeps the file: frames not yet in the database, a burst still
    /// writing, a small file, a file that cannot be read, an unknown count.
    @Test func eachConditionKeepsTheFile() {
        func due(frames: Int, checkpointed: Int, bytes: Int64?, before: Int = 5_000) -> Bool {
            Self.answers([(before, before, nil), (frames, checkpointed, bytes)]) == [false, true]
        }
        let quiet = 5_000 + WALTrim.quietFrames - 1, busy = 5_000 + WALTrim.quietFrames
        #expect(due(frames: 5_000, checkpointed: 5_000, bytes: Self.large))
        #expect(due(frames: quiet, checkpointed: quiet, bytes: Self.large))
        #expect(!due(frames: 5_000, checkpointed: 4_999, bytes: Self.large))
        #expect(!due(frames: busy, checkpointed: busy, bytes: Self.large))
        #expect(!due(frames: 5_000, checkpointed: 5_000, bytes: WALTrim.aboveBytes))
        #expect(!due(frames: 5_000, checkpointed: 5_000, bytes: nil))
        #expect(!due(frames: -1, checkpointed: -1, bytes: Self.large, before: -1))
    }

    /// A turn that finds the WAL started over cannot tell how much was written before it did
    /// (at full load: up to the backstop, then a few frames, checkpointed at once); the turn
    /// after can.
    @Test func aWALStartedOverWaitsForTheNextTurn() {
        #expect(Self.answers([(60_000, 60_000, nil), (3, 3, Self.large), (3, 3, Self.large)]) == [false, false, true])
        #expect(Self.answers([(60_000, 60_000, nil), (3, 3, Self.large), (900, 900, Self.large)]) == [false, false, false])
    }

    /// The file's size is read only when everything else says to truncate.
    @Test func theFileIsReadOnlyWhenQuiet() {
        var trim = WALTrim()
        var reads = 0
        let size: () -> Int64? = { reads += 1; return Self.large }
        _ = trim.isDue(frames: 100, checkpointed: 100, fileBytes: size)
        _ = trim.isDue(frames: 5_000, checkpointed: 5_000, fileBytes: size)
        _ = trim.isDue(frames: 5_000, checkpointed: 4_000, fileBytes: size)
        #expect(reads == 0)
        _ = trim.isDue(frames: 5_000, checkpointed: 5_000, fileBytes: size)
        #expect(reads == 1)
    }

    /// A truncation that gave up (a read in the WAL) skips one quiet turn, then two, four, up to
    /// `mostTurnsSkipped`; one that is done starts the count over.
    @Test func triesThatGiveUpAreSpacedOut() {
        var trim = WALTrim()
        _ = trim.isDue(frames: 5_000, checkpointed: 5_000, fileBytes: { nil })
        func quietTurns(_ count: Int) -> [Bool] {
            (0..<count).map { _ in trim.isDue(frames: 5_000, checkpointed: 5_000, fileBytes: { Self.large }) }
        }
        #expect(quietTurns(1) == [true])
        var skipped: [Int] = []
        for _ in 0..<9 {
            trim.tried(false)
            let turns = quietTurns(WALTrim.mostTurnsSkipped + 1)
            skipped.append(turns.firstIndex(of: true) ?? -1)
        }
        #expect(skipped == [1, 2, 4, 8, 16, 32, 64, 64, 64])
        trim.tried(true)
        #expect(quietTurns(1) == [true])
        trim.tried(false)
        #expect(quietTurns(2) == [false, true])
    }

    /// Waits up to `seconds` for `condition`; whether it came true.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }

    /// On a real store: a burst's WAL (some 24 MiB, written by another connection that does
    /// not checkpoint) is truncated by the store's checkpointer once the burst is over, with
    /// every row still there. While a read still uses the WAL, the truncation gives up (and
    /// the store's commits go on); once it ends, the next quiet turn truncates.
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
        // A reader that holds a snapshot of the WAL until told to end.
        let reading = DispatchSemaphore(value: 0)
        let end = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let reader = try DatabaseQueue(path: database.location)
        try burst.write { db in
            for id in 1...6_000 {
                try db.execute(sql: "INSERT INTO ballast (id, bytes) VALUES (?, zeroblob(4000))", arguments: [id])
            }
        }
        let grown = WALCheckpointer.fileBytes(wal) ?? 0
        #expect(grown > WALTrim.aboveBytes)
        Thread {
            _ = try? reader.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM ballast")
                reading.signal()
                end.wait()
            }
            ended.signal()
        }.start()
        reading.wait()
        // Some fifteen turns of the checkpointer: each gives up on the truncation soon enough
        // for commits to go on (a pending truncation holds the write lock while it waits for
        // the read; with the connection's 1 s timeout, a commit here waited up to a second).
        var slowest = Duration.zero
        for version in 1...30 {
            let started = ContinuousClock.now
            try store.commit(SessionStoreTests.commit("s-1", version: version))
            slowest = max(slowest, ContinuousClock.now - started)
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(slowest < .milliseconds(400))
        #expect((WALCheckpointer.fileBytes(wal) ?? 0) >= grown)
        end.signal()
        ended.wait()
        #expect(Self.eventually(5) { (WALCheckpointer.fileBytes(wal) ?? .max) < WALTrim.aboveBytes })
        #expect(try burst.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ballast") } == 6_000)
        #expect(try store.session(id: "s-1")?.version == 30)
    }
}

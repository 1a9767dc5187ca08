// Retention at the store: old log entries and expired sessions removed in batches, on SQLite and on
// PostgreSQL (each a named case), keeping what sessions need to go on.
import FlowStore
import Foundation
import SQLiteStore
import StoreTestSupport
import Synchronization
import Testing

@Suite("Retention store")
struct RetentionStoreTests {
    static let old = "2026-01-01T00:00:00.000Z"
    static let horizon = "2026-06-01T00:00:00.000Z"

    static func commit(_ id: String, version: Int, at: String, key: String? = nil) -> ActionCommit {
        let action = ActionRecord(version: version, type: "t\(version)", source: nil, params: "{}", interactive: false,
                                  handledBy: "app", transition: "{\"type\":\"push\",\"v\":\(version)}", createdAt: at)
        return ActionCommit(sessionId: id, userId: "u-1", version: version, tree: Array("{\"t\":\(version)}".utf8), action: action, userPatch: nil,
                            idempotency: key.map { ($0, IdempotentAnswer(requestHash: [9], status: 200, version: version, body: [7])) })
    }

    static func oldTime(_ second: Int) -> String { "2026-01-01T00:00:\(second < 10 ? "0" : "")\(second).000Z" }

    /// Batches remove the entries before the horizon, oldest first, at most `limit` examined at a
    /// time; newer entries stay; each session keeps its tree and version (an idle session's
    /// head is folded into its row), numbering continues, and a second pass removes nothing.
    /// Entries carry trees only at snapshots (see `LogSnapshots`), so a session still acting
    /// keeps its old entries from its newest old snapshot on: the ones after it can be rebuilt.
    @Test(arguments: TestStoreKind.allCases) func compactsOldEntriesInBatchesAndKeepsSessionsGoing(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        var busy = SessionStoreTests.session("busy")
        busy.createdAt = Self.old
        busy.updatedAt = Self.old
        try store.insert(busy)
        var idle = SessionStoreTests.session("idle")
        idle.createdAt = Self.old
        idle.updatedAt = Self.old
        try store.insert(idle)
        let snapshot = LogSnapshots.interval
        let old = snapshot + 3
        for version in 1...old { try store.commit(Self.commit("busy", version: version, at: Self.oldTime(version % 10))) }
        for version in 1...3 { try store.commit(Self.commit("idle", version: version, at: Self.oldTime(10 + version))) }
        for version in old + 1...old + 2 { try store.commit(Self.commit("busy", version: version, at: Timestamp.string())) }

        var removed = 0
        var batches = 0
        while true {
            let batch = try store.compactActions(before: Self.horizon, limit: 3)
            removed += batch.removed
            batches += 1
            if batch.examined < 3 { break }
        }
        // At most one batch per 3 old entries and the one that finds fewer: a cut deletes a
        // session's entries below its snapshot by key, ahead of the cursor too.
        #expect(batches <= (old + 3) / 3 + 1)
        let busyLog = try store.actions(sessionId: "busy", after: 0, limit: 100).map(\.version)
        #expect(removed == snapshot - 1 + 3)
        #expect(busyLog == Array(snapshot...old + 2))
        #expect(try store.actions(sessionId: "idle", after: 0, limit: 100).isEmpty)
        let busyNow = try #require(try store.session(id: "busy"))
        #expect(busyNow.version == old + 2)
        #expect(busyNow.tree == Array("{\"t\":\(old + 2)}".utf8))
        let idleNow = try #require(try store.session(id: "idle"))
        #expect(idleNow.version == 3)
        #expect(idleNow.tree == Array("{\"t\":3}".utf8))
        #expect(idleNow.lastTransition == "{\"type\":\"push\",\"v\":3}")
        #expect(idleNow.updatedAt == Self.oldTime(13))
        #expect(try store.headVersion(sessionId: "idle") == 3)
        // Numbering continues above the folded version; a stale writer is still refused.
        #expect(throws: CommitError.self) { try store.commit(Self.commit("idle", version: 3, at: Timestamp.string())) }
        try store.commit(Self.commit("idle", version: 4, at: Timestamp.string()))
        #expect(try store.session(id: "idle")?.version == 4)
        // Idempotent: nothing more to do.
        #expect(try store.compactActions(before: Self.horizon, limit: 3) == RetentionBatch())
    }

    /// Idempotency answers older than the horizon go, in batches; newer ones stay.
    @Test(arguments: TestStoreKind.allCases) func prunesOldIdempotencyRecords(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(SessionStoreTests.session("s"))
        for version in 1...3 { try store.commit(Self.commit("s", version: version, at: Self.oldTime(version), key: "k\(version)")) }
        try store.commit(Self.commit("s", version: 4, at: Timestamp.string(), key: "k4"))
        #expect(try store.pruneIdempotencyRecords(before: Self.horizon, limit: 2).removed == 2)
        #expect(try store.pruneIdempotencyRecords(before: Self.horizon, limit: 2).removed == 1)
        #expect(try store.pruneIdempotencyRecords(before: Self.horizon, limit: 2).removed == 0)
        #expect(try store.idempotentAnswer(sessionId: "s", key: "k1") == nil)
        #expect(try store.idempotentAnswer(sessionId: "s", key: "k4") != nil)
    }

    /// A log compacted to nothing (every session idle past the horizon) and written again is
    /// compacted again: SQLite numbers the new entries from the start of the table, below where
    /// the last batch stopped, and they must not be passed over. The same when the entries past
    /// that point go with their session.
    @Test(arguments: TestStoreKind.allCases) func aLogEmptiedAndWrittenAgainIsCompactedAgain(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        for id in ["a", "b"] {
            var session = SessionStoreTests.session(id)
            session.createdAt = Self.old
            session.updatedAt = Self.old
            try store.insert(session)
        }
        for version in 1...3 { try store.commit(Self.commit("a", version: version, at: Self.oldTime(version))) }
        for version in 1...3 { try store.commit(Self.commit("b", version: version, at: Self.oldTime(10 + version))) }
        while try store.compactActions(before: Self.horizon, limit: 4).examined == 4 {}
        #expect(try store.actions(sessionId: "a", after: 0, limit: 100).isEmpty)
        #expect(try store.actions(sessionId: "b", after: 0, limit: 100).isEmpty)
        // Written again (times before the horizon, as they will be once it passes them).
        for version in 4...5 { try store.commit(Self.commit("a", version: version, at: Self.oldTime(20 + version))) }
        while try store.compactActions(before: Self.horizon, limit: 4).examined == 4 {}
        #expect(try store.actions(sessionId: "a", after: 0, limit: 100).isEmpty)
        #expect(try store.session(id: "a")?.version == 5)
        // The entries past where compaction stopped deleted with their session: the next ones
        // are numbered where they were, and are compacted too.
        try store.insert(SessionStoreTests.session("c"))
        for version in 6...7 { try store.commit(Self.commit("a", version: version, at: Self.oldTime(30 + version))) }
        for version in 1...2 { try store.commit(Self.commit("c", version: version, at: Timestamp.string())) }
        #expect(try store.compactActions(before: Self.horizon, limit: 4).removed == 2)
        try store.deleteSession(id: "c")
        for version in 8...9 { try store.commit(Self.commit("a", version: version, at: Self.oldTime(30 + version))) }
        while try store.compactActions(before: Self.horizon, limit: 4).examined == 4 {}
        #expect(try store.actions(sessionId: "a", after: 0, limit: 100).isEmpty)
        #expect(try store.session(id: "a")?.version == 9)
    }

    /// Answers are pruned in the order they were stored: one stamped newer than the horizon
    /// stops the batch (the clock stepped back behind it), and the old ones after it go once it
    /// has. A table emptied and filled again (SQLite reuses its rowids from the start) is pruned
    /// from its first row again.
    @Test(arguments: TestStoreKind.allCases) func prunesAnswersInTheOrderTheyWereStored(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(SessionStoreTests.session("s"))
        try store.commit(Self.commit("s", version: 1, at: Self.oldTime(1), key: "k1"))
        try store.commit(Self.commit("s", version: 2, at: "2026-07-01T00:00:00.000Z", key: "k2"))
        try store.commit(Self.commit("s", version: 3, at: Self.oldTime(3), key: "k3"))
        let first = try store.pruneIdempotencyRecords(before: Self.horizon, limit: 10)
        #expect(try store.idempotentAnswer(sessionId: "s", key: "k1") == nil)
        #expect(try store.idempotentAnswer(sessionId: "s", key: "k2") != nil)
        if kind == .sqlite {
            // k3 waits behind k2, which is not old yet; the run ends there.
            #expect(first == RetentionBatch(removed: 1, examined: 1))
            #expect(try store.idempotentAnswer(sessionId: "s", key: "k3") != nil)
            #expect(try store.pruneIdempotencyRecords(before: "2026-08-01T00:00:00.000Z", limit: 10).removed == 2)
        } else {
            // PostgreSQL prunes by its index on created_at, whatever the order.
            #expect(first.removed == 2)
            #expect(try store.pruneIdempotencyRecords(before: "2026-08-01T00:00:00.000Z", limit: 10).removed == 1)
        }
        #expect(try store.idempotentAnswer(sessionId: "s", key: "k3") == nil)
        // Emptied, then filled again: the new answers are found from the table's start.
        for version in 4...6 { try store.commit(Self.commit("s", version: version, at: Self.oldTime(version), key: "k\(version)")) }
        #expect(try store.pruneIdempotencyRecords(before: Self.horizon, limit: 2) == RetentionBatch(removed: 2, examined: 2))
        #expect(try store.pruneIdempotencyRecords(before: Self.horizon, limit: 2).removed == 1)
        #expect(try store.idempotentAnswer(sessionId: "s", key: "k6") == nil)
        #expect(try store.pruneIdempotencyRecords(before: Self.horizon, limit: 2) == RetentionBatch())
    }

    /// Sessions last active before the horizon go with their log; one whose row is old but that
    /// acted since stays, and its row's time moves forward so it is not looked at again. Users,
    /// and the experiment report (exposures, funnel), stay as they were.
    @Test(arguments: TestStoreKind.allCases) func removesIdleSessionsButNotUsersNorReports(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        for id in ["never", "long-ago", "active"] {
            var session = SessionStoreTests.session(id)
            session.createdAt = Self.old
            session.updatedAt = Self.old
            try store.insert(session, exposures: [(experiment: "exp", variant: "a")], firstFeature: "first")
        }
        try store.commit(Self.commit("long-ago", version: 1, at: Self.oldTime(5)))
        try store.commit(Self.commit("active", version: 1, at: Self.oldTime(5)))
        try store.commit(Self.commit("active", version: 2, at: Timestamp.string()))
        let report = try store.experimentReport("exp")

        let batch = try store.removeSessions(idleBefore: Self.horizon, limit: 10)
        #expect(batch.removed == 2)
        #expect(batch.kept == 1)
        #expect(batch.sessionIds.sorted() == ["long-ago", "never"])
        #expect(try store.session(id: "never") == nil)
        #expect(try store.session(id: "long-ago") == nil)
        #expect(try store.actions(sessionId: "long-ago", after: 0, limit: 10).isEmpty)
        #expect(try store.session(id: "active")?.version == 2)
        #expect(try store.user(id: "u-1") != nil)
        #expect(try store.experimentReport("exp") == report)
        #expect(try store.removeSessions(idleBefore: Self.horizon, limit: 10) == RetentionBatch())
    }

    /// Two stores on one database (two nodes) compacting at once: together they remove every
    /// old entry exactly once, without an error, and every session keeps its head version.
    @Test(arguments: TestStoreKind.allCases) func twoNodesCompactingAtOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let other = try database.open()
        for index in 0..<20 {
            var session = SessionStoreTests.session("s-\(index)")
            session.createdAt = Self.old
            session.updatedAt = Self.old
            try store.insert(session)
            for version in 1...10 { try store.commit(Self.commit("s-\(index)", version: version, at: Self.old)) }  // one time: a batch takes several entries of a session
        }
        let removed = [Int](repeating: 0, count: 2)
        let totals = Mutex(removed)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            let target = node == 0 ? store : other
            do {
                while true {
                    let batch = try target.compactActions(before: Self.horizon, limit: 7)
                    totals.withLock { $0[node] += batch.removed }
                    if batch.examined == 0 { break }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(totals.withLock { $0.reduce(0, +) } == 200)
        for index in 0..<20 {
            #expect(try store.session(id: "s-\(index)")?.version == 10)
            #expect(try store.session(id: "s-\(index)")?.tree == Array("{\"t\":10}".utf8))
        }
        try other.close()
    }

    /// Every batch's look-up reads only its batch: the log's from where the last batch stopped,
    /// the stored answers' from the table's start, both in rowid order (no sort, no index to keep
    /// per action), the idle sessions' a range search of their index.
    @Test(arguments: [TestStoreKind.sqlite]) func batchesUseTheirIndexes(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try #require(try database.migratedStore() as? SQLiteStore)
        let plans = try store.retentionPlans()
        #expect(plans.count == 3)
        #expect(plans.first == "SEARCH actions USING INTEGER PRIMARY KEY (rowid>?)", "\(plans)")
        // Sessions by their index; answers from the table's first row, in rowid order, as far
        // as the batch's limit (no sort, no index).
        #expect(plans[1].contains("USING INDEX") || plans[1].contains("USING COVERING INDEX"), "\(plans[1])")
        #expect(!plans[1].contains("SCAN"), "\(plans[1])")
        #expect(plans[2] == "SCAN idempotency_keys", "\(plans[2])")
    }
}

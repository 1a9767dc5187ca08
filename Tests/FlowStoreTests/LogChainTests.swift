// The SQLite log's chain (migration 20): each entry names the one before it, each session's head
// row names its newest, and every read and deletion walks the chain instead of an index of every
// entry. A walk never leaves its session, reads find every entry, and deletions leave none.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Log chain (SQLite)")
struct LogChainTests {
    /// Sessions "a" and "b" of user u-1 with `versions` entries each, committed in turns so
    /// that their entries interleave in the table.
    static func store(versions: Int) throws -> (TestDatabase, SQLiteStore) {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        for id in ["a", "b"] { try store.insert(SessionStoreTests.session(id)) }
        for version in 1...versions {
            for id in ["a", "b"] { try store.commit(SessionStoreTests.commit(id, version: version)) }
        }
        return (database, store)
    }

    /// Entries of the session, counted by a scan of the whole table (not along the chain).
    static func stored(_ store: SQLiteStore, _ id: String) throws -> Int {
        try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM actions WHERE session_id = ?", arguments: [id]) ?? -1 }
    }

    /// Every window of the log reads the versions it asks for, in order, whether it starts
    /// before, at or after a snapshot (every `LogSnapshots.interval` versions) and whether a
    /// snapshot lies past its end or only the head does; the other session's entries, which
    /// lie between, never appear.
    @Test func everyWindowReadsItsVersions() throws {
        let count = 2 * LogSnapshots.interval + 10
        let (database, store) = try Self.store(versions: count)
        defer { withExtendedLifetime(database) { try? store.close() } }
        for after in [0, 1, 20, 63, 64, 65, 127, 128, 129, count - 1, count, count + 5] {
            for limit in [1, 5, 64, 65, 200] {
                let versions = try store.actions(sessionId: "a", after: after, limit: limit).map(\.version)
                let expected = after >= count ? [] : Array(after + 1...min(count, after + limit))
                #expect(versions == expected, "after \(after), limit \(limit)")
            }
        }
        #expect(try store.actions(sessionId: "b", after: 0, limit: 1_000).map(\.type) == (1...count).map { "t\($0)" })
        #expect(try store.headVersion(sessionId: "a") == count)
        let slice = try #require(try store.actionLog(sessionId: "a", after: 100, limit: 3))
        #expect(slice.startVersion == 64)
        #expect(slice.entries.map(\.action.version) == Array(65...103))
    }

    /// A log compacted below a snapshot (its first entries deleted, as retention does for a
    /// session still acting) reads from its first entry left: a window that begins below it
    /// reads the first `limit` entries from there, as `version > after ORDER BY version LIMIT`
    /// would, not the one entry a walk from the snapshot past the window would find.
    @Test func aCompactedLogReadsFromItsFirstEntry() throws {
        let count = 3 * LogSnapshots.interval + 10
        let (database, store) = try Self.store(versions: count)
        defer { withExtendedLifetime(database) { try? store.close() } }
        for (cut, first) in [(LogSnapshots.interval, 64), (2 * LogSnapshots.interval, 128)] {
            try store.pool.write { db in _ = try SQLiteStore.cutLog(of: "a", below: Int64(cut), in: db) }
            for after in [0, 1, first - 2, first - 1, first, first + 1] {
                for limit in [1, 10, 64, 65, 100, 1_000] {
                    let versions = try store.actions(sessionId: "a", after: after, limit: limit).map(\.version)
                    let from = max(after + 1, first)
                    #expect(versions == Array(from...min(count, from + limit - 1)), "cut below \(cut), after \(after), limit \(limit)")
                }
            }
        }
        #expect(try store.actions(sessionId: "b", after: 0, limit: 1_000).count == count)
    }

    /// A walk stays in its session: a head or a `previous` that names another session's entry
    /// (as a rowid SQLite numbers again after the table's last entries were deleted would) ends
    /// it there, and the session stands at its row's version, not at the other's.
    @Test func aWalkNeverLeavesItsSession() throws {
        let (database, store) = try Self.store(versions: 5)
        defer { withExtendedLifetime(database) { try? store.close() } }
        func entry(_ id: String, _ version: Int) throws -> Int64 {
            try store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT rowid FROM actions WHERE session_id = ? AND version = ?", arguments: [id, version]) ?? -1
            }
        }
        // a's third entry names b's first as the one before it: a's log ends at its third.
        try store.pool.write { db in
            try db.execute(sql: "UPDATE actions SET previous = ? WHERE session_id = 'a' AND version = 3", arguments: [try entry("b", 1)])
        }
        #expect(try store.actions(sessionId: "a", after: 0, limit: 100).map(\.version) == [3, 4, 5])
        #expect(try store.actions(sessionId: "b", after: 0, limit: 100).map(\.version) == [1, 2, 3, 4, 5])
        // a's head names b's entry: a has no log entries; it stands at its row (version 0).
        let bNewest = try entry("b", 5)
        try store.pool.write { db in try db.execute(sql: "UPDATE log_heads SET newest = ? WHERE session_id = 'a'", arguments: [bNewest]) }
        #expect(try store.actions(sessionId: "a", after: 0, limit: 100).isEmpty)
        #expect(try store.headVersion(sessionId: "a") == 0)
        #expect(try store.session(id: "a")?.version == 0)
        #expect(throws: CommitError.versionConflict(stored: 0)) { try store.commit(SessionStoreTests.commit("a", version: 6)) }
        // Deleting a's log deletes none of b's.
        try store.pool.write { db in _ = try SQLiteStore.cutLog(of: "a", in: db) }
        #expect(try Self.stored(store, "b") == 5)
    }

    /// Each way a session's log is deleted (ending it, deleting it, erasing its user) deletes
    /// every entry, counted by a scan of the whole table, and its head row, across snapshots;
    /// the other session's log stays whole.
    @Test(arguments: ["end", "delete", "erase"])
    func deletionsLeaveNoEntry(_ how: String) throws {
        let count = LogSnapshots.interval * 2 + 3
        let (database, store) = try Self.store(versions: count)
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("c", user: "u-2"))
        for version in 1...3 { try store.commit(SessionStoreTests.commit("c", version: version, user: "u-2")) }
        // An entry of a written into the file without its link (by hand, by another tool):
        // no chain reaches it; an erasure still deletes it.
        try store.pool.write { db in
            try db.execute(sql: """
                INSERT INTO actions (session_id, version, type, params, interactive, created_at)
                VALUES ('a', 1000, 'unlinked', '{}', 0, '2026-11-30T00:00:00.000Z')
                """)
        }
        switch how {
        case "end": #expect(try store.endSession(id: "a", audit: AuditStamp(credential: "admin"))?.actions == count)
        case "delete": #expect(try store.deleteSession(id: "a"))
        default:
            let erased = try store.eraseUser(id: "u-1", auditSubject: "erased", audit: AuditStamp(credential: "admin"))
            #expect(erased.actions == 2 * count + 1)
            #expect(try Self.stored(store, "b") == 0)
        }
        // Ending or deleting a session follows its chain only: what the store never wrote stays.
        #expect(try Self.stored(store, "a") == (how == "erase" ? 0 : 1))
        #expect(try Self.stored(store, "c") == 3)
        #expect(try store.actions(sessionId: "c", after: 0, limit: 10).map(\.version) == [1, 2, 3])
        let heads = try store.pool.read { db in try String.fetchAll(db, sql: "SELECT session_id FROM log_heads ORDER BY session_id") }
        #expect(heads == (how == "erase" ? ["c"] : ["b", "c"]))
    }

    /// A commit whose head cannot be moved writes nothing: its entry and its key are taken back
    /// (keyed or not, without a savepoint), the batch's other commits stay, and once the cause
    /// is gone the same version commits and links to the entry before it.
    @Test func aHeadThatFailsTakesTheEntryBack() throws {
        let (database, store) = try Self.store(versions: 2)
        defer { withExtendedLifetime(database) { try? store.close() } }
        // Head rows every `headInterval` versions, as the server's: version 3 writes its entry,
        // its key and its head, and takes no savepoint.
        store.rebuildHeads(with: NoHeads())
        try store.pool.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse_head BEFORE UPDATE ON log_heads WHEN NEW.session_id = 'a'
                BEGIN SELECT RAISE(ABORT, 'planted failure'); END
                """)
        }
        let results = SessionStoreTests.submitted([
            SessionStoreTests.commit("a", version: 3, key: "k-a"),
            SessionStoreTests.commit("b", version: 3, key: "k-b"),
            SessionStoreTests.commit("a", version: 3),
        ], to: store)
        #expect(results.map { if case .success = $0 { true } else { false } } == [false, true, false])
        #expect(try Self.stored(store, "a") == 2)
        #expect(try store.idempotentAnswer(sessionId: "a", key: "k-a") == nil)
        #expect(try store.idempotentAnswer(sessionId: "b", key: "k-b")?.version == 3)
        try store.pool.write { db in try db.execute(sql: "DROP TRIGGER refuse_head") }
        try store.commit(SessionStoreTests.commit("a", version: 3, key: "k-a"))
        #expect(try store.actions(sessionId: "a", after: 0, limit: 10).map(\.version) == [1, 2, 3])
        #expect(try store.headVersion(sessionId: "a") == 3)
    }

    /// What reads or deletes a session's log finds its entries by a key (the chain's rowids, the
    /// snapshots' partial index, the head row's unique index), never by scanning the log: a
    /// deletion's queue of the chain, and the walk's start (one constant row), are the only
    /// things scanned.
    @Test func noStatementScansTheLog() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedSQLiteStore()
        defer { try? store.close() }
        let statements: [(String, StatementArguments)] = [
            (SQLiteStore.walkStartSQL, ["x", 1]), (SQLiteStore.walkStepSQL, [1, "x", 1, 1]), (SQLiteStore.cutLogSQL, ["x", 1]),
            (SQLiteStore.headSQL, ["x"]),
            (SQLiteStore.rowAndLogSQL, ["x"]),
        ]
        for (sql, arguments) in statements {
            let plan = try store.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String? ?? "" }
            }
            let scans = plan.filter { $0.hasPrefix("SCAN") && !["SCAN c", "SCAN chain", "SCAN CONSTANT ROW"].contains($0) }
            #expect(scans.isEmpty, "\(sql): \(plan)")
            #expect(!plan.contains { $0.contains("actions_by_session") })
        }
    }
}

extension LogChainTests {
    /// A log written before migration 20 (two sessions' entries interleaved, trees at snapshots
    /// only, a session whose first entry was compacted away, and entries of a session deleted
    /// with foreign keys off) is chained in place: every entry keeps its rowid and reads back in
    /// order, each session stands at its newest entry, the next version commits and links to
    /// it, the orphans are gone, and the log has neither its index of sessions nor a foreign
    /// key left.
    @Test func migrationChainsALogWrittenBefore() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let before = try AnswersMigrationTests.store(migratedTo: 19, at: database)
        for id in ["s-1", "s-2", "s-3"] { try before.insert(SessionStoreTests.session(id)) }
        var written: [(String, Int)] = []
        for version in 1...70 {
            written.append(("s-1", version))
            if version <= 5 { written.append(("s-2", version)) }
            if version <= 3 { written.append(("s-3", version)) }
        }
        try before.pool.writeWithoutTransaction { db in
            for (id, version) in written {
                try db.execute(sql: """
                    INSERT INTO actions (session_id, version, type, params, interactive, created_at, tree)
                    VALUES (?, ?, ?, '{}', 0, '2026-11-30T00:00:00.000Z', ?)
                    """, arguments: [id, version, "t\(version)", LogSnapshots.keepsTree(version) ? Data("{}".utf8) : nil])
            }
            // s-3's first entry compacted into its row.
            try db.execute(sql: "DELETE FROM actions WHERE session_id = 's-3' AND version = 1")
            try db.execute(sql: "UPDATE sessions SET version = 1 WHERE id = 's-3'")
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: """
                INSERT INTO actions (session_id, version, type, params, interactive, created_at)
                VALUES ('gone', 1, 't1', '{}', 0, '2026-11-30T00:00:00.000Z')
                """)
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        let rowids = try before.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, session_id, version FROM actions WHERE session_id != 'gone' ORDER BY rowid")
                .map { "\($0[0] as Int64) \($0[1] as String) \($0[2] as Int)" }
        }
        try before.close()

        let store = try SQLiteStore(path: database.path)
        defer { try? store.close() }
        #expect(try store.migrate(Migration.bundled(.sqlite)).map(\.version) == [20, 21])
        #expect(try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, session_id, version FROM actions ORDER BY rowid")
                .map { "\($0[0] as Int64) \($0[1] as String) \($0[2] as Int)" }
        } == rowids)
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 100).map(\.type) == (1...70).map { "t\($0)" })
        #expect(try store.actions(sessionId: "s-1", after: 60, limit: 5).map(\.version) == [61, 62, 63, 64, 65])
        #expect(try store.actions(sessionId: "s-2", after: 0, limit: 100).map(\.version) == [1, 2, 3, 4, 5])
        #expect(try store.actions(sessionId: "s-3", after: 1, limit: 100).map(\.version) == [2, 3])
        #expect(try store.headVersions(sessionIds: ["s-1", "s-2", "s-3"]) == ["s-1": 70, "s-2": 5, "s-3": 3])
        #expect(throws: CommitError.versionConflict(stored: 70)) { try store.commit(SessionStoreTests.commit("s-1", version: 70)) }
        try store.commit(SessionStoreTests.commit("s-1", version: 71))
        #expect(try store.actions(sessionId: "s-1", after: 68, limit: 100).map(\.version) == [69, 70, 71])
        #expect(try Self.stored(store, "gone") == 0)
        let (indexes, keys) = try store.pool.read { db in
            (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'actions'"),
             try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(actions)").count)
        }
        #expect(indexes == ["actions_snapshots"])
        #expect(keys == 0)
        // The links are rowids declared as the table's key, which `VACUUM` keeps.
        try store.pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        #expect(try store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT pk FROM pragma_table_info('actions') WHERE name = 'id' AND type = 'INTEGER'")
        } == 1)
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 100).count == 71)
        #expect(try store.pool.write { db in try SQLiteStore.cutLog(of: "s-1", in: db) } == 71)
        #expect(try Self.stored(store, "s-1") == 0)
    }
}

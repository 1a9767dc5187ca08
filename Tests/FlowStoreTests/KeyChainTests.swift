// The SQLite idempotency keys' chain (migration 21): each key names the session's key before it,
// the session's head row names its newest, and the unique index leads by the key. What needs a
// session's keys walks the chain: it finds every key, never leaves its session, and deletions
// leave none.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Key chain (SQLite)")
struct KeyChainTests {
    /// Sessions "a" and "b" of user u-1 with `versions` commits each, in turns so that their
    /// keys interleave in the table; every third commit has no key. `a`'s keys are `a-1`, `a-2`, ...
    static func store(versions: Int) throws -> (TestDatabase, SQLiteStore) {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        for id in ["a", "b"] { try store.insert(SessionStoreTests.session(id)) }
        for version in 1...versions {
            for id in ["a", "b"] {
                try store.commit(SessionStoreTests.commit(id, version: version, key: Self.keyed(version) ? "\(id)-\(version)" : nil))
            }
        }
        return (database, store)
    }

    static func keyed(_ version: Int) -> Bool { version % 3 != 0 }

    /// The keys of `id` its first `versions` commits wrote.
    static func keys(_ id: String, through versions: Int) -> Set<String> {
        Set((1...versions).filter(keyed).map { "\(id)-\($0)" })
    }

    /// Keys of the session, counted by a scan of the whole table (not along the chain).
    static func stored(_ store: SQLiteStore, _ id: String) throws -> Int {
        try store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM idempotency_keys WHERE session_id = ?", arguments: [id]) ?? -1
        }
    }

    /// A session's keys read back whole, whichever way its commits knew the key before (from
    /// the writer's memory, or from the database after a restart), and a limit says "more".
    @Test func theChainHoldsEveryKey() throws {
        let (database, store) = try Self.store(versions: 30)
        defer { withExtendedLifetime(database) {} }
        #expect(try store.usedKeys(sessionId: "a", limit: 100).map(Set.init) == Self.keys("a", through: 30))
        #expect(try store.usedKeys(sessionId: "b", limit: 100).map(Set.init) == Self.keys("b", through: 30))
        #expect(try store.usedKeys(sessionId: "a", limit: 20).map(\.count) == 20)
        #expect(try store.usedKeys(sessionId: "a", limit: 19) == nil)
        try store.close()
        // A new store reads the session's newest key from its head row.
        let reopened = try SQLiteStore(path: database.path)
        defer { try? reopened.close() }
        try reopened.commit(SessionStoreTests.commit("a", version: 31, key: "a-31"))
        try reopened.commit(SessionStoreTests.commit("a", version: 32))
        try reopened.commit(SessionStoreTests.commit("a", version: 33, key: "a-33"))
        #expect(try reopened.usedKeys(sessionId: "a", limit: 100).map(Set.init) == Self.keys("a", through: 30).union(["a-31", "a-33"]))
        #expect(try reopened.usedKeys(sessionId: "c", limit: 100) == [])
        // The used key is refused by the index led by the key, for its session only.
        #expect(throws: CommitError.versionConflict(stored: 33)) {
            try reopened.commit(SessionStoreTests.commit("a", version: 34, key: "a-1"))
        }
        try reopened.commit(SessionStoreTests.commit("a", version: 34, key: "b-1"))
        #expect(try reopened.idempotentAnswer(sessionId: "a", key: "b-1")?.version == 34)
        #expect(try reopened.idempotentAnswer(sessionId: "b", key: "b-1")?.version == 1)
    }

    /// A key whose link names a key of another session (a number SQLite gave again, a hand
    /// edit) ends the walk: nothing of the other session is read.
    @Test func aWalkNeverLeavesItsSession() throws {
        let (database, store) = try Self.store(versions: 5)
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.pool.write { db in
            try db.execute(sql: """
                UPDATE idempotency_keys SET previous = (SELECT id FROM idempotency_keys WHERE key = 'b-2')
                WHERE key = 'a-4'
                """)
        }
        #expect(try store.usedKeys(sessionId: "a", limit: 100).map(Set.init) == ["a-5", "a-4"])
    }

    /// Retention prunes the oldest keys of every session: a chain is cut below, what is left
    /// reads back, and the next key links on. Once every key is gone (the numbers start again),
    /// a key linking to a number now another session's reads alone.
    @Test func prunedKeysCutTheChainBelow() throws {
        let (database, store) = try Self.store(versions: 6)
        defer { withExtendedLifetime(database) { try? store.close() } }
        // a-1, b-1, a-2, b-2 are the four oldest.
        #expect(try store.pruneIdempotencyRecords(before: "9999-01-01T00:00:00.000Z", limit: 4).removed == 4)
        #expect(try store.usedKeys(sessionId: "a", limit: 100).map(Set.init) == ["a-4", "a-5"])
        try store.commit(SessionStoreTests.commit("a", version: 7, key: "a-7"))
        #expect(try store.usedKeys(sessionId: "a", limit: 100).map(Set.init) == ["a-4", "a-5", "a-7"])
        while try store.pruneIdempotencyRecords(before: "9999-01-01T00:00:00.000Z", limit: 100).removed > 0 {}
        try store.commit(SessionStoreTests.commit("b", version: 7, key: "b-7"))
        try store.commit(SessionStoreTests.commit("a", version: 8, key: "a-8"))
        #expect(try store.usedKeys(sessionId: "a", limit: 100) == ["a-8"])
        #expect(try store.usedKeys(sessionId: "b", limit: 100) == ["b-7"])
    }

    /// A log cut to nothing (compaction folds a session's newest entry into its row) keeps the
    /// head while it names a key: the keys still read back, and the next key links on.
    @Test func aHeadStaysForItsKeys() throws {
        let (database, store) = try Self.store(versions: 4)
        defer { withExtendedLifetime(database) { try? store.close() } }
        #expect(try store.pool.write { db in try SQLiteStore.cutLog(of: "a", in: db) } == 4)
        #expect(try store.actions(sessionId: "a", after: 0, limit: 10) == [])
        #expect(try store.usedKeys(sessionId: "a", limit: 10).map(Set.init) == Self.keys("a", through: 4))
        try store.pool.write { db in try db.execute(sql: "UPDATE sessions SET version = 4 WHERE id = 'a'") }
        try store.commit(SessionStoreTests.commit("a", version: 5, key: "a-5"))
        #expect(try store.usedKeys(sessionId: "a", limit: 10).map(Set.init) == Self.keys("a", through: 5))
        #expect(try store.actions(sessionId: "a", after: 0, limit: 10).map(\.version) == [5])
        // Once its keys are gone too, so is the head.
        try store.pool.write { db in
            try db.execute(sql: "DELETE FROM idempotency_keys WHERE session_id = 'a'")
            try SQLiteStore.cutLog(of: "a", in: db)
        }
        #expect(try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM log_heads WHERE session_id = 'a'") } == 0)
    }

    /// Once retention deleted every key, SQLite numbers keys from 1 again: a session's head can
    /// name the number its own next key is given, which then names itself as the key before.
    /// Walks and deletions read it once.
    @Test func aNumberGivenAgainEndsTheWalk() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedSQLiteStore()
        defer { try? store.close() }
        try store.insert(SessionStoreTests.session("a"))
        try store.commit(SessionStoreTests.commit("a", version: 1, key: "a-1"))
        #expect(try store.pruneIdempotencyRecords(before: "9999-01-01T00:00:00.000Z", limit: 10).removed == 1)
        try store.commit(SessionStoreTests.commit("a", version: 2, key: "a-2"))
        #expect(try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT previous FROM idempotency_keys WHERE id = 1") } == 1)
        #expect(try store.usedKeys(sessionId: "a", limit: 100) == ["a-2"])
        #expect(try store.endSession(id: "a", audit: AuditStamp(credential: "admin"))?.idempotencyKeys == 1)
    }

    /// Each way a session is deleted (ending it, deleting it, retention, erasing its user)
    /// deletes every key, counted by a scan of the whole table; the other user's session keeps
    /// its keys. Erasure also deletes a key written into the file without its link.
    @Test(arguments: ["end", "delete", "retention", "erase"])
    func deletionsLeaveNoKey(_ how: String) throws {
        let (database, store) = try Self.store(versions: 20)
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("c", user: "u-2"))
        for version in 1...3 { try store.commit(SessionStoreTests.commit("c", version: version, user: "u-2", key: "c-\(version)")) }
        try store.pool.write { db in
            try db.execute(sql: """
                INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, created_at)
                VALUES ('a', 'unlinked', x'09', 200, 1, '2026-11-30T00:00:00.000Z')
                """)
        }
        let keyed = Self.keys("a", through: 20).count
        switch how {
        case "end": #expect(try store.endSession(id: "a", audit: AuditStamp(credential: "admin"))?.idempotencyKeys == keyed)
        case "delete": #expect(try store.deleteSession(id: "a"))
        case "retention":
            try store.pool.write { db in
                try db.execute(sql: "UPDATE sessions SET updated_at = '2000-01-01T00:00:00.000Z' WHERE id = 'a'")
                try db.execute(sql: "UPDATE actions SET created_at = '2000-01-01T00:00:00.000Z' WHERE session_id = 'a'")
            }
            #expect(try store.removeSessions(idleBefore: "2001-01-01T00:00:00.000Z", limit: 10).sessionIds == ["a"])
        default:
            let erased = try store.eraseUser(id: "u-1", auditSubject: "erased", audit: AuditStamp(credential: "admin"))
            #expect(erased.idempotencyKeys == 2 * keyed + 1)
            #expect(try Self.stored(store, "b") == 0)
        }
        // Ending or deleting a session follows its chain only: what the store never wrote stays.
        #expect(try Self.stored(store, "a") == (how == "erase" ? 0 : 1))
        #expect(try Self.stored(store, "c") == 3)
        #expect(try store.usedKeys(sessionId: "c", limit: 10).map(Set.init) == ["c-1", "c-2", "c-3"])
    }

    /// An export lists a session's keys oldest first, within its budget of rows, and says
    /// when it stopped short.
    @Test func exportListsKeysOldestFirst() throws {
        let (database, store) = try Self.store(versions: 9)
        defer { withExtendedLifetime(database) { try? store.close() } }
        let whole = try store.exportUser(id: "u-1", limits: UserExportLimits())
        let keys = Dictionary(uniqueKeysWithValues: whole.sessions.map { ($0.session.id, $0.idempotencyKeys.map(\.key)) })
        #expect(keys["a"] == (1...9).filter(Self.keyed).map { "a-\($0)" })
        #expect(whole.sessions.first { $0.session.id == "a" }?.idempotencyKeys.first?.version == 1)
        #expect(!whole.truncated)
        let short = try store.exportUser(id: "u-1", limits: UserExportLimits(rows: 4))
        #expect(short.sessions.flatMap(\.idempotencyKeys).count == 4)
        #expect(short.truncated)
    }

    /// What reads or deletes keys finds them by a key (the chain's rowids, the head row's and
    /// the key's unique indexes), never by scanning the table.
    @Test func noStatementScansTheKeys() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedSQLiteStore()
        defer { try? store.close() }
        let statements: [(String, StatementArguments)] = [
            (SQLiteStore.keyStepSQL, [1, "x", 1]), (SQLiteStore.usedKeyStepSQL, [1, "x", 1]), (SQLiteStore.cutKeysSQL, ["x"]),
            (SQLiteStore.rowAndLogSQL, ["x"]),
            ("SELECT request_hash, status, version, body FROM idempotency_keys WHERE session_id = ? AND key = ?", ["x", "k"]),
            ("SELECT 1 FROM idempotency_keys WHERE session_id = ? AND key = ? AND version = ?", ["x", "k", 1]),
        ]
        for (sql, arguments) in statements {
            let plan = try store.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String? ?? "" }
            }
            let scans = plan.filter { $0.hasPrefix("SCAN") && !["SCAN c", "SCAN chain", "SCAN CONSTANT ROW"].contains($0) }
            #expect(scans.isEmpty, "\(sql): \(plan)")
        }
    }
}

extension KeyChainTests {
    /// Keys stored before migration 21 (two sessions' keys interleaved, a session without
    /// keys, and keys of a session deleted with foreign keys off) are chained in place: each
    /// keeps its rowid, each session's head names its newest, the next key links to it, the
    /// orphans are gone, and the table has its index led by the key and no foreign key.
    @Test func migrationChainsKeysStoredBefore() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let before = try AnswersMigrationTests.store(migratedTo: 20, at: database)
        for id in ["s-1", "s-2", "s-3", "s-4"] { try before.insert(SessionStoreTests.session(id)) }
        try before.pool.writeWithoutTransaction { db in
            // Log entries and heads as migration 20's store wrote them (today's writes a key's link).
            for version in 1...6 {
                for id in ["s-1", "s-2", "s-3"] where id != "s-2" || version <= 3 {
                    try db.execute(sql: """
                        INSERT INTO actions (session_id, version, type, params, interactive, created_at, tree, previous)
                        VALUES (?1, ?2, 't', '{}', 0, '2026-11-30T00:00:00.000Z', ?3,
                                (SELECT newest FROM log_heads WHERE session_id = ?1))
                        """, arguments: [id, version, version == 1 ? Data("{}".utf8) : nil])
                    try db.execute(sql: """
                        INSERT INTO log_heads (session_id, newest) VALUES (?, last_insert_rowid())
                        ON CONFLICT (session_id) DO UPDATE SET newest = excluded.newest
                        """, arguments: [id])
                }
            }
            // s-4's log was compacted away: keys, and no head row.
            for (id, version) in [("s-1", 1), ("s-2", 1), ("s-4", 1), ("s-1", 2), ("s-2", 2), ("s-1", 4), ("s-4", 2), ("s-2", 3)] {
                try db.execute(sql: """
                    INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, created_at)
                    VALUES (?, ?, x'09', 200, ?, '2026-11-30T00:00:00.000Z')
                    """, arguments: [id, "\(id)-\(version)", version])
            }
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: """
                INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, created_at)
                VALUES ('gone', 'gone-1', x'09', 200, 1, '2026-11-30T00:00:00.000Z')
                """)
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        let rowids = try before.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, key FROM idempotency_keys WHERE session_id != 'gone' ORDER BY rowid")
                .map { "\($0[0] as Int64) \($0[1] as String)" }
        }
        try before.close()

        let store = try SQLiteStore(path: database.path)
        defer { try? store.close() }
        #expect(try store.migrate(Migration.bundled(.sqlite)).map(\.version) == [21])
        #expect(try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, key FROM idempotency_keys ORDER BY rowid").map { "\($0[0] as Int64) \($0[1] as String)" }
        } == rowids)
        #expect(try store.usedKeys(sessionId: "s-1", limit: 10).map(Set.init) == ["s-1-1", "s-1-2", "s-1-4"])
        #expect(try store.usedKeys(sessionId: "s-2", limit: 10).map(Set.init) == ["s-2-1", "s-2-2", "s-2-3"])
        #expect(try store.usedKeys(sessionId: "s-3", limit: 10) == [])
        #expect(try store.usedKeys(sessionId: "s-4", limit: 10).map(Set.init) == ["s-4-1", "s-4-2"])
        #expect(try store.headVersion(sessionId: "s-4") == 0)
        try store.commit(SessionStoreTests.commit("s-4", version: 1, key: "s-4-3"))
        #expect(try store.usedKeys(sessionId: "s-4", limit: 10).map(Set.init) == ["s-4-1", "s-4-2", "s-4-3"])
        #expect(try store.idempotentAnswer(sessionId: "s-2", key: "s-2-3")?.version == 3)
        try store.commit(SessionStoreTests.commit("s-1", version: 7, key: "s-1-7"))
        #expect(try store.usedKeys(sessionId: "s-1", limit: 10).map(Set.init) == ["s-1-1", "s-1-2", "s-1-4", "s-1-7"])
        #expect(try Self.stored(store, "gone") == 0)
        let (indexes, references) = try store.pool.read { db in
            (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'idempotency_keys'"),
             try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(idempotency_keys)").count)
        }
        #expect(indexes == ["idempotency_keys_by_key"])
        #expect(references == 0)
        #expect(try store.endSession(id: "s-1", audit: AuditStamp(credential: "admin"))?.idempotencyKeys == 4)
        #expect(try Self.stored(store, "s-1") == 0)
    }
}

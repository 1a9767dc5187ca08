// A commit in a batch writes all of itself or nothing, whether it writes one statement (without
// a savepoint) or several (in one), and its failure leaves the batch's other commits in place.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Commit savepoints (SQLite)")
struct CommitSavepointTests {
    /// A store with sessions s-1, s-2 and s-3, and a trigger made by `trigger` (its SQL). It
    /// rewrites session heads every `LogSnapshots.headInterval` versions, as the server's does
    /// (without a rebuilder every commit writes its head too, and takes a savepoint for it).
    static func store(trigger: String) throws -> (TestDatabase, SQLiteStore) {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        store.rebuildHeads(with: NoHeads())
        for id in ["s-1", "s-2", "s-3"] { try store.insert(SessionStoreTests.session(id)) }
        try store.pool.write { db in try db.execute(sql: trigger) }
        return (database, store)
    }

    static func versions(_ store: SQLiteStore, _ id: String) throws -> [Int] {
        try store.actions(sessionId: id, after: 0, limit: 100).map(\.version)
    }

    static func succeeded(_ results: [Result<Void, any Error>]) -> [Bool] {
        results.map { if case .success = $0 { true } else { false } }
    }

    /// A keyed commit that writes more (a user patch) and whose last write (the patch) fails
    /// takes back its earlier ones (its key, its log entry, its head): without its savepoint
    /// they would stay, an action logged and a key kept that were refused. The session's next
    /// key links to the key before the failed one.
    @Test func aFailedLaterWriteTakesTheEarlierOnesBack() throws {
        let (database, store) = try Self.store(trigger: """
            CREATE TRIGGER refuse_patch BEFORE UPDATE OF state ON users WHEN NEW.state LIKE '%refused%'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END
            """)
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.commit(SessionStoreTests.commit("s-2", version: 1, key: "before"))
        let results = SessionStoreTests.submitted([
            SessionStoreTests.commit("s-1", version: 1, key: "fine"),
            SessionStoreTests.commit("s-2", version: 2, patch: #"{"refused":true}"#, key: "refused"),
            SessionStoreTests.commit("s-3", version: 1, patch: #"{"seen":true}"#),
        ], to: store)
        #expect(Self.succeeded(results) == [true, false, true])
        #expect(try Self.versions(store, "s-1") == [1])
        #expect(try Self.versions(store, "s-2") == [1])
        #expect(try Self.versions(store, "s-3") == [1])
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "fine") != nil)
        #expect(try store.idempotentAnswer(sessionId: "s-2", key: "refused") == nil)
        #expect(try store.headVersion(sessionId: "s-2") == 1)
        // Nothing of it is left half-written: the same version commits once the cause is gone,
        // and its key follows the one before.
        try store.commit(SessionStoreTests.commit("s-2", version: 2, key: "other"))
        #expect(try Self.versions(store, "s-2") == [1, 2])
        #expect(try store.usedKeys(sessionId: "s-2", limit: 10).map(Set.init) == ["before", "other"])
    }

    /// A keyed commit that writes nothing else runs without a savepoint, its key first: when
    /// the key fails (here a planted failure; in use, a key already used) nothing of it was
    /// written, and when its entry fails after it the key's row is deleted again. Either way
    /// the batch's other commits stay, and the key is free for the action's next attempt.
    @Test func aKeyedCommitWithoutASavepointWritesAllOrNothing() throws {
        let (database, store) = try Self.store(trigger: """
            CREATE TRIGGER refuse_entry BEFORE INSERT ON actions WHEN NEW.session_id = 's-2'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END;
            CREATE TRIGGER refuse_key BEFORE INSERT ON idempotency_keys WHEN NEW.key = 'refused'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END
            """)
        defer { withExtendedLifetime(database) { try? store.close() } }
        let results = SessionStoreTests.submitted([
            SessionStoreTests.commit("s-1", version: 1, key: "k-1"),
            SessionStoreTests.commit("s-2", version: 1, key: "k-2"),
            SessionStoreTests.commit("s-3", version: 1, key: "refused"),
            SessionStoreTests.commit("s-1", version: 2, key: "k-3"),
        ], to: store)
        #expect(Self.succeeded(results) == [true, false, false, true])
        #expect(try Self.versions(store, "s-1") == [1, 2])
        #expect(try Self.versions(store, "s-2") == [])
        #expect(try Self.versions(store, "s-3") == [])
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "k-3")?.version == 2)
        #expect(try store.idempotentAnswer(sessionId: "s-2", key: "k-2") == nil)
        #expect(try store.idempotentAnswer(sessionId: "s-3", key: "refused") == nil)
        let keys = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM idempotency_keys") }
        #expect(keys == 2)
        try store.pool.write { db in try db.execute(sql: "DROP TRIGGER refuse_entry; DROP TRIGGER refuse_key") }
        try store.commit(SessionStoreTests.commit("s-2", version: 1, key: "k-2"))
        try store.commit(SessionStoreTests.commit("s-3", version: 1, key: "refused"))
        #expect(try Self.versions(store, "s-2") == [1])
        #expect(try store.idempotentAnswer(sessionId: "s-2", key: "k-2")?.version == 1)
        #expect(try store.idempotentAnswer(sessionId: "s-3", key: "refused")?.version == 1)
    }

    /// When the key of a failed entry cannot be deleted again, the batch fails whole: no commit
    /// of it is kept, rather than a key kept whose action was never logged (which would replay
    /// a version the action never made).
    @Test func aKeyThatCannotBeTakenBackFailsTheBatch() throws {
        let (database, store) = try Self.store(trigger: """
            CREATE TRIGGER refuse_entry BEFORE INSERT ON actions WHEN NEW.session_id = 's-2'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END
            """)
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.pool.write { db in
            try db.execute(sql: """
                CREATE TRIGGER keep_keys BEFORE DELETE ON idempotency_keys
                BEGIN SELECT RAISE(ABORT, 'planted failure'); END
                """)
        }
        let results = SessionStoreTests.submitted([
            SessionStoreTests.commit("s-1", version: 1, key: "k-1"),
            SessionStoreTests.commit("s-2", version: 1, key: "k-2"),
            SessionStoreTests.commit("s-3", version: 1, key: "k-3"),
        ], to: store)
        #expect(Self.succeeded(results) == [false, false, false])
        for result in results {
            if case .failure(let error) = result { #expect(error is SQLiteStore.KeyNotTakenBack, "\(error)") }
        }
        for id in ["s-1", "s-2", "s-3"] { #expect(try Self.versions(store, id) == []) }
        let keys = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM idempotency_keys") }
        #expect(keys == 0)
        // The writer goes on: a later batch commits.
        try store.commit(SessionStoreTests.commit("s-1", version: 1, key: "k-1"))
        #expect(try Self.versions(store, "s-1") == [1])
    }

    /// A commit that writes only its log entry runs without a savepoint: when that one insert
    /// fails, SQLite undoes it alone, and the commits before and after it in the batch stay.
    @Test func aFailedOnlyWriteLeavesTheBatch() throws {
        let (database, store) = try Self.store(trigger: """
            CREATE TRIGGER refuse_entry BEFORE INSERT ON actions WHEN NEW.session_id = 's-2'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END
            """)
        defer { withExtendedLifetime(database) { try? store.close() } }
        let results = SessionStoreTests.submitted([
            SessionStoreTests.commit("s-1", version: 1), SessionStoreTests.commit("s-2", version: 1),
            SessionStoreTests.commit("s-3", version: 1), SessionStoreTests.commit("s-1", version: 2),
        ], to: store)
        #expect(Self.succeeded(results) == [true, false, true, true])
        #expect(try Self.versions(store, "s-1") == [1, 2])
        #expect(try Self.versions(store, "s-2") == [])
        #expect(try Self.versions(store, "s-3") == [1])
        try store.pool.write { db in try db.execute(sql: "DROP TRIGGER refuse_entry") }
        try store.commit(SessionStoreTests.commit("s-2", version: 1))
        #expect(try Self.versions(store, "s-2") == [1])
    }

    /// The savepoint opens only for a commit that writes more than its entry and its key, once,
    /// and is closed when the commit ends either way.
    @Test func opensOnlyForSeveralWrites() throws {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("s-1"))
        let opened = try store.pool.write { db -> [Bool] in
            var savepoint = try CommitSavepoint(db)
            let statements = try EntryStatements(db, arena: BindArena(capacity: 16 * 1024))
            defer { statements.clearBindings() }  // as the writer does before the arena goes
            var opened: [Bool] = []
            for commit in [SessionStoreTests.commit("s-1", version: 1), SessionStoreTests.commit("s-1", version: 2, key: "k"),
                           SessionStoreTests.commit("s-1", version: 3, patch: "{}")] {
                _ = try SQLiteStore.write(commit, in: db, known: nil, keepsEveryHead: false, savepoint: &savepoint, statements: statements)
                opened.append(savepoint.isOpen)
                try savepoint.release()
                #expect(!savepoint.isOpen)
            }
            return opened
        }
        #expect(opened == [false, false, true])
    }
}

/// A head rebuilder these tests never need: they read no session with entries past its head.
struct NoHeads: SessionHeadRebuilder {
    func head(of record: SessionRecord, after entries: [ActionRecord]) -> SessionHead? { nil }
}

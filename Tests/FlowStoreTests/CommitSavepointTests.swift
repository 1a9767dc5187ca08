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
    /// A store with sessions s-1, s-2 and s-3, and a trigger made by `trigger` (its SQL).
    static func store(trigger: String) throws -> (TestDatabase, SQLiteStore) {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
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

    /// A keyed commit whose second write (its answer) fails takes back its first (the log
    /// entry): without its savepoint the entry would stay, an action logged that was refused.
    @Test func aFailedLaterWriteTakesTheEarlierOnesBack() throws {
        let (database, store) = try Self.store(trigger: """
            CREATE TRIGGER refuse_answer BEFORE INSERT ON idempotency_keys WHEN NEW.key = 'refused'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END
            """)
        defer { withExtendedLifetime(database) { try? store.close() } }
        let results = SessionStoreTests.submitted([
            SessionStoreTests.commit("s-1", version: 1, key: "fine"),
            SessionStoreTests.commit("s-2", version: 1, key: "refused"),
            SessionStoreTests.commit("s-3", version: 1, patch: #"{"seen":true}"#),
        ], to: store)
        #expect(Self.succeeded(results) == [true, false, true])
        #expect(try Self.versions(store, "s-1") == [1])
        #expect(try Self.versions(store, "s-2") == [])
        #expect(try Self.versions(store, "s-3") == [1])
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "fine") != nil)
        #expect(try store.idempotentAnswer(sessionId: "s-2", key: "refused") == nil)
        #expect(try store.session(id: "s-2")?.version == 0)
        // Nothing of it is left half-written: the same version commits once the cause is gone.
        try store.commit(SessionStoreTests.commit("s-2", version: 1, key: "other"))
        #expect(try Self.versions(store, "s-2") == [1])
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

    /// The savepoint opens only for a commit that writes more than its entry, once, and is
    /// closed when the commit ends either way.
    @Test func opensOnlyForSeveralWrites() throws {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("s-1"))
        let opened = try store.pool.write { db -> [Bool] in
            var savepoint = try CommitSavepoint(db)
            var opened: [Bool] = []
            for commit in [SessionStoreTests.commit("s-1", version: 1), SessionStoreTests.commit("s-1", version: 2, key: "k"),
                           SessionStoreTests.commit("s-1", version: 3, patch: "{}")] {
                try SQLiteStore.write(commit, in: db, known: nil, keepsEveryHead: false, savepoint: &savepoint)
                opened.append(savepoint.isOpen)
                try savepoint.release()
                #expect(!savepoint.isOpen)
            }
            return opened
        }
        #expect(opened == [false, true, true])
    }
}

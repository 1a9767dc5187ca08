// SQLite's writer keeps the versions its batches committed, and forgets them when anything else
// writes the file: another connection, another process, or another write on the writer itself.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Committed versions (SQLite)")
struct CommittedVersionsTests {
    /// A store on a file of its own, with one session.
    static func store() throws -> (TestDatabase, SQLiteStore) {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        try store.insert(SessionStoreTests.session("s-1"))
        return (database, store)
    }

    /// Another connection on the file, as a script or another process is.
    static func outside(_ database: TestDatabase) throws -> DatabaseQueue {
        try DatabaseQueue(path: database.location)
    }

    static func reads(_ store: SQLiteStore) -> Int { store.versions.databaseReads.load(ordering: .relaxed) }

    /// Only a session's first commit reads its version from the database; the log is whole.
    @Test func laterCommitsUseTheBatchesVersions() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("s-2"))
        for version in 1...20 {
            try store.commit(SessionStoreTests.commit("s-1", version: version))
            try store.commit(SessionStoreTests.commit("s-2", version: version))
        }
        #expect(Self.reads(store) == 2)
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 100).map(\.version) == Array(1...20))
        #expect(try store.session(id: "s-2")?.version == 20)
        // A stale commit is refused from what the batches know; a refused commit's session is
        // forgotten, so the next is refused from the database.
        #expect(throws: CommitError.versionConflict(stored: 20)) { try store.commit(SessionStoreTests.commit("s-1", version: 20)) }
        #expect(Self.reads(store) == 2)
        #expect(throws: CommitError.versionConflict(stored: 20)) { try store.commit(SessionStoreTests.commit("s-1", version: 22)) }
        #expect(Self.reads(store) == 3)
    }

    /// Another connection moves the session's row ahead of its log (what no unique index
    /// would catch): the next commit reads the database and is refused.
    @Test func anotherConnectionsWriteIsSeen() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        for version in 1...3 { try store.commit(SessionStoreTests.commit("s-1", version: version)) }
        let outside = try Self.outside(database)
        try outside.write { db in try db.execute(sql: "UPDATE sessions SET version = 10 WHERE id = 's-1'") }
        #expect(throws: CommitError.versionConflict(stored: 10)) { try store.commit(SessionStoreTests.commit("s-1", version: 4)) }
        try store.commit(SessionStoreTests.commit("s-1", version: 11))
        // Another process's log entry, linked as the store links its own (migration 20): the
        // version it wrote is refused, the next one applies.
        try outside.write { db in
            try db.execute(sql: """
                INSERT INTO actions (session_id, version, type, params, interactive, created_at, previous)
                VALUES ('s-1', 12, 'outside', '{}', 0, '2026-11-30T00:00:00.000Z', (SELECT newest FROM log_heads WHERE session_id = 's-1'));
                UPDATE log_heads SET newest = last_insert_rowid() WHERE session_id = 's-1';
                """)
        }
        #expect(throws: CommitError.versionConflict(stored: 12)) { try store.commit(SessionStoreTests.commit("s-1", version: 12)) }
        try store.commit(SessionStoreTests.commit("s-1", version: 13))
        #expect(try store.actions(sessionId: "s-1", after: 10, limit: 100).map(\.type) == ["t11", "outside", "t13"])
    }

    /// A write through the writer connection that is not a batch (here a session's version
    /// moved, then the session deleted) is seen by the next batch too.
    @Test func theWritersOtherWritesAreSeen() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        for version in 1...3 { try store.commit(SessionStoreTests.commit("s-1", version: version)) }
        try store.pool.write { db in try db.execute(sql: "UPDATE sessions SET version = 7 WHERE id = 's-1'") }
        #expect(throws: CommitError.versionConflict(stored: 7)) { try store.commit(SessionStoreTests.commit("s-1", version: 4)) }
        try store.commit(SessionStoreTests.commit("s-1", version: 8))
        #expect(try store.deleteSession(id: "s-1"))
        #expect(throws: CommitError.sessionNotFound) { try store.commit(SessionStoreTests.commit("s-1", version: 9)) }
    }

    /// A commit that fails in its batch is forgotten: the session's next commit reads the
    /// database, and a batch with a failed commit still keeps the versions of the others.
    @Test func aFailedCommitReadsAgain() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("s-2"))
        try store.commit(SessionStoreTests.commit("s-1", version: 1))
        try store.commit(SessionStoreTests.commit("s-2", version: 1))
        #expect(Self.reads(store) == 2)
        var keyed = SessionStoreTests.commit("s-1", version: 2, key: "k")
        let outcomes = SessionStoreTests.submitted([keyed, SessionStoreTests.commit("s-2", version: 2)], to: store)
        #expect(outcomes.allSatisfy { if case .success = $0 { true } else { false } })
        // The key is used: the commit is refused, and s-1 forgotten while s-2 is kept.
        keyed = SessionStoreTests.commit("s-1", version: 3, key: "k")
        let refused = SessionStoreTests.submitted([keyed, SessionStoreTests.commit("s-2", version: 3)], to: store)
        #expect(refused.map { if case .success = $0 { true } else { false } } == [false, true])
        #expect(Self.reads(store) == 2)
        try store.commit(SessionStoreTests.commit("s-1", version: 3))
        try store.commit(SessionStoreTests.commit("s-2", version: 4))
        #expect(Self.reads(store) == 3)
    }

    /// A trigger writes the log inside the batch's own transaction, where no count moves: once
    /// the database has one, versions are read from the database, and a commit on a version the
    /// trigger took is refused. A temporary trigger, on the writer's connection only, counts
    /// too. The trigger fires once the commit has moved its session's head (migration 20), and
    /// links its entry as the store does.
    @Test(arguments: ["TRIGGER", "TEMP TRIGGER"])
    func triggersAreSeen(_ kind: String) throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        for version in 1...3 { try store.commit(SessionStoreTests.commit("s-1", version: version)) }
        // Outside a transaction, so a temporary trigger changes nothing of the main database.
        try store.pool.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE \(kind) elsewhere AFTER UPDATE ON main.log_heads
                WHEN (SELECT type FROM main.actions WHERE rowid = NEW.newest) = 't4'
                BEGIN
                    INSERT INTO actions (session_id, version, type, params, interactive, created_at, previous)
                    SELECT session_id, version + 1, 'elsewhere', '{}', 0, created_at, rowid FROM main.actions WHERE rowid = NEW.newest;
                    UPDATE log_heads SET newest = last_insert_rowid() WHERE session_id = NEW.session_id;
                END
                """)
        }
        try store.commit(SessionStoreTests.commit("s-1", version: 4))
        #expect(throws: CommitError.versionConflict(stored: 5)) { try store.commit(SessionStoreTests.commit("s-1", version: 5)) }
        try store.commit(SessionStoreTests.commit("s-1", version: 6))
        #expect(try store.actions(sessionId: "s-1", after: 3, limit: 100).map(\.type) == ["t4", "elsewhere", "t6"])
        // Without the trigger, the batches keep versions again.
        try store.pool.write { db in try db.execute(sql: "DROP TRIGGER elsewhere") }
        let reads = Self.reads(store)
        for version in 7...9 { try store.commit(SessionStoreTests.commit("s-1", version: version)) }
        #expect(Self.reads(store) == reads + 1)
    }
}

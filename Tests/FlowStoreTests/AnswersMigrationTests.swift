// Migration 17 moves the stored answers of idempotency keys to a rowid table: a database written
// before keeps every answer, still refuses a key twice, and prunes old answers by age (in rowid
// order since migration 18, which drops the index on their time).
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Answers migration (SQLite)")
struct AnswersMigrationTests {
    /// A store on `database` with the bundled migrations up to `version` applied, the next one
    /// (under test) among those bundled.
    static func store(migratedTo version: Int, at database: TestDatabase) throws -> SQLiteStore {
        let store = try SQLiteStore(path: database.path)
        let bundled = Migration.bundled(.sqlite)
        let before = bundled.filter { $0.version <= version }
        #expect(before.count < bundled.count, "the migration under test is bundled")
        try store.migrate(before)
        return store
    }

    /// A keyed commit as the store wrote it on those migrations: its log entry, without the
    /// link to the one before that today's store writes (migration 20 adds the links and the
    /// heads), and its answer.
    static func commitAsBefore(_ commit: ActionCommit, in store: SQLiteStore) throws {
        try store.pool.write { db in
            try db.execute(sql: """
                INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition, created_at, tree)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [commit.sessionId, commit.version, commit.action.type, commit.action.source, commit.action.params,
                                 commit.action.interactive, commit.action.handledBy, commit.action.transition, commit.action.createdAt,
                                 Data(commit.tree)])
            guard let (key, answer) = commit.idempotency else { return }
            try db.execute(sql: """
                INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [commit.sessionId, key, Data(answer.requestHash), answer.status, answer.version,
                                 answer.body.map { Data($0) }, commit.action.createdAt])
        }
    }

    /// Answers written under migrations 1 to 16 read back the same after 17; a key stored before
    /// is still refused, new keys are stored beside the old ones, and pruning by age still finds
    /// the oldest.
    @Test func answersWrittenBeforeMoveWhole() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let before = try Self.store(migratedTo: 16, at: database)
        let bundled = Migration.bundled(.sqlite)
        var answers: [String: IdempotentAnswer] = [:]
        for id in ["s-1", "s-2"] {
            try before.insert(SessionStoreTests.session(id))
            for version in 1...30 {
                var commit = SessionStoreTests.commit(id, version: version)
                let answer = IdempotentAnswer(requestHash: Array(repeating: UInt8(version), count: 32), status: 200, version: version,
                                              body: Array(repeating: UInt8(ascii: "a") + UInt8(version % 20), count: 1_500 + version))
                commit.idempotency = ("\(id)-k\(version)", answer)
                try Self.commitAsBefore(commit, in: before)
                answers["\(id)-k\(version)"] = answer
            }
        }
        // The oldest answer, as pruning by age finds it.
        try before.pool.write { db in
            try db.execute(sql: "UPDATE idempotency_keys SET created_at = '2000-01-01T00:00:00.000Z' WHERE key = 's-1-k1'")
        }
        try before.close()

        let store = try SQLiteStore(path: database.path)
        defer { try? store.close() }
        let applied = try store.migrate(bundled)
        #expect(applied.map(\.version).contains(17))
        for (key, answer) in answers {
            let id = String(key.prefix(3))
            #expect(try store.idempotentAnswer(sessionId: id, key: key) == answer, "\(key)")
        }
        // A key used before is refused; a new one is stored.
        var again = SessionStoreTests.commit("s-1", version: 31)
        again.idempotency = ("s-1-k5", IdempotentAnswer(requestHash: [1], status: 200, version: 31, body: [1]))
        #expect(throws: CommitError.versionConflict(stored: 30)) { try store.commit(again) }
        again.idempotency = ("s-1-new", IdempotentAnswer(requestHash: [1], status: 200, version: 31, body: [1]))
        try store.commit(again)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "s-1-new")?.version == 31)
        // The table's unique index refuses a second answer under one key, whoever writes it.
        #expect(throws: DatabaseError.self) {
            try store.pool.write { db in
                try db.execute(sql: """
                    INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
                    VALUES ('s-2', 's-2-k3', x'00', 200, 3, x'00', '2026-11-30T00:00:00.000Z')
                    """)
            }
        }
        let pruned = try store.pruneIdempotencyRecords(before: "2001-01-01T00:00:00.000Z", limit: 100)
        #expect(pruned.removed == 1)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "s-1-k1") == nil)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "s-1-k2") == answers["s-1-k2"])
        let layout = try store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'idempotency_keys'") ?? ""
        }
        #expect(!layout.contains("WITHOUT ROWID"))
        // Migration 18: answers are pruned in rowid order, with no index on their time to keep.
        let indexes = try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'idempotency_keys'")
        }
        #expect(indexes == ["idempotency_keys_by_key"])
    }
}

extension AnswersMigrationTests {
    /// Migration 19 lets an answer be stored without its body (the server makes it again from
    /// the log): answers written under migrations 1 to 18 keep theirs, byte for byte, and
    /// their order of insertion, which retention prunes by, less those of sessions no longer
    /// stored; keys used before are still refused.
    @Test func bodiesStoredBeforeStayAndNewAnswersHaveNone() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let before = try Self.store(migratedTo: 18, at: database)
        let bundled = Migration.bundled(.sqlite)
        try before.insert(SessionStoreTests.session("s-1"))
        var answers: [IdempotentAnswer] = []
        for version in 1...20 {
            var commit = SessionStoreTests.commit("s-1", version: version)
            let answer = IdempotentAnswer(requestHash: Array(repeating: UInt8(version), count: 32), status: 200, version: version,
                                          body: Array(repeating: UInt8(version), count: 1_400 + version))
            commit.idempotency = ("k\(version)", answer)
            try Self.commitAsBefore(commit, in: before)
            answers.append(answer)
        }
        // Out of key order and of time order: the rowids are what pruning follows.
        try before.pool.write { db in
            try db.execute(sql: "UPDATE idempotency_keys SET created_at = '2000-01-01T00:00:00.000Z' WHERE key IN ('k1', 'k2', 'k5')")
        }
        let rowids = try before.pool.read { db in try String.fetchAll(db, sql: "SELECT key FROM idempotency_keys ORDER BY rowid") }
        // An answer of a session deleted with foreign keys off (the sqlite3 shell's default).
        try before.pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: """
                INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
                VALUES ('gone', 'orphan', x'00', 200, 1, x'7B7D', '2026-11-30T00:00:00.000Z')
                """)
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        try before.close()

        let store = try SQLiteStore(path: database.path)
        defer { try? store.close() }
        #expect(try store.migrate(bundled).map(\.version).contains(19))
        for answer in answers {
            #expect(try store.idempotentAnswer(sessionId: "s-1", key: "k\(answer.version)") == answer)
        }
        #expect(try store.pool.read { db in try String.fetchAll(db, sql: "SELECT key FROM idempotency_keys ORDER BY rowid") } == rowids,
                "the answers in their order, without the orphan")
        var again = SessionStoreTests.commit("s-1", version: 21)
        again.idempotency = ("k3", IdempotentAnswer(requestHash: [1], status: 200, version: 21, body: nil))
        #expect(throws: CommitError.versionConflict(stored: 20)) { try store.commit(again) }
        again.idempotency = ("new", IdempotentAnswer(requestHash: [1], status: 200, version: 21, body: nil))
        try store.commit(again)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "new")?.body == nil)
        // The first answers in insertion order older than the horizon go (k1, k2), not k5 after k3.
        #expect(try store.pruneIdempotencyRecords(before: "2001-01-01T00:00:00.000Z", limit: 100).removed == 2)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "k5") == answers[4])
        let indexes = try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'idempotency_keys'")
        }
        #expect(indexes == ["idempotency_keys_by_key"])
    }
}

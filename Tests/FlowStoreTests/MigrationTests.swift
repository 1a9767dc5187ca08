// FlowStore on a real SQLite file: migrating, re-migrating, refusing newer schemas, durability.
import FlowStore
import Foundation
import GRDB
import Testing

/// A fresh database path in a temporary directory, removed with the directory at deinit.
final class TemporaryDatabase {
    let directory: URL
    var path: String { directory.appending(path: "test.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "flowstack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A store on this file, migrated to the bundled schema.
    func migratedStore() throws -> FlowStore {
        let store = try FlowStore(path: path)
        try store.migrate()
        return store
    }
}

struct MigrationTests {
    /// The bundled migrations are the repo's migrations/ folder, numbered 1, 2, 3, …
    @Test func bundledMigrationsMatchTheRepoFolder() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appending(path: "../../migrations").standardizedFileURL
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(!files.isEmpty)
        #expect(Migration.bundled.map { String(format: "%04d_%@.sql", $0.version, $0.name) } == files)
        for (migration, file) in zip(Migration.bundled, files) {
            #expect(migration.sql == (try String(contentsOf: folder.appending(path: file), encoding: .utf8)))
        }
        #expect(Migration.bundled.map(\.version) == Array(1...Migration.bundled.count))
    }

    /// A fresh database migrates to the newest version; migrating again changes nothing.
    @Test func freshDatabaseMigratesOnce() throws {
        let database = try TemporaryDatabase()
        defer { withExtendedLifetime(database) {} }
        let store = try FlowStore(path: database.path)
        let applied = try store.migrate()
        #expect(applied == Migration.bundled)
        #expect(try store.schemaVersion() == Migration.bundled.count)
        #expect(try store.migrate().isEmpty)
        let rows = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM schema_migrations") }
        #expect(rows == Migration.bundled.count)
        try store.close()
        let reopened = try FlowStore(path: database.path)
        #expect(try reopened.migrate().isEmpty)
        #expect(reopened.healthCheck() == Migration.bundled.count)
    }

    /// Only the migrations not yet applied run, in order.
    @Test func appliesOnlyPendingMigrations() throws {
        let database = try TemporaryDatabase()
        defer { withExtendedLifetime(database) {} }
        let store = try FlowStore(path: database.path)
        let first = [Migration(version: 1, name: "a", sql: "CREATE TABLE a (x INTEGER);")]
        let both = first + [Migration(version: 2, name: "b", sql: "CREATE TABLE b (y INTEGER);")]
        #expect(try store.migrate(first).map(\.name) == ["a"])
        #expect(try store.migrate(both).map(\.name) == ["b"])
        #expect(try store.schemaVersion() == 2)
    }

    /// A database migrated by a newer binary is refused, with a message that says what to do, and is left untouched.
    @Test func newerSchemaIsRefused() throws {
        let database = try TemporaryDatabase()
        defer { withExtendedLifetime(database) {} }
        let store = try FlowStore(path: database.path)
        try store.migrate()
        let future = Migration.bundled + [Migration(version: Migration.bundled.count + 1, name: "future", sql: "CREATE TABLE future (z INTEGER);")]
        try store.migrate(future)
        #expect(throws: StoreError.schemaTooNew(path: database.path, found: future.count, known: Migration.bundled.count)) {
            try store.migrate()
        }
        let message = StoreError.schemaTooNew(path: "x", found: 3, known: 2).description
        #expect(message.contains("schema version 3") && message.contains("up to 2"))
        #expect(try store.schemaVersion() == future.count)
    }

    /// A failing migration rolls back entirely and leaves the version where it was.
    @Test func failingMigrationRollsBack() throws {
        let database = try TemporaryDatabase()
        defer { withExtendedLifetime(database) {} }
        let store = try FlowStore(path: database.path)
        let broken = [Migration(version: 1, name: "half", sql: "CREATE TABLE ok (x INTEGER); CREATE TABLE ok (x INTEGER);")]
        #expect(throws: (any Error).self) { try store.migrate(broken) }
        #expect(try store.schemaVersion() == 0)
        #expect(try store.pool.read { db in try db.tableExists("ok") } == false)
    }

    /// Migration file names parse as NNNN_name.sql and nothing else.
    @Test(arguments: [("migrations/0001_users.sql", 1, "users"), ("0012_two_words.sql", 12, "two_words")])
    func parsesFileNames(path: String, version: Int, name: String) {
        #expect(Migration(path: path, sql: "") == Migration(version: version, name: name, sql: ""))
    }

    @Test(arguments: ["0001.sql", "x_users.sql", "0001_users.txt", "0000_zero.sql", "0001_.sql"])
    func rejectsBadFileNames(path: String) {
        #expect(Migration(path: path, sql: "") == nil)
    }

    /// The file is in WAL mode; the writer commits with synchronous NORMAL by default and FULL for `--durability full`.
    @Test(arguments: [(Durability.normal, 1), (Durability.full, 2)])
    func durabilitySetsSynchronous(durability: Durability, expected: Int) throws {
        let database = try TemporaryDatabase()
        defer { withExtendedLifetime(database) {} }
        let store = try FlowStore(path: database.path, durability: durability)
        let mode = try store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let written = try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(written == expected)
    }
}

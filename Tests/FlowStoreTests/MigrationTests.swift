// Migrating, re-migrating, refusing newer schemas, durability: on SQLite and on PostgreSQL (each a
// named case).
import FlowStore
import SQLiteStore
import StoreTestSupport
import Foundation
import GRDB
import Testing

@Suite("Store lifecycle: schema and migrations")
struct MigrationTests {
    /// The bundled migrations of each dialect are the repo's migrations/DIALECT/ folder, numbered in ascending order
    @Test(arguments: SQLDialect.allCases)
    func bundledMigrationsMatchTheRepoFolder(dialect: SQLDialect) throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appending(path: "../../migrations/\(dialect.rawValue)").standardizedFileURL
        let bundled = Migration.bundled(dialect)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(!files.isEmpty)
        #expect(bundled.map { String(format: "%04d_%@.sql", $0.version, $0.name) } == files)
        for (migration, file) in zip(bundled, files) {
            #expect(migration.sql == (try String(contentsOf: folder.appending(path: file), encoding: .utf8)))
        }
        // Ascending, each number once; a number may be skipped (another branch's, merged later).
        #expect(bundled.map(\.version) == Array(Set(bundled.map(\.version))).sorted())
    }

    /// A fresh database migrates to the newest version; migrating again changes nothing.
    @Test(arguments: TestStoreKind.allCases) func freshDatabaseMigratesOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.open()
        let bundled = Migration.bundled(store.dialect)
        let applied = try store.migrate()
        #expect(applied == bundled)
        #expect(try store.schemaVersion() == (bundled.last?.version ?? 0))
        #expect(try store.migrate().isEmpty)
        try store.close()
        let reopened = try database.open()
        #expect(try reopened.migrate().isEmpty)
        #expect(reopened.healthCheck() == (bundled.last?.version ?? 0))
    }

    /// Only the migrations not yet applied run, in order.
    @Test(arguments: TestStoreKind.allCases) func appliesOnlyPendingMigrations(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.open()
        let first = [Migration(version: 1, name: "a", sql: "CREATE TABLE a (x INTEGER);")]
        let both = first + [Migration(version: 2, name: "b", sql: "CREATE TABLE b (y INTEGER);")]
        #expect(try store.migrate(first).map(\.name) == ["a"])
        #expect(try store.migrate(both).map(\.name) == ["b"])
        #expect(try store.schemaVersion() == 2)
    }

    /// A database migrated by a newer binary is refused, with a message that says what to do, and is left untouched.
    @Test(arguments: TestStoreKind.allCases) func newerSchemaIsRefused(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.open()
        try store.migrate()
        let bundled = Migration.bundled(store.dialect)
        let future = bundled + [Migration(version: (bundled.last?.version ?? 0) + 1, name: "future", sql: "CREATE TABLE future (z INTEGER);")]
        try store.migrate(future)
        #expect(throws: StoreError.schemaTooNew(path: database.location, found: (future.last?.version ?? 0), known: (bundled.last?.version ?? 0))) {
            try store.migrate()
        }
        let message = StoreError.schemaTooNew(path: "x", found: 3, known: 2).description
        #expect(message.contains("schema version 3") && message.contains("up to 2"))
        #expect(try store.schemaVersion() == (future.last?.version ?? 0))
    }

    /// A failing migration rolls back entirely and leaves the version where it was.
    @Test(arguments: TestStoreKind.allCases) func failingMigrationRollsBack(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.open()
        let broken = [Migration(version: 1, name: "half", sql: "CREATE TABLE ok (x INTEGER); CREATE TABLE ok (x INTEGER);")]
        #expect(throws: (any Error).self) { try store.migrate(broken) }
        #expect(try store.schemaVersion() == 0)
        // The first table did not stay: creating it again succeeds.
        #expect(try store.migrate([Migration(version: 1, name: "whole", sql: "CREATE TABLE ok (x INTEGER);")]).count == 1)
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

    /// The file is in WAL mode; the writer commits with synchronous NORMAL by default and FULL for `--durability full`, with a 32 MiB page cache.
    @Test(arguments: [(Durability.normal, 1), (Durability.full, 2)])
    func durabilitySetsSynchronous(durability: Durability, expected: Int) throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try SQLiteStore(path: database.path, durability: durability)
        let mode = try store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let written = try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(written == expected)
        // The writer keeps 32 MiB of pages (a negative size is in KiB).
        #expect(try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } == -32768)
    }
}

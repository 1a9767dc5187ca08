// Online backups: consistent while commits go on, never overwriting, never partial.
import FlowStore
import SQLiteStore
import StoreTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

/// Backups copy SQLite files (on PostgreSQL, `pg_dump` does): these run on SQLite only.
@Suite("SQLite backups")
struct BackupTests {
    /// A backup taken while another thread commits is one consistent state: every session's
    /// version equals the number of its logged actions, and the copy passes integrity_check.
    @Test func backupWhileWritingIsConsistent() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedSQLiteStore()
        for index in 0..<8 { try store.insert(SessionStoreTests.session("b\(index)")) }
        let writing = Atomic<Bool>(true)
        let writer = Thread {
            var version = 0
            while writing.load(ordering: .relaxed) && version < 2_000 {
                version += 1
                for index in 0..<8 { try? store.commit(SessionStoreTests.commit("b\(index)", version: version)) }
            }
        }
        writer.start()
        Thread.sleep(forTimeInterval: 0.05)
        let copies = (0..<3).map { database.folder.appending(path: "copy\($0).sqlite").path }
        for copy in copies {
            try SQLiteStore.backup(from: database.path, to: copy)
        }
        writing.store(false, ordering: .relaxed)
        for copy in copies {
            let restored = try DatabaseQueue(path: copy)
            try restored.read { db in
                #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
                let rows = try Row.fetchAll(db, sql: """
                    SELECT coalesce((SELECT max(a.version) FROM actions a WHERE a.session_id = s.id), s.version),
                        (SELECT COUNT(*) FROM actions a WHERE a.session_id = s.id) FROM sessions s
                    """)
                #expect(rows.count == 8)
                for row in rows { #expect((row[0] as Int) == (row[1] as Int)) }
            }
        }
    }

    /// A backup never overwrites a file, and a missing source is an error with no file left.
    @Test func backupRefusesToOverwriteOrInvent() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        _ = try database.migratedSQLiteStore()
        let copy = database.folder.appending(path: "copy.sqlite").path
        try SQLiteStore.backup(from: database.path, to: copy)
        #expect(throws: SQLiteStore.BackupError.self) { try SQLiteStore.backup(from: database.path, to: copy) }
        let missing = database.folder.appending(path: "missing.sqlite").path
        let target = database.folder.appending(path: "never.sqlite").path
        #expect(throws: SQLiteStore.BackupError.self) { try SQLiteStore.backup(from: missing, to: target) }
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(!FileManager.default.fileExists(atPath: target + ".partial"))
    }
}

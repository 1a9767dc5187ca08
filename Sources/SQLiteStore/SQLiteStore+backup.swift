// Online backups through SQLite's backup API, safe while a server writes the same file.
import Foundation
import FlowStore
import GRDB

extension SQLiteStore {
    /// Why a backup could not be made.
    public struct BackupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Copies the database at `source` to a new file at `destination`, consistently, while other
    /// processes may be writing it: SQLite's online backup copies every page in one step from a
    /// read snapshot, so the copy is the database as of one committed transaction. The copy is
    /// written beside `destination` and renamed into place once complete and checked with
    /// `PRAGMA integrity_check`, so a failed backup never leaves a partial file. Returns the copy's
    /// schema version.
    ///
    /// ```swift
    /// try SQLiteStore.backup(from: "./flowstack.sqlite", to: "./backup.sqlite")
    /// ```
    @discardableResult
    public static func backup(from source: String, to destination: String) throws -> Int {
        guard FileManager.default.fileExists(atPath: source) else {
            throw BackupError(description: "there is no database at \(source)")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw BackupError(description: "\(destination) exists already; choose a new file (a backup never overwrites)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let sourceDatabase: DatabasePool
        do {
            sourceDatabase = try DatabasePool(path: source, configuration: configuration)
        } catch {
            // Read-only here: only a folder or a file that is not a database explain it in words.
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: source, isDirectory: &isFolder), isFolder.boolValue {
                throw BackupError(description: "cannot open \(source): it is a folder, not a database file")
            }
            throw BackupError(description: openError(path: source, error).description)
        }
        let partial = destination + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            let copy = try DatabaseQueue(path: partial)
            try sourceDatabase.backup(to: copy)
            let (check, version) = try copy.read { db in
                (try String.fetchOne(db, sql: "PRAGMA integrity_check"),
                 try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"))
            }
            try copy.close()
            try sourceDatabase.close()
            guard check == "ok" else {
                throw BackupError(description: "the copy failed its integrity check: \(check ?? "no answer")")
            }
            try FileManager.default.moveItem(atPath: partial, toPath: destination)
            return version ?? 0
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }
}

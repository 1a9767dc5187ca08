// `flowstack backup`: an online, consistent copy of the database, safe while serving.
import ArgumentParser
import FlowStore
import Foundation
import SQLiteStore

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the database to a new file, consistently, while the server runs.",
        discussion: """
            Uses SQLite's online backup: the copy is the database as of one committed transaction. It
            only reads the database, so it runs beside the flowstack that serves it (which holds the file's lock).
            To restore: stop the server, move the backup into place as the database file (removing
            any -wal and -shm files beside the old one), start the server.
            """)

    @Option(name: .long, help: "The database to copy (env FLOWSTACK_DB; default ./flowstack.sqlite).")
    var db: String?

    @Option(name: .long, help: "The new file to write; it must not exist.")
    var to: String

    func run() throws {
        let location = try OpenStore.location(db)
        guard case .sqlite(let source) = location else {
            // PostgreSQL has its own tools for consistent copies of a live database.
            FileHandle.standardError.write(Data("""
                flowstack backup copies SQLite files; \(location.redacted) is a PostgreSQL database.
                Use pg_dump for a consistent copy while FlowStack runs, e.g. pg_dump --format=custom --file=flowstack.dump 'URL'
                (or your provider's backups), and pg_restore to restore it.

                """.utf8))
            throw ExitCode.usage
        }
        do {
            let version = try SQLiteStore.backup(from: source, to: to)
            print("backed up \(source) to \(to) (schema version \(version), integrity ok)")
        } catch let error as SQLiteStore.BackupError {
            throw FailureMessage("backup failed: \(error.description)")
        } catch {
            throw FailureMessage("backup failed: \(error)")
        }
    }
}

// Opening a database: how `--db` values are told apart and shown, those that are refused, files
// that cannot be opened and why, and the lock that keeps a SQLite file to one server.
import FlowStore
import Foundation
import SQLiteStore
import Testing
import Synchronization

@Suite("--db locations: refused")
struct LocationCheckTests {
    /// A URL of a scheme FlowStack does not speak is refused, not taken as a file name; paths
    /// and PostgreSQL URLs pass.
    @Test(arguments: [
        ("mysql://u@h/db", "unknown scheme mysql://"),
        ("postgressql://u@h/db", "did you mean postgresql://?"),
        ("sqlite:///var/db.sqlite", "such as /var/db.sqlite"),
        ("file://db.sqlite", "such as ./db.sqlite"),
        ("mysql://u:s3cret@h/db", "mysql://u:***@h/db"),
    ])
    func refusesUnknownSchemes(value: String, said: String) {
        #expect {
            _ = try DatabaseLocation.checked(value)
        } throws: { error in
            guard let error = error as? StoreError, case .unsupportedLocation = error else { return false }
            return error.description.contains(said) && !error.description.contains("s3cret")
        }
    }

    @Test(arguments: ["./flowstack.sqlite", "/data/x.sqlite", "postgresql://u@h/db", "postgres://h/db", "odd:name.sqlite", "a://b"])
    func acceptsPathsAndPostgreSQL(value: String) throws {
        if value == "a://b" {
            #expect(throws: StoreError.self) { try DatabaseLocation.checked(value) }
        } else {
            _ = try DatabaseLocation.checked(value)
        }
    }
}

@Suite("SQLite: opening a file")
struct SQLiteOpeningTests {
    /// A missing folder, a folder given as the file, a file that is not SQLite: the error names
    /// the path and the cause.
    @Test func namesThePathAndTheCause() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-open-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let notes = folder + "/notes.txt"
        try Data(String(repeating: "not a database\n", count: 20).utf8).write(to: URL(fileURLWithPath: notes))
        for (path, said) in [(folder + "/nope/x.sqlite", "cannot open \(folder)/nope/x.sqlite: the folder \(folder)/nope does not exist"),
                             (folder, "cannot open \(folder): it is a folder, not a file"),
                             (notes + "/x.sqlite", "\(notes) is a file, not a folder"),
                             (notes, "cannot open \(notes): it is not a SQLite database")] {
            #expect {
                _ = try SQLiteStore(path: path)
            } throws: { error in
                (error as? StoreError)?.description.contains(said) == true
            }
        }
    }

    /// A second exclusive store on a file is refused while the first holds it, naming this
    /// process; once the first closes, the file can be taken again.
    @Test func oneExclusiveStorePerFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-lock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/db.sqlite"
        let first = try SQLiteStore(path: path, exclusive: true)
        #expect {
            _ = try SQLiteStore(path: path, exclusive: true)
        } throws: { error in
            guard let error = error as? StoreError, case .inUse(_, let holder, _) = error else { return false }
            return holder.contains("pid \(getpid())")
        }
        try first.close()
        let second = try SQLiteStore(path: path, exclusive: true)
        try second.close()
    }
}

@Suite("--db locations: told apart and shown")
struct DatabaseLocationTests {
    /// `--db` is a PostgreSQL URI when it starts with postgresql:// or postgres://, else a path.
    @Test(arguments: [
        ("./flowstack.sqlite", false), ("/var/lib/flowstack/db.sqlite", false), ("postgresql://u@h/db", true),
        ("postgres://u@h:5432/db?sslmode=require", true), ("POSTGRESQL://u@h/db", true), ("postgresql.sqlite", false),
    ])
    func tellsPathsFromURIs(value: String, isPostgres: Bool) {
        if case .postgresql = DatabaseLocation(value) { #expect(isPostgres) } else { #expect(!isPostgres) }
    }

    /// A password never shows: neither in the user part nor as a parameter; the rest does.
    @Test(arguments: [
        ("postgresql://flow:s3cret@db:5432/flowstack", "postgresql://flow:***@db:5432/flowstack"),
        ("postgres://flow@db/flowstack?password=s3cret&sslmode=require", "postgres://flow@db/flowstack?password=***&sslmode=require"),
        ("postgresql://flow:p%40ss@h1:5432,h2:5432/fs?target_session_attrs=read-write",
         "postgresql://flow:***@h1:5432,h2:5432/fs?target_session_attrs=read-write"),
        ("postgresql://db/flowstack", "postgresql://db/flowstack"),
        ("./x.sqlite", "./x.sqlite"),
    ])
    func redactsPasswords(value: String, shown: String) {
        #expect(DatabaseLocation(value).redacted == shown)
    }
}

@Suite("SQLite: closing while in use")
struct SQLiteClosingTests {
    /// Background threads (a rollout monitor, retention) may still read when the store is closed
    /// at shutdown: `close()` waits for the reads under way, and later ones throw `unavailable`
    /// instead of touching a closed connection (which crashed the process, once, in CI).
    @Test func closeWaitsForReadsUnderWayAndRefusesLaterOnes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-close-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("db.sqlite").path)
        try store.migrate(Migration.bundled(.sqlite))
        let stop = Atomic<Bool>(false)
        let refused = Atomic<Int>(0), answered = Atomic<Int>(0), other = Atomic<Int>(0)
        let readers = DispatchGroup()
        for _ in 0..<4 {
            // A thread each: four spinning on Dispatch's global queue would fill it (it is as
            // wide as the machine has cores) and hold up every other test's Dispatch work.
            readers.enter()
            Thread {
                defer { readers.leave() }
                while !stop.load(ordering: .relaxed) {
                    do {
                        _ = try store.headVersion(sessionId: "nobody")
                        answered.add(1, ordering: .relaxed)
                    } catch let error as StoreError {
                        if case .unavailable = error { refused.add(1, ordering: .relaxed) } else { other.add(1, ordering: .relaxed) }
                    } catch {
                        other.add(1, ordering: .relaxed)
                    }
                }
            }.start()
        }
        while answered.load(ordering: .relaxed) < 100 { Thread.sleep(forTimeInterval: 0.001) }
        try store.close()
        try FileManager.default.removeItem(at: folder)
        Thread.sleep(forTimeInterval: 0.05)
        stop.store(true, ordering: .relaxed)
        readers.wait()
        #expect(refused.load(ordering: .relaxed) > 0, "reads after close are refused")
        #expect(other.load(ordering: .relaxed) == 0)
        #expect(store.healthCheck() == nil)
    }
}

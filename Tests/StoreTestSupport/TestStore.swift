// The stores the tests run on: the role suites run each test on SQLite and on PostgreSQL; the
// API tests on the one FLOWSTACK_TEST_DB_KIND names (SQLite by default).
import FlowStore
import Foundation
import TestSupport
import PostgresStore
import SQLiteStore
import Synchronization
import Testing

/// A kind of store a test runs on.
///
/// The store suites (`Tests/FlowStoreTests`, one per role) run every test once per kind, as
/// named cases, the way Temporal's persistence tests run one body on each database:
///
/// ```swift
/// @Test(arguments: TestStoreKind.allCases) func storesSessions(_ kind: TestStoreKind) throws {
///     let database = try TestDatabase(kind: kind)   // PostgreSQL: a schema of a throwaway server
///     let store = try database.migratedStore()
/// }
/// ```
///
/// Tests that go through the server (FlowServerTests) run on ``current``: the kind
/// `FLOWSTACK_TEST_DB_KIND` names (`sqlite`, the default, or `postgresql`), the variable the
/// scripts read too; `scripts/test.sh` runs them once more with `postgresql`.
public enum TestStoreKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    /// The environment variable that picks ``current``.
    public static let variable = "FLOWSTACK_TEST_DB_KIND"

    public static let current: TestStoreKind = {
        let value = ProcessInfo.processInfo.environment[variable] ?? ""
        return value.lowercased().hasPrefix("postgres") ? .postgresql : .sqlite
    }()

    public static var isSQLite: Bool { current == .sqlite }
    public static var isPostgreSQL: Bool { current == .postgresql }

    public var testDescription: String { rawValue }
}

/// One fresh, empty database of the run's kind: a file in a temporary folder, or a schema of
/// its own on the shared throwaway PostgreSQL. Removed when released.
public final class TestDatabase: @unchecked Sendable {
    public let kind: TestStoreKind
    /// The SQLite file's folder (nil on PostgreSQL).
    public let directory: URL?
    /// What `--db` would say: the file's path, or the URI.
    public let location: String

    /// A database of `kind`. A PostgreSQL one when PostgreSQL's server binaries are not
    /// installed skips the test case, with a warning saying what to install, unless
    /// `FLOWSTACK_TEST_DB_KIND` asked for PostgreSQL: then it fails.
    public init(kind: TestStoreKind = .current) throws {
        self.kind = kind
        if kind == .postgresql, case let .failure(error) = TestPostgresServer.shared, error.binariesMissing,
           TestStoreKind.current != .postgresql {
            let reason = Comment(rawValue: "skipped on PostgreSQL: \(error.description)")
            // A cancelled case reads as passed in the console: the warning is what says it did not run.
            Issue.record(reason, severity: .warning)
            try Test.cancel(reason)
        }
        switch kind {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appending(path: "flowstack-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            location = directory.appending(path: "test.sqlite").path
        case .postgresql:
            directory = nil
            location = try TestPostgresServer.shared.get().freshSchemaURI()
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The SQLite file (tests of the SQLite store only).
    public var path: String { location }

    /// A new store on this database, not migrated.
    public func open(durability: Durability = .normal) throws -> any FlowStore {
        switch kind {
        case .sqlite: try SQLiteStore(path: location, durability: durability)
        case .postgresql: try PostgresStore(uri: location, durability: durability)
        }
    }

    /// The SQLite store itself, migrated, for tests that look inside the file.
    public func migratedSQLiteStore(durability: Durability = .normal) throws -> SQLiteStore {
        let store = try SQLiteStore(path: location, durability: durability)
        try store.migrate()
        return store
    }

    /// The SQLite file's folder, for files beside it (tests of the SQLite store only).
    public var folder: URL { directory ?? FileManager.default.temporaryDirectory }

    /// A new store on this database, migrated to the bundled schema.
    public func migratedStore() throws -> any FlowStore {
        let store = try open()
        try store.migrate()
        return store
    }
}

/// A PostgreSQL server for this test process: `initdb` into a temporary folder (as the
/// `postgres` user when running as root: PostgreSQL refuses root), listening on a free port of
/// 127.0.0.1 only, stopped and removed when the process exits. Each `TestDatabase` gets a
/// schema of its own, named in its URI's `search_path`, so tests running in parallel never
/// see each other's rows.
public final class TestPostgresServer: @unchecked Sendable {
    public static let shared: Result<TestPostgresServer, TestSetupError> = {
        do {
            return .success(try TestPostgresServer())
        } catch let error as TestSetupError {
            return .failure(error)
        } catch {
            return .failure(TestSetupError(description: "\(error)"))
        }
    }()

    public let port: Int
    let folder: URL
    /// The newest installed PostgreSQL's server binaries (`/usr/lib/postgresql/<version>/bin`).
    static let binaries: URL? = {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap { version in Int(version).map { ($0, root.appending(path: "\(version)/bin")) } }
            .filter { FileManager.default.isExecutableFile(atPath: $0.1.appending(path: "initdb").path) }
            .max { $0.0 < $1.0 }?.1
    }()
    private let counter = NSLock()
    private var schemas = 0

    private init() throws {
        guard let binaries = Self.binaries else {
            throw TestSetupError(description: """
                the PostgreSQL runs need PostgreSQL's server binaries in /usr/lib/postgresql/<version>/bin: \
                apt-get install postgresql (scripts/test.sh installs it)
                """, binariesMissing: true)
        }
        folder = URL(fileURLWithPath: "/tmp").appending(path: "flowstack-test-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres:postgres", folder.path], asPostgres: false) }
        port = try Self.freePort()
        let data = folder.appending(path: "data").path
        // `pg_ctl` detaches the server: if this process crashes, atexit below never runs, so a
        // watchdog, started before anything else, stops the server and removes its folder once
        // this process is gone.
        let stop = [binaries.appending(path: "pg_ctl").path, "-D", data, "-m", "immediate", "-w", "stop"]
        let stopAs = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + stop : stop
        try? cleanUpAfterExit(run: ["/bin/sh", "-c", "\"$@\"; rm -rf \(folder.path)", "stop"] + stopAs)
        try Self.run(binaries.appending(path: "initdb").path,
                     ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"], asPostgres: true)
        let options = "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=32MB"
        try Self.run(binaries.appending(path: "pg_ctl").path,
                     ["-D", data, "-o", options, "-l", folder.appending(path: "log").path, "-w", "-t", "30", "start"], asPostgres: true)
        TestPostgresServer.cleanup = (binaries.appending(path: "pg_ctl").path, data, folder.path)
        atexit {
            guard let (pgctl, data, folder) = TestPostgresServer.cleanup else { return }
            try? TestPostgresServer.run(pgctl, ["-D", data, "-m", "immediate", "-w", "stop"], asPostgres: true)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    nonisolated(unsafe) static var cleanup: (String, String, String)?

    /// A URI whose `search_path` is a new, empty schema.
    func freshSchemaURI() throws -> String {
        counter.lock()
        schemas += 1
        let name = "t\(schemas)_\(UUID().uuidString.prefix(8).lowercased())"
        counter.unlock()
        try Self.run("/usr/bin/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-q",
                                       "-v", "ON_ERROR_STOP=1", "-c", "CREATE SCHEMA \(name)"], asPostgres: false)
        return "postgresql://postgres@127.0.0.1:\(port)/postgres?options=-csearch_path%3D\(name)"
    }

    /// Runs a program to its end (see `runProgram` in TestSupport), as the `postgres` user
    /// when asked and run as root (initdb and postgres refuse root).
    static func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws {
        let argv = asPostgres && getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments
                                                : [program] + arguments
        do {
            try runProgram(argv)
        } catch {
            throw TestSetupError(description: "\(error)")
        }
    }

    /// A port nothing listens on now, for a server that must know its port before it starts (a
    /// node's own URL, PostgreSQL's port). It is taken below the kernel's ephemeral range
    /// (`ip_local_port_range`): a port bound to 0 and released, as this was once, can be handed to
    /// the next outgoing connection (a test's connection to PostgreSQL) before the server binds
    /// it, which failed a CI run with "Address already in use". Checked by binding it, and never
    /// handed out twice by one process.
    public static func freePort() throws -> Int {
        let low = ephemeralLow()
        let range = max(1024, low - 12_000)..<max(1025, low)
        for _ in 0..<200 {
            let port = Int.random(in: range)
            let taken = handedOut.withLock { ports in ports.contains(port) }
            if taken || !bindable(port) { continue }
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        throw TestSetupError(description: "no free port in \(range) after 200 tries")
    }

    private static let handedOut = Mutex<Set<Int>>([])

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    private static func ephemeralLow() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
              let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
              let low = Int(first), low > 2048 else { return 32768 }
        return low
    }

    /// Whether a listening socket could bind 127.0.0.1:`port` now (with SO_REUSEADDR, as the server does).
    private static func bindable(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var on: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return bound == 0
    }
}

/// The test PostgreSQL server could not be started; says what to install or fix.
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    /// PostgreSQL is not installed (rather than installed and failing to start).
    public let binariesMissing: Bool

    public init(description: String, binariesMissing: Bool = false) {
        self.description = description
        self.binariesMissing = binariesMissing
    }
}

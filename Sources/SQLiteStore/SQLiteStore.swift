// FlowStore on one SQLite file through GRDB: opening it in WAL, its durability, migrations.
import Foundation
import FlowStore
import GRDB
import Synchronization

/// The database: one SQLite file in WAL mode, read by a pool of connections, written by one.
///
/// ```swift
/// let store = try SQLiteStore(path: "./flowstack.sqlite")
/// try store.migrate()          // applies migrations/sqlite/NNNN_name.sql not yet applied
/// store.healthCheck()         // the schema version, nil when the database does not answer
/// ```
public final class SQLiteStore: FlowStore {
    public let path: String
    public var location: String { path }
    public var dialect: SQLDialect { .sqlite }
    /// One process owns a SQLite file: its cache is the only writer's.
    public var isShared: Bool { false }
    public let counters = StoreCounters()
    public let durability: Durability
    /// The connections; repositories read and write through it.
    public let pool: DatabasePool
    private let closed = Atomic<Bool>(false)
    /// Reads and writes under way through `reading`, `writing` and `healthCheck`: `close()`
    /// waits for them before it closes the connections (a background thread's read racing a
    /// close used a freed connection: a crash, not an error), and refuses new ones from then on.
    private let inFlight = Atomic<Int>(0)
    let groupCommit: GroupCommit
    /// The versions the batches committed, read by the next batch instead of the database.
    let versions: CommittedVersions
    let checkpointer: WALCheckpointer
    /// The rowid up to which retention has examined the log (see `compactActions`).
    let compactionCursor = Atomic<Int64>(0)
    /// Held from `init(exclusive: true)` to `close()`.
    private let ownerLock: OwnerLock?
    /// The server's rebuilder, once given: from then on the head row is rewritten only every
    /// `LogSnapshots.headInterval` versions (see `write(_:in:keepsEveryHead:)`).
    let heads: HeadRebuilding

    /// Where the store finds its `SessionHeadRebuilder`, shared with the writer thread.
    final class HeadRebuilding: Sendable {
        private let current = Mutex<(any SessionHeadRebuilder)?>(nil)
        /// `rebuilder` is set (it is never taken back): what every turn and every batch ask, without the lock.
        private let given = Atomic<Bool>(false)

        var rebuilder: (any SessionHeadRebuilder)? { current.withLock { $0 } }

        var isGiven: Bool { given.load(ordering: .acquiring) }

        func use(_ rebuilder: any SessionHeadRebuilder) {
            current.withLock { $0 = rebuilder }
            given.store(true, ordering: .releasing)
        }
    }

    /// Opens (creating if needed) the database at `path`. Does not migrate. `exclusive` takes
    /// the file's `OwnerLock` first and holds it until `close()`: a server's store, so that a
    /// second server on the file refuses to start (`StoreError.inUse`). A file that cannot be
    /// opened throws `StoreError.cannotOpen`, saying why.
    public init(path: String, durability: Durability = .normal, exclusive: Bool = false) throws {
        self.path = path
        self.durability = durability
        ownerLock = try exclusive ? OwnerLock(path: path) : nil
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = "flowstack"
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw Self.openError(path: path, error)
        }
        self.pool = pool
        let heads = HeadRebuilding()
        self.heads = heads
        let versions = CommittedVersions()
        self.versions = versions
        groupCommit = GroupCommit { batch, _ in
            Self.write(batch, to: pool, versions: versions, keepsEveryHead: !heads.isGiven)
        }
        // Debian's SQLite defaults WAL to FULL and GRDB's pool sets NORMAL when it opens the
        // writer; the setting is per connection and only the writer's matters, so set it there last.
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(WALCheckpointer.backstopPages)")
                // 32 MiB of pages for the one writer (2 MiB by default): a keyed action inserts
                // into a random leaf of the index of keys, which the default cache had evicted
                // and read again (keyed actions 1.05-1.12x in bench/compare.sh; unkeyed 1.01x).
                try db.execute(sql: "PRAGMA cache_size = -32768")
                // Deleted rows are overwritten with zeros in their pages, not only unlinked: an
                // erased user's data is not left in free space (see `eraseUser`). Debian builds
                // SQLite with it on; other builds (Apple's) have it off. Only this connection
                // deletes; on the action path it costs a memset of freed cells.
                try db.execute(sql: "PRAGMA secure_delete = ON")
            }
        } catch {
            groupCommit.shutdown()
            throw Self.openError(path: path, error)
        }
        checkpointer = try WALCheckpointer(path: path)
    }

    deinit {
        // A store dropped without `close()` still stops its threads.
        checkpointer.shutdown()
        groupCommit.shutdown()
    }

    /// The highest migration applied to the file, 0 for a new one.
    public func schemaVersion() throws -> Int {
        try reading { db in try Self.appliedMigrations(db).map(\.version).max() ?? 0 }
    }

    /// Applies, in one transaction each, the migrations not yet applied; returns those applied.
    ///
    /// Refuses a database migrated by a newer binary (`StoreError.schemaTooNew`) without
    /// touching it, and one whose history disagrees with the bundled migrations.
    @discardableResult
    public func migrate(_ migrations: [Migration]) throws -> [Migration] {
        try Migration.checkSequence(migrations)
        return try pool.barrierWriteWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    applied_at TEXT NOT NULL)
                """)
            let applied = try Self.appliedMigrations(db)
            try Migration.checkApplied(applied, against: migrations, location: path)
            let appliedVersions = Set(applied.map(\.version))
            var done: [Migration] = []
            for migration in migrations where !appliedVersions.contains(migration.version) {
                try db.inTransaction(.immediate) {
                    try db.execute(sql: migration.sql)
                    try db.execute(
                        sql: "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        arguments: [migration.version, migration.name, Timestamp.string()])
                    return .commit
                }
                done.append(migration)
            }
            return done
        }
    }

    /// The schema version when the database answers a query, nil when it does not.
    public func healthCheck() -> Int? {
        guard enter() else { return nil }
        defer { leave() }
        // One statement needs no snapshot transaction; the cached statement skips re-parsing it.
        return try? pool.unsafeRead { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(version), 0) FROM schema_migrations")) ?? 0
        }
    }

    /// Checkpoints the WAL and closes every connection. Calling it again does nothing.
    public func close() throws {
        guard !closed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // Operations that entered before `closed` was set finish first (at most the busy
        // timeout's wait each); none enters after.
        let deadline = ContinuousClock.now + .seconds(10)
        while inFlight.load(ordering: .sequentiallyConsistent) > 0, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        checkpointer.shutdown()
        groupCommit.shutdown()
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        defer { ownerLock?.release() }
        try pool.close()
    }

    static func appliedMigrations(_ db: Database) throws -> [(version: Int, name: String)] {
        guard try db.tableExists("schema_migrations") else { return [] }
        return try Row.fetchAll(db, sql: "SELECT version, name FROM schema_migrations ORDER BY version")
            .map { (try $0.decode(forColumn: "version"), try $0.decode(forColumn: "name")) }
    }
}

extension SQLiteStore {
    /// A read transaction of the pool. A row that does not decode throws
    /// `StoreError.undecodableRow` naming its column only: GRDB's own error prints the whole row
    /// and its statement's arguments (users' attributes, their state) into the log line.
    func reading<T>(_ body: (Database) throws -> T) throws -> T {
        try guarded { try pool.read(body) }
    }

    /// One statement's read, on a reader of the pool without a transaction around it: a single
    /// statement reads one snapshot of the file by itself. For the reads every keyed action
    /// makes before it is judged, where GRDB's isolated read (a BEGIN, a statement to take the
    /// snapshot, a COMMIT, each through GRDB) cost twice the lookup (callgrind). `body` must run
    /// one statement only; several would each see another snapshot.
    func readingOneStatement<T>(_ body: (Database) throws -> T) throws -> T {
        try guarded { try pool.unsafeRead(body) }
    }

    /// A write transaction of the pool; an undecodable row as in `reading`.
    func writing<T>(_ body: (Database) throws -> T) throws -> T {
        try guarded { try pool.write(body) }
    }

    /// A write transaction as `writing` makes it, its BEGIN IMMEDIATE and COMMIT prepared once
    /// and stepped directly, as the writer thread's batches are (`write(_:to:versions:
    /// keepsEveryHead:)`): GRDB's `write` prepared both at each call, some 20,000 instructions
    /// of a session's creation (callgrind, `bench/create.lua`). For writes made on every request
    /// of a route.
    func writingDirectly<T>(_ body: (Database) throws -> T) throws -> T {
        try guarded {
            try pool.writeWithoutTransaction { db in
                let begin = DirectStatement(try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION"), in: db)
                let end = DirectStatement(try db.cachedStatement(sql: "COMMIT TRANSACTION"), in: db)
                try begin.run()
                do {
                    let result = try body(db)
                    try end.run()
                    return result
                } catch {
                    // Nothing is committed; GRDB's rollback ends the transaction unless SQLite
                    // already did (a full disk, an I/O error).
                    try? db.rollback()
                    throw error
                }
            }
        }
    }

    /// Runs `access` (one of the pool's) unless the store is closed, counted in while it runs;
    /// an undecodable row is redacted as `reading` says.
    private func guarded<T>(_ access: () throws -> T) throws -> T {
        guard enter() else { throw StoreError.unavailable(location: path, detail: "the store is closed") }
        defer { leave() }
        do {
            return try access()
        } catch let error as RowDecodingError {
            throw Self.redacted(error, location: path)
        } catch let error as UndecodableColumn {
            throw StoreError.undecodableRow(location: path, detail: "column: \"\(error.name)\" holds a NULL or a value of another type")
        }
    }

    /// Counts an operation in; false (and nothing counted) once the store is closing.
    private func enter() -> Bool {
        // Sequentially consistent, as `close()`'s: it sets `closed` then reads `inFlight`, this
        // adds to `inFlight` then reads `closed`, so at least one of the two sees the other.
        inFlight.add(1, ordering: .sequentiallyConsistent)
        guard !closed.load(ordering: .sequentiallyConsistent) else {
            inFlight.subtract(1, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    private func leave() {
        inFlight.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// A commit's error as the server may log it: a row that does not decode, or a user's state
    /// that is not an object, as `StoreError.undecodableRow` without the row's values; any
    /// other error as it is.
    static func redacted(_ error: any Error, location: String) -> any Error {
        if let error = error as? RowDecodingError { return redacted(error, location: location) }
        if let error = error as? UserStateMerge.NotAnObject {
            return error.stored ? StoreError.undecodableRow(location: location, detail: "users.state is not a JSON object")
                : StoreError.undecodableRow(location: location, detail: "a commit's user-state changes are not a JSON object")
        }
        return error
    }

    /// The error without the row's values: the column (named or numbered) and the expected type.
    static func redacted(_ error: RowDecodingError, location: String) -> StoreError {
        // The column is the first line's `column: "name"` chunk of GRDB's description.
        let text = String(describing: error)
        let column = text.range(of: "column: ").map { found in
            String(text[found.lowerBound...].prefix { $0 != "," && $0 != "\n" })
        } ?? "a column"
        return .undecodableRow(location: location, detail: "\(column) holds a NULL or a value of another type")
    }
}

// FlowStore on PostgreSQL through libpq: several FlowStack nodes can share one database.
import FlowStore
import Foundation
import Synchronization

/// A FlowStore on a PostgreSQL database, by libpq connection URI.
///
/// ```swift
/// let store = try PostgresStore(uri: "postgresql://flowstack@db.internal:5432/flowstack")
/// try store.migrate()   // applies migrations/postgresql/NNNN_name.sql under an advisory lock
/// ```
///
/// Every call on the request path has a deadline (`requestTimeout`): when the database does not
/// answer by then, the call throws `StoreError.unavailable` and the server answers 503, instead
/// of holding a thread. Each connection sets `synchronous_commit` itself (see `Durability`), so a
/// server default of `off` cannot make an acknowledged action volatile.
public final class PostgresStore: FlowStore {
    public let location: String
    public var dialect: SQLDialect { .postgresql }
    /// Several nodes may share the database: a node checks its cached copies against it.
    public var isShared: Bool { true }
    public let counters = StoreCounters()
    public let durability: Durability
    let pool: PGPool
    let groupCommit: GroupCommit
    /// The (created_at, session_id, version) up to which this node's retention has examined
    /// the log (see `compactActions`).
    let compactionCursor = Mutex<(at: String, session: String, version: Int)>(("", "", 0))
    /// Split-brain refusal on a multi-host URL (nil for one host); see FailoverGuard.
    let failover: FailoverGuard?
    let commitWatch = CommitWatch()
    private let closed = Atomic<Bool>(false)

    /// How long a request waits for the database before it is answered 503.
    static let requestTimeout: Duration = .milliseconds(1500)
    /// How long a migration (and waiting for another node's migration) may take.
    static let migrationTimeout: Duration = .seconds(120)
    /// The advisory lock that serializes migrations across nodes ("flowstack" in ASCII, as a number).
    static let migrationLock = 0x666C_6F77_7374_6163

    /// Connects to the database at `uri` (a libpq connection URI: `postgresql://USER@HOST:PORT/DB`,
    /// with any of libpq's parameters, several hosts included) and checks that it answers.
    /// Does not migrate. `connections` bounds the connections this process opens;
    /// `connectTimeout` bounds this first connection and its check.
    public init(uri: String, durability: Durability = .normal, connections: Int = 16,
                connectTimeout: Duration = .seconds(10)) throws {
        location = DatabaseLocation.postgresql(uri: uri).redacted
        self.durability = durability
        let setup = [
            PGStatement("SET synchronous_commit = \(durability == .full ? "remote_apply" : "on")"),
            // Our deadline drops the connection; this ends the statement on the server too.
            PGStatement("SET statement_timeout = '10s'"),
            PGStatement("SET bytea_output = 'hex'"),
            PGStatement("SET client_encoding = 'UTF8'"),
            // CREATE TABLE IF NOT EXISTS and the like would print NOTICEs on our stderr.
            PGStatement("SET client_min_messages = 'warning'"),
        ]
        let counters = self.counters
        let failover = FailoverGuard(uri: uri)
        self.failover = failover
        let pool = PGPool(uri: uri, capacity: connections, setup: setup, counters: counters, admission: failover)
        self.pool = pool
        let location = self.location
        let commitWatch = self.commitWatch
        groupCommit = GroupCommit(maxBatch: 256) { batch, oldest in
            counters.commitBatches.add(1, ordering: .relaxed)
            counters.committedActions.add(batch.count, ordering: .relaxed)
            let deadline = oldest + Self.requestTimeout
            let results = Self.write(batch, pool: pool, location: location, deadline: deadline)
            commitWatch.record(results, beforeDeadline: ContinuousClock.now < deadline - .milliseconds(50))
            return results
        }
        do {
            let deadline = ContinuousClock.now + connectTimeout
            _ = try pool.withConnection(deadline: deadline, idempotent: true) { connection throws(PGError) in
                try connection.run([PGStatement("SELECT 1")], deadline: deadline)
            }
        } catch {
            groupCommit.shutdown()
            pool.close()
            failover?.stop()
            throw StoreError.unavailable(location: location, detail: error.description)
        }
        failover?.start()
    }

    deinit {
        // A store dropped without `close()` still stops its threads.
        groupCommit.shutdown()
        pool.close()
        failover?.stop()
    }

    // MARK: Schema

    public func schemaVersion() throws -> Int {
        try read([PGStatement("""
            SELECT COALESCE(MAX(version), 0) FROM schema_migrations
            WHERE to_regclass('schema_migrations') IS NOT NULL
            """)])[0].integer(0, 0) ?? 0
    }

    /// Applies the migrations not yet applied, each in its own transaction, while holding an
    /// advisory lock: nodes starting together on an empty database migrate once, one after the
    /// other, and the later ones find nothing left to do.
    @discardableResult
    public func migrate(_ migrations: [Migration]) throws -> [Migration] {
        try Migration.checkSequence(migrations)
        let deadline = ContinuousClock.now + Self.migrationTimeout
        var refusal: (any Error)?
        let done: [Migration]
        do {
            done = try pool.withConnection(deadline: deadline) { connection throws(PGError) -> [Migration] in
                _ = try connection.run([PGStatement("SELECT pg_advisory_lock(\(Self.migrationLock))")], deadline: deadline).rows()
                defer {
                    _ = try? connection.run([PGStatement("SELECT pg_advisory_unlock(\(Self.migrationLock))")], deadline: deadline)
                }
                try connection.execute(script: """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version INTEGER PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        applied_at TEXT NOT NULL)
                    """, deadline: deadline)
                let rows = try connection.run([PGStatement("SELECT version, name FROM schema_migrations ORDER BY version")],
                                              deadline: deadline).rows()[0]
                let applied = try (0..<rows.count).map { row throws(PGError) in (version: try rows.int(row, 0), name: try rows.text(row, 1)) }
                do {
                    try Migration.checkApplied(applied, against: migrations, location: location)
                } catch {
                    refusal = error  // a newer schema, another history: touch nothing
                    return []
                }
                let appliedVersions = Set(applied.map(\.version))
                var done: [Migration] = []
                for migration in migrations where !appliedVersions.contains(migration.version) {
                    let name = migration.name.replacingOccurrences(of: "'", with: "''")
                    try connection.execute(script: """
                        BEGIN;
                        \(migration.sql)
                        ;
                        INSERT INTO schema_migrations (version, name, applied_at)
                            VALUES (\(migration.version), '\(name)', '\(Timestamp.string())');
                        COMMIT;
                        """, deadline: deadline)
                    done.append(migration)
                }
                return done
            }
        } catch {
            throw Self.storeError(error, location: location)
        }
        if let refusal { throw refusal }
        return done
    }

    public func healthCheck() -> Int? {
        guard !closed.load(ordering: .acquiring) else { return nil }
        return try? schemaVersion()
    }

    public func close() throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        groupCommit.shutdown()
        pool.close()
        failover?.stop()
    }

    // MARK: Running statements

    /// Runs `statements` (a read) in one round trip on a pooled connection, within the request
    /// deadline; the rows of each. A statement the server refuses throws `PGError.server`. A
    /// read runs again on a new connection when its pooled one turns out to have died.
    func read(_ statements: [PGStatement]) throws -> [PGRows] {
        try run(statements, idempotent: true)
    }

    /// Runs `statements` (a write, with its `BEGIN` and `COMMIT`) as `read` does, but never twice.
    @discardableResult
    func write(_ statements: [PGStatement]) throws -> [PGRows] {
        try run(statements, idempotent: false)
    }

    private func run(_ statements: [PGStatement], idempotent: Bool) throws -> [PGRows] {
        guard !closed.load(ordering: .acquiring) else {
            throw StoreError.unavailable(location: location, detail: "the store is closed")
        }
        let deadline = ContinuousClock.now + Self.requestTimeout
        do {
            return try pool.withConnection(deadline: deadline, idempotent: idempotent) { connection throws(PGError) in
                try connection.runTransaction(statements, deadline: deadline).rows()
            }
        } catch {
            throw Self.storeError(error, location: location)
        }
    }

    /// `body`, run again up to twice when PostgreSQL ended its transaction as a deadlock or a
    /// serialization failure (SQLSTATE 40P01, 40001): nothing of it was written, and it is
    /// written to be run again.
    func retryingConflicts<T>(_ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch PGError.server(let state, _) where ["40P01", "40001"].contains(state) && attempt < 2 {
                attempt += 1
            }
        }
    }

    /// A connection failure as the server reports it: unavailable when nothing reached the
    /// database, outcome unknown when a write may have; other errors as they are.
    static func storeError(_ error: any Error, location: String) -> any Error {
        guard let error = error as? PGError, case .connection(let message, let sent) = error else { return error }
        return sent ? StoreError.outcomeUnknown(location: location, detail: message)
                    : StoreError.unavailable(location: location, detail: message)
    }
}

extension Array where Element == PGOutcome {
    /// The rows of every outcome, or the first statement's refusal.
    func rows() throws(PGError) -> [PGRows] {
        var rows: [PGRows] = []
        for outcome in self {
            switch outcome {
            case .rows(let result): rows.append(result)
            case let .failed(state, message): throw .server(sqlState: state, message: message)
            case .aborted: throw .server(sqlState: "", message: "statement skipped after an earlier failure")
            }
        }
        return rows
    }
}

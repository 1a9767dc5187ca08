// The lifecycle role of a store: where it is, its schema and migrations, its health, closing it.
import Synchronization

/// What every store says about itself and does before and after the other roles' work:
/// migrating its schema, answering a health check, counting its round trips, closing.
///
/// ```swift
/// let store: any FlowStore = try SQLiteStore(path: "./flowstack.sqlite")
/// try store.migrate()            // applies the bundled migrations of its dialect not yet applied
/// store.healthCheck()           // the schema version, nil when the database does not answer
/// try store.close()
/// ```
public protocol StoreLifecycle: AnyObject, Sendable {
    /// Where the database is, for logs and messages: a path, or a URL without its password.
    var location: String { get }
    /// The dialect whose migrations this store applies.
    var dialect: SQLDialect { get }
    /// Whether other processes may write this database too (several nodes on one PostgreSQL):
    /// then a cached session or user state may be behind it, and the server checks.
    var isShared: Bool { get }
    /// What the store counts of its own work, for `/metrics`.
    var counters: StoreCounters { get }

    /// The highest migration applied, 0 for a new database.
    func schemaVersion() throws -> Int
    /// Applies, in order, the migrations not yet applied; returns those applied. Refuses a
    /// database migrated by a newer binary (`StoreError.schemaTooNew`) without touching it.
    @discardableResult
    func migrate(_ migrations: [Migration]) throws -> [Migration]
    /// The schema version when the database answers a query now, nil when it does not.
    func healthCheck() -> Int?
    /// Why the server must not be reported healthy although the database answers (a split
    /// brain among a PostgreSQL URL's hosts, commits that do not finish), or nil.
    func healthProblem() -> String?
    /// Writes what is queued and closes every connection. Calling it again does nothing.
    func close() throws
}

extension StoreLifecycle {
    /// A store with nothing to report beyond `healthCheck()` (SQLite).
    public func healthProblem() -> String? { nil }

    /// Applies this dialect's bundled migrations not yet applied.
    @discardableResult
    public func migrate() throws -> [Migration] {
        try migrate(Migration.bundled(dialect))
    }
}

/// Counters of a store's work, read by `/metrics`: round trips to the database, failed calls,
/// and the group commit's transactions and the actions they carried (actions per round trip).
public final class StoreCounters: Sendable {
    public let roundTrips = Atomic<Int>(0)
    public let errors = Atomic<Int>(0)
    public let commitBatches = Atomic<Int>(0)
    public let committedActions = Atomic<Int>(0)

    public init() {}
}

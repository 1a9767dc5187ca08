// What the server needs from storage: the roles of a store, composed into the one that
// SQLiteStore and PostgresStore implement.
import Foundation

/// How much a committed transaction survives. Each store says what the two levels mean on it.
public enum Durability: String, Sendable, CaseIterable {
    /// SQLite: WAL with `synchronous=NORMAL`, a commit survives a crash of the process, not a
    /// power loss. PostgreSQL: `synchronous_commit = on`, a commit is flushed to the server's WAL
    /// (and to a synchronous standby's, where the operator runs one) before it is acknowledged.
    case normal
    /// SQLite: `synchronous=FULL`, every commit is fsynced and survives a power loss.
    /// PostgreSQL: `synchronous_commit = remote_apply`, a synchronous standby has also applied it.
    case full
}

/// The database of a FlowStack server: every role a store plays, in one.
///
/// A store is read and written through its roles, one protocol each (Temporal splits its
/// persistence the same way): ``SessionRecordStore`` (sessions, their action log and
/// idempotent answers), ``StreamTicketStore``, ``UserDataStore`` (user state, erasure and
/// export), ``DefinitionStore`` (flow versions, flags, experiments), ``KeyStore`` (client and
/// admin keys), ``ReleaseStore``, ``RolloutStore``, ``AuditStore``, ``RetentionStore``, and
/// ``StoreLifecycle`` (schema, health, closing). A service asks for the roles it uses
/// (`any SessionRecordStore & AuditStore`), so its type says what it may touch; only what opens,
/// migrates and wires a store together needs the whole of it, and asks for `any FlowStore`.
///
/// `SQLiteStore` (one file, the embedded default) and `PostgresStore` (one database shared by
/// several nodes) play every role. The database, not the process, guards the invariants: a log
/// entry's key is `(session_id, version)`, a version is written only on top of version − 1, an
/// `Idempotency-Key` is stored once per session. Each role has one conformance suite in
/// `Tests/FlowStoreTests`, run on both databases.
///
/// ```swift
/// let store: any FlowStore = try SQLiteStore(path: "./flowstack.sqlite")
/// try store.migrate()            // applies the bundled migrations of its dialect not yet applied
/// let sessions: any SessionRecordStore = store   // what a session service is given
/// ```
public protocol FlowStore: StoreLifecycle, SessionRecordStore, StreamTicketStore, UserDataStore, DefinitionStore,
    KeyStore, ReleaseStore, RolloutStore, AuditStore, RetentionStore {}

/// The SQL dialect of a store, which names its folder of migrations (`migrations/sqlite/`).
public enum SQLDialect: String, Sendable, CaseIterable {
    case sqlite
    case postgresql
}

/// The time format of every stored time: ISO 8601 UTC with milliseconds.
public enum Timestamp {
    /// Now, or `date`, as stored.
    public static func string(_ date: Date = Date()) -> String {
        style.format(date)
    }

    /// Made once: every action is stamped, and making the style cost a third of formatting.
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

// Errors of opening and migrating a FlowStack database, each saying what to do.

/// Why a database could not be opened or migrated.
public enum StoreError: Error, CustomStringConvertible, Equatable {
    /// The file was migrated by a newer FlowStack than this one.
    case schemaTooNew(path: String, found: Int, known: Int)
    /// An applied migration's name differs from this binary's migration of the same number.
    case migrationMismatch(version: Int, applied: String, bundled: String)
    /// Two migration files share a number, or the numbers are not 1, 2, 3, …
    case badMigrationSequence(String)
    /// The database server cannot be reached, refused the connection, or did not answer in
    /// time, before anything was written.
    case unavailable(location: String, detail: String)
    /// A write was sent and no answer came back (the connection broke, a deadline passed): it
    /// may or may not be committed.
    case outcomeUnknown(location: String, detail: String)
    /// A SQLite file cannot be opened: `reason` says why (a missing folder, a read-only file, …).
    case cannotOpen(path: String, reason: String)
    /// Another process serves the SQLite file: `holder` names it (pid and start time, when known).
    case inUse(path: String, holder: String, lockPath: String)
    /// `--db` names a URL whose scheme FlowStack does not speak, or a form it does not take.
    case unsupportedLocation(location: String, reason: String)
    /// A stored row does not read as this FlowStack expects (a NULL, a value of another type):
    /// `detail` names the column, never the row's values (they are users' data, and this goes
    /// to the log).
    case undecodableRow(location: String, detail: String)

    public var description: String {
        switch self {
        case let .schemaTooNew(path, found, known):
            "The database \(path) has schema version \(found), but this flowstack knows versions up to \(known). "
                + "Run a flowstack at least as new as the one that last migrated it, or restore a backup."
        case let .migrationMismatch(version, applied, bundled):
            "Migration \(version) was applied as '\(applied)' but this flowstack ships it as '\(bundled)': "
                + "the database comes from a different build; do not mix them."
        case let .badMigrationSequence(detail):
            "The bundled migrations are not a sequence 1, 2, 3, …: \(detail)"
        case let .unavailable(location, detail):
            "The database \(location) is unavailable: \(detail)"
        case let .outcomeUnknown(location, detail):
            "The database \(location) did not confirm a write, which may or may not be committed: \(detail)"
        case let .cannotOpen(path, reason):
            "cannot open \(path): \(reason)"
        case let .inUse(path, holder, lockPath):
            "cannot open \(path): another flowstack is using it (\(holder); it holds \(lockPath)). "
                + "One SQLite file has one server, or one would answer from stale memory: stop the other one first "
                + "(run several nodes on PostgreSQL)"
        case let .unsupportedLocation(location, reason):
            "cannot use --db \(location): \(reason)"
        case let .undecodableRow(location, detail):
            "A row stored in \(location) does not read as this flowstack expects: \(detail)"
        }
    }
}

// Opens the store `--db` names: a SQLite file (the default), or a PostgreSQL database by URI.
import ArgumentParser
import FlowStore
import PostgresStore
import SQLiteStore

enum OpenStore {
    /// What `--db` (else FLOWSTACK_DB, else ./flowstack.sqlite) names; a URL of a scheme
    /// FlowStack does not speak is refused (`StoreError.unsupportedLocation`), not taken as a file name.
    /// It is a usage error (status 2, with the subcommand's usage).
    static func location(_ option: String?, _ env: Environment = Environment()) throws -> DatabaseLocation {
        do {
            return try DatabaseLocation.checked(env.string(option, "FLOWSTACK_DB", default: "./flowstack.sqlite"))
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The store at `location`, opened but not migrated. `threads` (the HTTP threads) sizes a
    /// PostgreSQL pool: each thread may hold one connection, the writer one more. `exclusive`
    /// (serve, migrate) holds a SQLite file's lock, so that no other server or migration runs on
    /// it meanwhile; `backup` reads alongside a server, and the flow and experiment tools never
    /// open the database. `connectTimeout` bounds one attempt to reach PostgreSQL.
    static func open(_ location: DatabaseLocation, durability: Durability = .normal, threads: Int = 8,
                     exclusive: Bool, connectTimeout: Duration = .seconds(10)) throws -> any FlowStore {
        switch location {
        case .sqlite(let path): try SQLiteStore(path: path, durability: durability, exclusive: exclusive)
        case .postgresql(let uri):
            try PostgresStore(uri: uri, durability: durability, connections: max(16, threads + 4), connectTimeout: connectTimeout)
        }
    }
}

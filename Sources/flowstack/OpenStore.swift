// Opens the store `--db` names: a SQLite file (the default), or a PostgreSQL database by URI.
import FlowStore
import PostgresStore
import SQLiteStore

enum OpenStore {
    /// The store at `location`, opened but not migrated. `threads` (the HTTP threads) sizes a
    /// PostgreSQL pool: each thread may hold one connection, the writer one more.
    static func open(_ location: DatabaseLocation, durability: Durability = .normal, threads: Int = 8) throws -> any FlowStore {
        switch location {
        case .sqlite(let path): try SQLiteStore(path: path, durability: durability)
        case .postgresql(let uri): try PostgresStore(uri: uri, durability: durability, connections: max(16, threads + 4))
        }
    }
}

// The version each session's last commit left, kept by the writer while nothing else writes.
import GRDB
import GRDBSQLite
import Synchronization

/// The versions the writer's own batches committed, so that a commit need not read its session's
/// version back from the database: that read (the session's row and the newest entry of its log,
/// two B-tree seeks) was 5% of the server's CPU per durable action under load (`perf record
/// --call-graph dwarf`, 2026-11-30).
///
/// They are right only while nothing but the batches has written the file. SQLite's pager counts
/// every change to the database (`SQLITE_FCNTL_DATA_VERSION`): its own commits, and, when a
/// transaction starts, any commit of another connection or process. The count read when a batch
/// has begun its transaction is compared with the count its previous batch left; if they differ,
/// something else wrote (a session created or deleted on the writer, retention, another store on
/// the file, a script) and every version is forgotten, to be read from the database again.
///
/// A trigger could write the log inside a batch's own transaction, where no count moves. The
/// schema has none, but a database could be given one (tests do, to play another writer): each
/// time the count moved (as creating a trigger moves it), the batch looks for triggers, and
/// while there is one no version is kept.
final class CommittedVersions: Sendable {
    /// The versions a batch works with, taken at its start and given back at its end: each the
    /// version and rowid of the session's newest log entry, which that batch wrote.
    struct Known {
        fileprivate(set) var heads: [String: LogHead]
        /// False while a trigger could write inside the transaction: nothing is kept.
        fileprivate let keeps: Bool
    }

    /// Beyond this many sessions the versions start over (a session's first commit after reads
    /// its version from the database, as after a restart): some 100 bytes each.
    static let capacity = 100_000

    /// The pager's counts of the main database and of the connection's temporary one (where a
    /// temporary trigger would live; nil until something opens it, as creating one does).
    struct DataVersion: Equatable {
        var main: UInt32
        var temp: UInt32?
    }

    private struct State {
        var heads: [String: LogHead] = [:]
        /// The counts the last batch left; nil when none are known to be the writer's own.
        var dataVersion: DataVersion?
        var keeps = false
    }

    private let state = Mutex(State())
    /// Commits that read their session's version from the database (the rest used the batches').
    let databaseReads = Atomic<Int>(0)
    /// Where the batches' statements keep the values they bind (`EntryStatements`), made once:
    /// 16 KiB allocated at every batch was one of glibc's large allocations, each of which
    /// first sorts its freed small chunks (`malloc_consolidate`). Only a batch uses it, inside
    /// the writer connection's `writeWithoutTransaction`, which runs one closure at a time.
    nonisolated(unsafe) let bindArena = BindArena(capacity: 16 * 1024)

    /// At the start of a batch, inside its transaction: the versions, if the database is as the
    /// last batch left it, and none otherwise.
    func begin(_ db: Database) -> Known {
        let current = Self.dataVersion(db)
        let (heads, unchanged, keeps) = state.withLock { state in
            defer { state.heads = [:] }
            return (state.heads, current != nil && current == state.dataVersion, state.keeps)
        }
        if unchanged { return Known(heads: heads, keeps: keeps) }
        guard let current else { return Known(heads: [:], keeps: false) }
        return Known(heads: [:], keeps: Self.hasNoTriggers(db, temporary: current.temp != nil))
    }

    /// After the batch's transaction committed: what it wrote, and the counts it left.
    func committed(_ known: Known, _ db: Database) {
        let current = Self.dataVersion(db)
        state.withLock { state in
            state.heads = known.heads.count > Self.capacity ? [:] : known.heads
            state.dataVersion = current
            state.keeps = known.keeps
        }
    }

    /// After a batch whose transaction did not commit: nothing known is kept.
    func forget() {
        state.withLock { state in
            state.heads = [:]
            state.dataVersion = nil
        }
    }

    /// The pager's counts of changes, nil when SQLite does not say.
    static func dataVersion(_ db: Database) -> DataVersion? {
        guard let connection = db.sqliteConnection else { return nil }
        func count(_ name: String) -> UInt32? {
            var version: UInt32 = 0
            return sqlite3_file_control(connection, name, SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK ? version : nil
        }
        guard let main = count("main") else { return nil }
        return DataVersion(main: main, temp: count("temp"))
    }

    /// No trigger in the database, nor in the connection's temporary schema when it has one
    /// (`temporary`: reading it would open it, and every transaction would then begin and
    /// commit it too); false if that cannot be read.
    static func hasNoTriggers(_ db: Database, temporary: Bool) -> Bool {
        let main = "SELECT NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger')"
        let sql = temporary ? main + " AND NOT EXISTS (SELECT 1 FROM sqlite_temp_master WHERE type = 'trigger')" : main
        return (try? Bool.fetchOne(db, sql: sql)) == true
    }
}

/// A session's newest log entry: its version, and its rowid, which the next entry names as the
/// one before it (`previous`, migration 20); and the rowid of its newest idempotency key, which
/// the next key names the same way (migration 21), nil when it has none.
struct LogHead {
    var version: Int
    var entry: Int64
    var key: Int64?
}

extension CommittedVersions.Known {
    func head(of sessionId: String) -> LogHead? { heads[sessionId] }

    /// A commit of the session was written (its savepoint released): `head` is its entry.
    mutating func wrote(_ sessionId: String, head: LogHead) {
        guard keeps else { return }
        heads[sessionId] = head
    }

    /// A commit of the session failed: its version is read from the database next time.
    mutating func forget(_ sessionId: String) {
        heads[sessionId] = nil
    }
}

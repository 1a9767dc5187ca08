// A log written before it kept only snapshots (every entry with its tree, no head rows) on
// SQLite and on PostgreSQL (each a named case): migrated, its entries are snapshots, its sessions
// stand where they stood, and commits go on in the new shape.
import FlowStore
import Foundation
import GRDB
@testable import PostgresStore
import SQLiteStore
import StoreTestSupport
import Testing

extension SessionStoreTests {
    /// The database at the previous build's schema (SQLite 15 migrations, PostgreSQL 12), with
    /// a session and three entries as that build wrote them; then this build's migrations.
    @Test(arguments: TestStoreKind.allCases) func logsWrittenBeforeSnapshotsAreSnapshots(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.open()
        defer { try? store.close() }
        let dialect: SQLDialect = kind == .sqlite ? .sqlite : .postgresql
        _ = try store.migrate(Array(Migration.bundled(dialect).prefix(kind == .sqlite ? 15 : 12)))
        let time = "2026-11-01T00:00:00.000Z"
        var statements = [
            "INSERT INTO users (id, state, created_at, updated_at) VALUES ('u-1', '{}', '\(time)', '\(time)')",
            """
            INSERT INTO sessions (id, user_id, token_hash, version, tree, context, flags, experiments, flow_versions,
                created_at, updated_at)
            VALUES ('old', 'u-1', '\\x010203', 0, '{"t":0}', '{}', '{}', '{}', '{"app":1}', '\(time)', '\(time)')
            """,
        ]
        for version in 1...3 {
            statements.append("""
                INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition, created_at, tree)
                VALUES ('old', \(version), 't\(version)', NULL, '{}', FALSE, 'app', '{"type":"push","v":\(version)}', '\(time)', '{"t":\(version)}')
                """)
        }
        try DefinitionStoreTests.execute(store, statements)
        _ = try store.migrate()

        let migrated = try #require(try store.session(id: "old"))
        #expect(migrated.version == 3 && migrated.tree == Array("{\"t\":3}".utf8))
        #expect(migrated.lastTransition == "{\"type\":\"push\",\"v\":3}" && migrated.handledBy == "app")
        // Every old entry is a snapshot: a rebuild after version 2 starts from its tree.
        let slice = try #require(try store.actionLog(sessionId: "old", after: 2, limit: 10))
        #expect(slice.startVersion == 2 && slice.startTree == Array("{\"t\":2}".utf8))
        #expect(slice.entries.map(\.action.version) == [3] && slice.entries.first?.tree == Array("{\"t\":3}".utf8))
        #expect(slice.entries.first?.action.transition == "{\"type\":\"push\",\"v\":3}")

        // The next commit goes on from the head, in the new shape: no tree on its entry, the
        // head row holds it.
        #expect(throws: CommitError.versionConflict(stored: 3)) { try store.commit(Self.commit("old", version: 3)) }
        var next = Self.commit("old", version: 4)
        next.action.userState = "{\"onboarded\":true}"
        try store.commit(next)
        let moved = try #require(try store.session(id: "old"))
        #expect(moved.version == 4 && moved.tree == Array("{\"t\":4}".utf8) && moved.lastTransition == "{\"type\":\"push\"}")
        let log = try #require(try store.actionLog(sessionId: "old", after: 3, limit: 10))
        #expect(log.startVersion == 3 && log.entries.map(\.action.version) == [4])
        #expect(log.entries.first?.tree == nil && log.entries.first?.action.transition == nil)
        #expect(log.entries.first?.action.userState == "{\"onboarded\":true}")
        #expect(try store.actions(sessionId: "old", after: 0, limit: 10).map(\.type) == ["t1", "t2", "t3", "t4"])
    }
}

/// A rebuilder that is never asked: the test below reads no head it would rebuild.
private struct UnusedRebuilder: SessionHeadRebuilder {
    func head(of record: SessionRecord, after entries: [ActionRecord]) -> SessionHead? { nil }
}

extension SessionStoreTests {
    /// Which commits store the tree: every one on PostgreSQL, and on SQLite every one until the
    /// store has a rebuilder, then those at a head or a snapshot. A commit that comes without its
    /// tree where the store writes one fails and writes nothing; between heads it commits.
    @Test(arguments: TestStoreKind.allCases) func commitsWithoutTheirTreeWhereItIsNotStored(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        defer { try? store.close() }
        let heads = Array(stride(from: LogSnapshots.headInterval, through: LogSnapshots.interval, by: LogSnapshots.headInterval))
        #expect((1...LogSnapshots.interval).allSatisfy { store.storesTree(atVersion: $0) })
        store.rebuildHeads(with: UnusedRebuilder())
        let stored = (1...LogSnapshots.interval).filter { store.storesTree(atVersion: $0) }
        #expect(stored == (kind == .sqlite ? heads : Array(1...LogSnapshots.interval)))

        try store.insert(Self.session("s"))
        for version in 1...LogSnapshots.headInterval {
            var commit = Self.commit("s", version: version)
            if !store.storesTree(atVersion: version) { commit.tree = [] }
            try store.commit(commit)
        }
        var treeless = Self.commit("s", version: LogSnapshots.headInterval + 1)
        treeless.tree = []
        if kind == .sqlite {
            try store.commit(treeless)
            var head = Self.commit("s", version: 2 * LogSnapshots.headInterval)
            head.tree = []
            for version in LogSnapshots.headInterval + 2..<2 * LogSnapshots.headInterval {
                var commit = Self.commit("s", version: version)
                commit.tree = []
                try store.commit(commit)
            }
            #expect(throws: CommitError.treeMissing) { try store.commit(head) }
            let log = try store.actions(sessionId: "s", after: 0, limit: 100)
            #expect(log.count == 2 * LogSnapshots.headInterval - 1, "the treeless head was not written")
        }
        // The head row holds the last head's tree, which every read starts from.
        if let sqlite = store as? SQLiteStore {
            let tree = try sqlite.pool.read { db in
                try Data.fetchOne(db, sql: "SELECT tree FROM session_heads WHERE session_id = 's'")
            }
            #expect(tree == Data("{\"t\":\(LogSnapshots.headInterval)}".utf8))
        }
    }
}

extension SessionStoreTests {
    /// A full disk in the middle of a batch (SQLite's `max_page_count` reached): SQLite rolls
    /// the whole transaction back, so every commit of the batch fails, none is half written,
    /// the writer is left with no transaction open, and once there is room commits go on from
    /// the last version that was written.
    @Test func aFullDiskFailsTheWholeBatchAndCommitsGoOnAfter() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        defer { try? store.close() }
        let sqlite = try #require(store as? SQLiteStore)
        try store.insert(Self.session("s"))
        let pages = try sqlite.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try sqlite.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages + 2)") }
        // Entries of 8 KB each: a few fit in the pages left.
        let padding = String(repeating: "p", count: 8_000)
        var written = 0
        var failure: (any Error)?
        while failure == nil, written < 50 {
            var pair = [Self.commit("s", version: written + 1), Self.commit("s", version: written + 2)]
            for index in pair.indices { pair[index].action.params = "{\"p\":\"\(padding)\"}" }
            let results = Self.submitted(pair, to: store)
            if case .failure(let error) = results[0] {
                failure = error
                #expect(results.allSatisfy { if case .failure = $0 { true } else { false } }, "\(results)")
            } else {
                #expect(results.allSatisfy { if case .success = $0 { true } else { false } }, "\(results)")
                written += 2
            }
        }
        let error = try #require(failure, "50 batches of 16 KB fitted in two pages")
        #expect((error as? DatabaseError)?.resultCode == .SQLITE_FULL, "\(error)")
        #expect(try store.actions(sessionId: "s", after: 0, limit: 100).count == written)
        #expect(try store.session(id: "s")?.version == written)

        try sqlite.pool.writeWithoutTransaction { db in
            #expect(!db.isInsideTransaction)
            try db.execute(sql: "PRAGMA max_page_count = 1073741823")
        }
        #expect(Self.submitted([Self.commit("s", version: written + 1)], to: store).count == 1)
        #expect(try store.session(id: "s")?.version == written + 1)
    }
}

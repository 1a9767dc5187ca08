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

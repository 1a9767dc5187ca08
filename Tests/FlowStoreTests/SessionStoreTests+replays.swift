// What a replay reads: recorded sessions newest first, in batches, with their logs and trees, on
// SQLite and on PostgreSQL (each a named case).
import FlowStore
import StoreTestSupport
import Foundation
import Testing

extension SessionStoreTests {
    /// Sessions at fixed creation times, `s-1` oldest; each with `actions` log entries.
    static func fill(_ store: any FlowStore, sessions: Int, actions: Int) throws {
        for index in 1...sessions {
            var session = SessionStoreTests.session("s-\(index)")
            session.createdAt = "2026-11-2\(index % 2 == 0 ? 4 : 3)T10:00:0\(index % 10).000Z"
            try store.insert(session)
            for version in stride(from: 1, through: actions, by: 1) {
                try store.commit(SessionStoreTests.commit("s-\(index)", version: version))
            }
        }
    }

    /// Batches follow each other from the cursor, newest first (creation time, then id), miss
    /// none and repeat none; each session comes as created, with its log and each entry's tree,
    /// cut at `maxActions`.
    @Test(arguments: TestStoreKind.allCases) func readsBatchesNewestFirstWithLogsAndTrees(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try Self.fill(store, sessions: 7, actions: 3)
        var seen: [String] = []
        var cursor: RecordedSessionCursor?
        while true {
            let batch = try store.recordedSessions(createdSince: "2026-11-01T00:00:00.000Z", before: cursor, limit: 3, maxActions: 2)
            #expect(batch.count <= 3)
            for recorded in batch {
                #expect(recorded.session.version == 0)
                #expect(recorded.session.tree == Array("{\"t\":0}".utf8))
                #expect(recorded.actions.map(\.action.version) == [1, 2])
                // Trees are kept only at snapshots (see LogSnapshots).
                #expect(recorded.actions.map(\.tree) == [nil, nil])
                #expect(recorded.actions.first?.action.type == "t1")
            }
            seen += batch.map(\.session.id)
            guard batch.count == 3, let last = batch.last else { break }
            cursor = last.cursor
        }
        // The 24th (even ids) before the 23rd, later seconds first within a day.
        #expect(seen == ["s-6", "s-4", "s-2", "s-7", "s-5", "s-3", "s-1"])
    }

    /// Only sessions created at or after `since` are read.
    @Test(arguments: TestStoreKind.allCases) func readsOnlySince(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try Self.fill(store, sessions: 4, actions: 0)
        let batch = try store.recordedSessions(createdSince: "2026-11-24T00:00:00.000Z", before: nil, limit: 100, maxActions: 10)
        #expect(batch.map(\.session.id) == ["s-4", "s-2"])
        #expect(batch.allSatisfy { $0.actions.isEmpty })
    }
}

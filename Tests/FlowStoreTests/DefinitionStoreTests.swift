// What the stores keep for the builds in the field, on SQLite and on PostgreSQL (each a named
// case): each session's client, the history of activations (and its backfill by the migration), the
// exclusions an experiment's report counts, and sessions per client since a time.
import FlowStore
import Foundation
import GRDB
@testable import PostgresStore
import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Definition store")
struct DefinitionStoreTests {
    static func session(_ id: String, user: String = "u-1", client: String? = nil, at time: String = Timestamp.string()) -> SessionRecord {
        SessionRecord(id: id, userId: user, tokenHash: [1, 2, 3], version: 0, tree: Array("{\"t\":0}".utf8),
                      context: "{}", flags: "{}", experiments: "{}", flowVersions: "{\"app\":1}",
                      createdAt: time, updatedAt: time, client: client)
    }

    /// Runs plain SQL statements on the store's database, whichever it is.
    static func execute(_ store: any FlowStore, _ statements: [String]) throws {
        if let sqlite = store as? SQLiteStore {
            try sqlite.pool.write { db in for sql in statements { try db.execute(sql: sql) } }
        } else if let postgres = store as? PostgresStore {
            _ = try postgres.write(statements.map { PGStatement($0) })
        }
    }

    /// A session's client is stored as given and read back; a session without one reads nil.
    @Test(arguments: TestStoreKind.allCases) func clientRoundTrips(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        let client = #"{"platform":"ios","appVersion":"2.3.1","features":["a","b"]}"#
        try store.insert(Self.session("with", client: client))
        try store.insert(Self.session("without"))
        #expect(try store.session(id: "with")?.client == client)
        #expect(try store.session(id: "without")?.client == nil)
    }

    /// The stamps are every stored version's name, version and time, in the order of
    /// `allFlowVersions`, without the texts; a version removed is not among them.
    @Test(arguments: TestStoreKind.allCases) func flowVersionStampsAreTheStoredVersionsWithoutTheirTexts(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        #expect(try store.flowVersionStamps().isEmpty)
        try store.seedFlow(name: "g", definition: "{}")
        try store.seedFlow(name: "f", definition: "{}")
        for _ in 0..<10 { _ = try store.addFlowVersion(name: "f", definition: #"{"a":1}"#, activate: false) }
        let all = try store.allFlowVersions()
        #expect(all.count == 12)
        #expect(try store.flowVersionStamps() == all.map { FlowVersionStamp(name: $0.name, version: $0.version, createdAt: $0.createdAt) })
        #expect(try store.flowVersionStamps().map { "\($0.name)\($0.version)" }.prefix(3) == ["f1", "f2", "f3"], "by name, then version as a number")
        try Self.execute(store, ["DELETE FROM flow_versions WHERE name = 'f' AND version = 5"])
        #expect(try store.flowVersionStamps().count == 11)
        #expect(try !store.flowVersionStamps().contains { $0.name == "f" && $0.version == 5 })
    }

    /// What a reload reads, read together, is what each part reads on its own.
    @Test(arguments: TestStoreKind.allCases) func definitionsReadTogetherAreTheirPartsRead(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        try store.seedFlow(name: "f", definition: "{}")
        let mark = try store.flowVersionChanges(since: nil)?.mark
        _ = try store.addFlowVersion(name: "f", definition: #"{"a":1}"#, activate: true, audit: nil)
        _ = try store.addFlowVersion(name: "g", definition: #"{"b":2}"#, activate: false, audit: nil)
        _ = try store.putDefinition(.flag, key: "k", definition: #"{"f":1}"#, audit: nil)
        _ = try store.putDefinition(.experiment, key: "e", definition: #"{"e":1}"#, audit: nil)
        let read = try store.definitionsRead(since: mark)
        #expect(read.changes?.changed == (try store.flowVersionChanges(since: mark))?.changed)
        #expect(read.changes?.mark == (try store.flowVersionChanges(since: mark))?.mark)
        #expect(kind == .sqlite || read.changes?.changed.map(\.version) == [2, 1], "f 2 and g 1, stored since the mark")
        #expect(read.live == ["f": 2])
        #expect(read.activations == (try store.flowActivations()) && read.activations["f"] == [1, 2])
        #expect(read.flags == (try store.allDefinitions(.flag)) && read.flags.map(\.key) == ["k"])
        #expect(read.experiments == (try store.allDefinitions(.experiment)) && read.experiments.map(\.key) == ["e"])
    }

    /// On PostgreSQL, the flow versions stored or edited since a mark are read by the mark alone;
    /// a version removed, or moved to another number, moves the removals. SQLite keeps no marks,
    /// nor does a PostgreSQL whose revision's row was removed.
    @Test(arguments: TestStoreKind.allCases) func flowVersionChangesAreWhatWasStoredSinceAMark(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        guard kind == .postgresql else {
            #expect(try store.flowVersionChanges(since: nil) == nil)
            return
        }
        try store.seedFlow(name: "f", definition: "{}")
        let start = try #require(try store.flowVersionChanges(since: nil))
        #expect(start.changed.isEmpty, "the mark alone")
        #expect(try store.flowVersionChanges(since: start.mark)?.changed.isEmpty == true)

        let stored = try store.addFlowVersion(name: "f", definition: #"{"a":1}"#, activate: false, audit: nil)
        let afterPut = try #require(try store.flowVersionChanges(since: start.mark))
        #expect(afterPut.changed == [FlowVersionRecord(name: "f", version: 2, definition: #"{"a":1}"#, createdAt: stored.createdAt)])
        #expect(afterPut.mark.revision > start.mark.revision && afterPut.mark.removals == start.mark.removals)
        _ = try store.putDefinition(.flag, key: "k", definition: "{}", audit: nil)
        let afterFlag = try #require(try store.flowVersionChanges(since: afterPut.mark))
        #expect(afterFlag.changed.isEmpty && afterFlag.mark.revision > afterPut.mark.revision, "the revision moves, no version")

        try Self.execute(store, ["UPDATE flow_versions SET definition = '{\"b\":2}' WHERE name = 'f' AND version = 1"])
        let edited = try #require(try store.flowVersionChanges(since: afterFlag.mark))
        #expect(edited.changed.map { "\($0.name)\($0.version) \($0.definition)" } == [#"f1 {"b":2}"#], "edited in place: read again")
        #expect(edited.mark.removals == start.mark.removals)

        try Self.execute(store, ["UPDATE flow_versions SET version = 7 WHERE name = 'f' AND version = 2"])
        let moved = try #require(try store.flowVersionChanges(since: edited.mark))
        #expect(moved.changed.map { "\($0.name)\($0.version)" } == ["f7"])
        #expect(moved.mark.removals == edited.mark.removals + 1, "f2 is gone")
        try Self.execute(store, ["DELETE FROM flow_versions WHERE name = 'f' AND version = 7"])
        let removed = try #require(try store.flowVersionChanges(since: moved.mark))
        #expect(removed.changed.isEmpty && removed.mark.removals == moved.mark.removals + 1)

        try Self.execute(store, ["DELETE FROM definitions_revision"])
        #expect(try store.flowVersionChanges(since: removed.mark) == nil, "no marks: read the stamps")
    }

    /// A version's revision is taken under the revision row's lock, held until its transaction
    /// commits: a version stored by a transaction that waited for another's commit is above the
    /// mark read between the two commits, so the next read since that mark finds it.
    @Test(arguments: [TestStoreKind.postgresql]) func aVersionCommittedAfterAMarkIsAboveIt(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        let deadline = ContinuousClock.now + .seconds(30)
        let uri = database.location
        @Sendable func insert(_ name: String) -> [PGStatement] {
            [PGStatement("BEGIN"), PGStatement("INSERT INTO flow_versions (name, version, definition, created_at) VALUES ('\(name)', 1, '{}', 'then')")]
        }
        let first = try PGConnection.connect(uri: uri, setup: [], deadline: deadline)
        _ = try first.run(insert("first"), deadline: deadline)
        let (inserted, read, committed) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let waiting = Thread {
            guard let second = try? PGConnection.connect(uri: uri, setup: [], deadline: deadline) else { return }
            _ = try? second.run(insert("second"), deadline: deadline)  // waits for the first's commit
            inserted.signal()
            read.wait()
            _ = try? second.run([PGStatement("COMMIT")], deadline: deadline)
            committed.signal()
        }
        waiting.start()
        Thread.sleep(forTimeInterval: 0.2)
        _ = try first.run([PGStatement("COMMIT")], deadline: deadline)
        #expect(inserted.wait(timeout: .now() + 10) == .success)
        let mark = try #require(try store.flowVersionChanges(since: nil)).mark  // the first committed, the second not yet
        read.signal()
        #expect(committed.wait(timeout: .now() + 10) == .success)
        #expect(try store.flowVersionChanges(since: mark)?.changed.map(\.name) == ["second"])
    }

    /// Every activation is in the history: seeding, a PUT with activate, the activate route, a
    /// rollback; a version only uploaded is not.
    @Test(arguments: TestStoreKind.allCases) func activationsAreRecorded(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        try store.seedFlow(name: "f", definition: "{}")
        #expect(try store.flowActivations() == ["f": [1]])
        #expect(try store.addFlowVersion(name: "f", definition: "{}", activate: false) == 2)
        #expect(try store.addFlowVersion(name: "f", definition: "{}", activate: true, audit: AuditStamp(credential: "admin:1")).version == 3)
        #expect(try store.flowActivations() == ["f": [1, 3]])
        #expect(try store.activateFlow(name: "f", version: 2))
        #expect(try store.activateFlow(name: "f", version: 1, audit: AuditStamp(credential: "admin:1")))
        #expect(try !store.activateFlow(name: "f", version: 9))
        try store.seedFlow(name: "g", definition: "{}")
        try store.seedFlow(name: "g", definition: "{}")
        #expect(try store.flowActivations() == ["f": [1, 2, 3], "g": [1]])
    }

    /// The migration fills the history from what a database already knows: the live versions
    /// and the audit log's activations of versions that exist.
    @Test(arguments: TestStoreKind.allCases) func migrationBackfillsActivations(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.open()
        defer { try? store.close() }
        let bundled = Migration.bundled(store.dialect)
        try store.migrate(Array(bundled.prefix { $0.name != "client_capabilities" }))
        try Self.execute(store, ["""
            INSERT INTO flow_versions (name, version, definition, created_at) VALUES
                ('x', 1, '{}', '2026-01-01T00:00:00.000Z'), ('x', 2, '{}', '2026-01-02T00:00:00.000Z'),
                ('x', 3, '{}', '2026-01-03T00:00:00.000Z'), ('x', 4, '{}', '2026-01-04T00:00:00.000Z'),
                ('y', 1, '{}', '2026-01-01T00:00:00.000Z')
            """, """
            INSERT INTO live_flows (name, version, activated_at) VALUES ('x', 3, '2026-01-05T00:00:00.000Z'), ('y', 1, '2026-01-01T00:00:00.000Z')
            """, """
            INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential) VALUES
                (1, '2026-01-02T00:00:00.000Z', 'flow.activate', 'x', 1, 2, 'admin:1'),
                (2, '2026-01-03T00:00:00.000Z', 'flow.put', 'x', 2, 4, 'admin:1'),
                (3, '2026-01-04T00:00:00.000Z', 'flow.activate', 'x', 2, 3, 'admin:1'),
                (4, '2026-01-04T00:00:00.000Z', 'flow.activate', 'ghost', NULL, 9, 'admin:1')
            """])
        try store.migrate()
        #expect(try store.schemaVersion() == (bundled.last?.version ?? 0))
        #expect(try store.flowActivations() == ["x": [2, 3], "y": [1]])
    }

    /// The report counts exclusions per variant, apart from the sessions exposed.
    @Test(arguments: TestStoreKind.allCases) func exclusionsAreCountedInTheReport(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        try store.insert(Self.session("a"), exposures: [("exp", "control")], exclusions: [], firstFeature: "home.first")
        try store.insert(Self.session("b"), exposures: [], exclusions: [("exp", "control")], firstFeature: nil)
        try store.insert(Self.session("c"), exposures: [("other", "x")], exclusions: [("exp", "treatment"), ("third", "t")], firstFeature: "modal")
        try store.insert(Self.session("d"), exposures: [], exclusions: [("exp", "treatment")], firstFeature: nil)
        let report = try store.experimentReport("exp")
        #expect(report["control"] == ExperimentVariantCounts(sessions: 1, onboarded: 0, funnel: ["home.first": 1], excluded: 1))
        #expect(report["treatment"] == ExperimentVariantCounts(sessions: 0, onboarded: 0, funnel: [:], excluded: 2))
        #expect(try store.experimentReport("third")["t"]?.excluded == 1)
        // Kept when the session goes, like exposures.
        try store.deleteSession(id: "d")
        #expect(try store.experimentReport("exp")["treatment"]?.excluded == 2)
    }

    /// Sessions since a time, per client text, most frequent first, bounded; the total counts them all.
    @Test(arguments: TestStoreKind.allCases) func clientCountsSince(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        let old = "2026-01-01T00:00:00.000Z"
        let recent = "2026-02-01T00:00:00.000Z"
        try store.insert(Self.session("s0", client: "A", at: old))
        for index in 1...3 { try store.insert(Self.session("s\(index)", client: "A", at: recent)) }
        for index in 4...5 { try store.insert(Self.session("s\(index)", client: "B", at: recent)) }
        try store.insert(Self.session("s6", client: nil, at: recent))
        let counts = try store.clientCounts(createdSince: "2026-01-15T00:00:00.000Z", limit: 10)
        #expect(counts.total == 6)
        #expect(counts.clients == [ClientSessionCount(client: "A", sessions: 3), ClientSessionCount(client: "B", sessions: 2),
                                   ClientSessionCount(client: nil, sessions: 1)])
        let bounded = try store.clientCounts(createdSince: "2026-01-15T00:00:00.000Z", limit: 1)
        #expect(bounded.total == 6 && bounded.clients == [ClientSessionCount(client: "A", sessions: 3)])
        #expect(try store.clientCounts(createdSince: "2026-03-01T00:00:00.000Z", limit: 10).total == 0)
    }
}


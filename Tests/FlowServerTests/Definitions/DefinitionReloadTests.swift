// A node reads its definitions again when another node changed them: what it already holds is
// neither read nor parsed again (flow versions are immutable), and what changed is.
@testable import FlowServer
import FlowStore
import Logging
import Foundation
@testable import PostgresStore
import SQLiteStore
import StoreTestSupport
import Synchronization
import Testing

struct DefinitionReloadTests {
    static func text(_ name: String) throws -> String {
        String(decoding: try #require(BundledFlows.documents.first { $0.name == name }).bytes, as: UTF8.self)
    }

    /// A fresh database of `kind` with the sample app's four flows stored, version 1 of each live.
    static func seeded(_ kind: TestStoreKind) throws -> (database: TestDatabase, store: any FlowStore) {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        for name in ["app", "home", "onboarding", "modal"] { try store.seedFlow(name: name, definition: try Self.text(name)) }
        return (database, store)
    }

    /// A registry loaded from everything `store` holds: as a node starts when `marked`
    /// (`loadStored`: with the mark of its flow versions, where the store keeps marks), else
    /// without a mark (its first reload compares every stamp).
    static func loaded(_ store: any FlowStore, marked: Bool = false) throws -> DefinitionRegistry {
        if marked { return try DefinitionRegistry.loadStored(from: store, fingerprint: false).registry }
        return DefinitionRegistry.load(flows: try store.allFlowVersions(), live: try store.liveFlowVersions(),
                                       activations: try store.flowActivations(), flags: try store.allDefinitions(.flag),
                                       experiments: try store.allDefinitions(.experiment)).registry
    }

    /// Runs plain SQL on the store's database, as an operator would by hand.
    static func execute(_ store: any FlowStore, _ sql: String) throws {
        if let sqlite = store as? SQLiteStore {
            try sqlite.pool.write { db in try db.execute(sql: sql) }
        } else if let postgres = store as? PostgresStore {
            _ = try postgres.write([PGStatement(sql)])
        }
    }

    /// Another node's new version, flag and live version are taken over; every version held
    /// before keeps its parsed definition (the same object: not read or parsed again).
    @Test(arguments: TestStoreKind.allCases) func aReloadTakesOverOnlyWhatChanged(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        let registry = try Self.loaded(store)
        let held = try #require(registry.flow("home", version: 1))

        // Through another node: a version made live, and a flag.
        #expect(try store.addFlowVersion(name: "home", definition: try Self.text("home") + "\n", activate: true) == 2)
        _ = try store.putDefinition(.flag, key: "f", definition: #"{"variants":{"on":true,"off":false},"defaultVariant":"on"}"#, audit: nil)
        #expect(try registry.reload(from: store).isEmpty)

        #expect(registry.flow("home", version: 1) === held, "held: kept, not parsed again")
        #expect(registry.flow("home", version: 2)?.text == (try Self.text("home")) + "\n")
        #expect(registry.liveVersions["home"] == 2)
        #expect(registry.summary.first { $0.name == "home" }?.latest == 2)
        #expect(registry.flag("f") != nil)
        #expect(registry.catalog(for: ["app": 1, "home": 2, "onboarding": 1, "modal": 1]) != nil, "the new version runs")
    }

    /// Versions removed by hand go; a version removed and stored again under the same number
    /// (a later time, another text) is read again; more new versions than are read one by one
    /// are read all at once, and the held ones still keep their definitions.
    @Test(arguments: TestStoreKind.allCases) func aReloadFollowsVersionsRemovedAndStoredAgain(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        #expect(try store.addFlowVersion(name: "modal", definition: try Self.text("modal"), activate: false) == 2)
        let registry = try Self.loaded(store)
        let home = try #require(registry.flow("home", version: 1))
        let modal = try #require(registry.flow("modal", version: 1))

        try Self.execute(store, "DELETE FROM flow_versions WHERE name = 'modal' AND version = 2")
        _ = try registry.reload(from: store)
        #expect(registry.flow("modal", version: 2) == nil)
        #expect(registry.summary.first { $0.name == "modal" }?.latest == 1)

        try Self.execute(store, "DELETE FROM live_flows WHERE name = 'onboarding'")
        try Self.execute(store, "DELETE FROM flow_activations WHERE name = 'onboarding'")
        try Self.execute(store, "DELETE FROM flow_versions WHERE name = 'onboarding'")
        Thread.sleep(forTimeInterval: 0.01)  // stored times are in milliseconds: the new one is later
        let again = try Self.text("onboarding") + " "
        #expect(try store.addFlowVersion(name: "onboarding", definition: again, activate: true) == 1)
        _ = try registry.reload(from: store)
        #expect(registry.flow("onboarding", version: 1)?.text == again, "stored again: read again")
        #expect(registry.flow("home", version: 1) === home)

        let many = DefinitionRegistry.versionsReadOneByOne + 8
        for _ in 0..<many { _ = try store.addFlowVersion(name: "home", definition: try Self.text("home"), activate: false) }
        _ = try registry.reload(from: store)
        #expect(registry.summary.first { $0.name == "home" }?.latest == 1 + many)
        #expect((2...(1 + many)).allSatisfy { registry.flow("home", version: $0) != nil })
        #expect(registry.flow("home", version: 1) === home, "read all at once, held ones still kept")
        #expect(registry.flow("modal", version: 1) === modal)
    }

    /// A version stored through this node is held with the time the store gave it, so the
    /// reload that follows (its own change moved the fingerprint) keeps it as held. Ten versions:
    /// a time taken by the node after the store's falls in the same millisecond now and then.
    @Test func versionsStoredHereAreKeptByTheNextReload() throws {
        let test = try TestApp()
        for _ in 0..<10 {
            let put = try test.direct.send("PUT", "/v1/flows/home", body: try Self.text("home"),
                                           headers: [("Authorization", "Bearer \(TestApp.adminToken)")])
            #expect(put.status == 201)
        }
        let stamps = try test.store.flowVersionStamps().filter { $0.name == "home" && $0.version > 1 }
        #expect(stamps.count == 10)
        let held = try stamps.map { stamp in try #require(test.app.registry.flow("home", version: stamp.version)) }
        #expect(held.map(\.createdAt) == stamps.map(\.createdAt))
        _ = try test.app.registry.reload(from: test.store)
        #expect(zip(stamps, held).allSatisfy { test.app.registry.flow("home", version: $0.version) === $1 })
    }

    /// A node on PostgreSQL reads the mark of its flow versions as it starts: the first reload
    /// after the start reads a text edited in place since.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "marks are PostgreSQL's")) func aNodeStartsWithTheMarkOfItsVersions() throws {
        let test = try TestApp()
        try Self.execute(test.store, "UPDATE flow_versions SET definition = definition || ' ' WHERE name = 'home' AND version = 1")
        _ = try test.app.registry.reload(from: test.store)
        let homeText = try Self.text("home")
        #expect(test.app.registry.flow("home", version: 1)?.text == homeText + " ")
    }

    /// A stored version that does not parse is skipped at every reload, and reported by each
    /// reload that reads it: every one that reads the stamps (SQLite's), the first on PostgreSQL,
    /// whose next reloads read only the versions stored since. The versions beside it load.
    @Test(arguments: TestStoreKind.allCases) func aVersionThatDoesNotParseIsSkippedAtEveryReload(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        let registry = try Self.loaded(store)
        #expect(try store.addFlowVersion(name: "home", definition: "{not json", activate: false) == 2)
        #expect(try store.addFlowVersion(name: "home", definition: try Self.text("home"), activate: false) == 3)
        for reload in 0..<2 {
            let skipped = try registry.reload(from: store)
            #expect(skipped.count == (reload == 0 || kind == .sqlite ? 1 : 0))
            #expect(skipped.allSatisfy { $0.hasPrefix("home version 2") })
            #expect(registry.flow("home", version: 2) == nil)
            #expect(registry.flow("home", version: 3) != nil)
        }
    }

    /// On PostgreSQL, a reload after the first reads only the versions stored or edited since:
    /// a version's text edited in place by SQL, which the stamps do not show, is read again, and
    /// one edited into text that does not parse goes; the others stay the objects they were. A
    /// version removed makes the next reload compare the stamps again, and the one after reads
    /// only what is new again.
    @Test(arguments: [TestStoreKind.postgresql]) func aReloadReadsOnlyWhatWasStoredSinceTheLast(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        let registry = try Self.loaded(store)
        #expect(try registry.reload(from: store).isEmpty)  // the first reads the stamps, and the mark
        let app = try #require(registry.flow("app", version: 1))
        let home = try #require(registry.flow("home", version: 1))

        try Self.execute(store, "UPDATE flow_versions SET definition = definition || ' ' WHERE name = 'home' AND version = 1")
        #expect(try registry.reload(from: store).isEmpty)
        let edited = try #require(registry.flow("home", version: 1))
        let homeText = try Self.text("home")
        #expect(edited !== home && edited.text == homeText + " ", "edited in place: read again")
        #expect(registry.flow("app", version: 1) === app)

        #expect(try store.addFlowVersion(name: "home", definition: try Self.text("home"), activate: true) == 2)
        try Self.execute(store, "UPDATE flow_versions SET definition = '{not json' WHERE name = 'modal' AND version = 1")
        let skipped = try registry.reload(from: store)
        #expect(skipped.count == 1 && skipped.allSatisfy { $0.hasPrefix("modal version 1") })
        #expect(registry.flow("modal", version: 1) == nil && registry.liveVersions["modal"] == nil, "as a node starting now")
        #expect(registry.liveVersions["home"] == 2 && registry.flow("home", version: 1) === edited)
        #expect(registry.flow("app", version: 1) === app)

        #expect(try store.addFlowVersion(name: "app", definition: try Self.text("app"), activate: false) == 2)
        _ = try registry.reload(from: store)
        #expect(registry.flow("app", version: 2) != nil)
        try Self.execute(store, "DELETE FROM flow_versions WHERE name = 'app' AND version = 2")
        #expect(try store.addFlowVersion(name: "onboarding", definition: try Self.text("onboarding"), activate: false) == 2)
        _ = try registry.reload(from: store)
        #expect(registry.flow("app", version: 2) == nil && registry.flow("onboarding", version: 2) != nil)
        #expect(registry.summary.first { $0.name == "app" }?.latest == 1)
        try Self.execute(store, "UPDATE flow_versions SET definition = definition || ' ' WHERE name = 'app' AND version = 1")
        _ = try registry.reload(from: store)
        let appText = try Self.text("app")
        #expect(registry.flow("app", version: 1)?.text == appText + " ", "reading what is new again")
        #expect(registry.flow("home", version: 1) === edited)
    }

    /// On PostgreSQL, a text edited in place is read again by the first reload after a node
    /// starts (its mark read at the start), and by a reload that compares the stamps because a
    /// version was removed too; the catalogs built with the edited version go.
    @Test(arguments: [TestStoreKind.postgresql]) func anEditInPlaceIsReadWhicheverWayTheReloadGoes(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        let registry = try Self.loaded(store, marked: true)
        let live = ["app": 1, "home": 1, "onboarding": 1, "modal": 1]
        #expect(registry.catalog(for: live) != nil)
        let signature = try #require(registry.catalogsByRecency.first)

        try Self.execute(store, "UPDATE flow_versions SET definition = definition || ' ' WHERE name = 'home' AND version = 1")
        #expect(try registry.reload(from: store).isEmpty)
        let homeText = try Self.text("home")
        #expect(registry.flow("home", version: 1)?.text == homeText + " ", "the first reload after the start")
        #expect(!registry.catalogsByRecency.contains(signature), "its catalog went")

        #expect(try store.addFlowVersion(name: "modal", definition: try Self.text("modal"), activate: false) == 2)
        _ = try registry.reload(from: store)
        try Self.execute(store, "UPDATE flow_versions SET definition = definition || '  ' WHERE name = 'home' AND version = 1")
        try Self.execute(store, "DELETE FROM flow_versions WHERE name = 'modal' AND version = 2")
        #expect(try registry.reload(from: store).isEmpty)
        #expect(registry.flow("home", version: 1)?.text == homeText + "   ", "edited while a version was removed")
        #expect(registry.flow("modal", version: 2) == nil)
    }

    /// The revision's row removed and made again by hand starts its numbers over, under another
    /// epoch: a node that read up to a higher number compares every stamp, and reads a version
    /// stamped since with a lower number.
    @Test(arguments: [TestStoreKind.postgresql]) func aRevisionMadeAgainIsNotTakenForTheOldOne(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        for _ in 0..<5 {
            _ = try store.putDefinition(.flag, key: "f", definition: #"{"variants":{"on":true},"defaultVariant":"on"}"#, audit: nil)
        }
        let registry = try Self.loaded(store, marked: true)
        try Self.execute(store, "DELETE FROM definitions_revision")
        try Self.execute(store, "INSERT INTO definitions_revision (only_row, revision) VALUES (TRUE, 1)")
        try Self.execute(store, "UPDATE flow_versions SET definition = definition || ' ' WHERE name = 'app' AND version = 1")
        let skipped = try registry.reload(from: store)
        #expect(skipped.isEmpty, "\(skipped)")
        let appText = try Self.text("app")
        #expect(registry.flow("app", version: 1)?.text == appText + " ")
    }

    /// A change committed while a node reads its definitions at its start is taken over by
    /// the first read of the fingerprint after: the node starts knowing the fingerprint read
    /// before its definitions (`loadStored`), not one that already counts the change.
    @Test func aChangeCommittedWhileANodeLoadsIsTakenOverByItsFirstRead() throws {
        let (database, base) = try Self.seeded(TestStoreKind.current)
        defer { try? base.close(); withExtendedLifetime(database) {} }
        let store = StallingStore(base: base)
        store.afterNextDefinitionsRead { [base] in
            _ = try base.putDefinition(.flag, key: "late", definition: #"{"variants":{"on":true,"off":false},"defaultVariant":"on"}"#, audit: nil)
        }
        let start = try DefinitionRegistry.loadStored(from: store, fingerprint: true)
        #expect(start.registry.flag("late") == nil, "committed after the snapshot")
        let sync = DefinitionSync(store: store, registry: start.registry, known: start.fingerprint, logger: Logger(label: "test"),
                                  counters: ClusterCounters())
        #expect(sync.refresh() == (try base.definitionsFingerprint()))
        #expect(start.registry.flag("late") != nil, "read again: the fingerprint moved since the one known")
    }

    /// A fingerprint read before the one the registry was read at (by another thread, whose
    /// read began later and took the lock first) reads nothing again: what it counts is held. A
    /// later revision, one of another epoch (its row made again) and a fingerprint that carries
    /// no revision each read again; so does an earlier one forced.
    @Test func anEarlierRevisionReadsNothingAgain() throws {
        let (database, store) = try Self.seeded(.sqlite)
        defer { try? store.close(); withExtendedLifetime(database) {} }
        let counters = ClusterCounters()
        let sync = DefinitionSync(store: store, registry: try Self.loaded(store), known: "r7.e1", logger: Logger(label: "test"),
                                  counters: counters)
        var reloads: Int { counters.definitionReloads.load(ordering: .relaxed) }
        sync.refresh(seen: "r6.e1")
        #expect(reloads == 0, "read before r7")
        sync.refresh(seen: "r10.e1")
        #expect(reloads == 1, "r10 is later (compared as numbers, not text)")
        sync.refresh(seen: "r7.e1")
        sync.refresh(seen: "r9.e1")
        #expect(reloads == 1, "both read before r10")
        sync.refresh(seen: "r2.e2")
        #expect(reloads == 2, "another epoch: its numbers say nothing of e1's")
        sync.refresh(seen: "3:2026|app:1|0:0|0:0|1|0:")
        #expect(reloads == 3, "no revision to order")
        sync.refresh(seen: "r2.e2")
        #expect(reloads == 4)
        sync.refresh(seen: "r1.e2")
        #expect(reloads == 4)
        #expect(sync.refresh(force: true) != nil)
        #expect(reloads == 5, "forced")
    }

    /// A version stored and made live by another node while a reload reads is taken over
    /// whole or not at all: never live without being held (sessions created then would find no
    /// live version of the flow), whichever way the reload goes (with a mark: the changes since;
    /// without one: every stamp). Read apart, the parts split only on PostgreSQL with a mark,
    /// where the changes are read before the live versions; the other cases guard the order.
    @Test(arguments: [false, true]) func aVersionMadeLiveWhileAReloadReadsIsNeverLiveWithoutBeingHeld(_ marked: Bool) throws {
        let (database, base) = try Self.seeded(TestStoreKind.current)
        defer { try? base.close(); withExtendedLifetime(database) {} }
        let registry = try Self.loaded(base, marked: marked)
        let store = StallingStore(base: base)
        let text = try Self.text("home") + "\n"
        store.afterNextDefinitionsRead { [base] in _ = try base.addFlowVersion(name: "home", definition: text, activate: true) }
        #expect(try registry.reload(from: store).isEmpty)
        let live = registry.liveVersions
        #expect(live["home"].map { registry.flow("home", version: $0) != nil } == true, "live home \(live["home"].map(String.init) ?? "none"), held")
        #expect(registry.catalog(for: live) != nil, "sessions start on what is live")

        #expect(try registry.reload(from: store).isEmpty)
        #expect(registry.liveVersions["home"] == 2, "the next reload takes it over")
        #expect(registry.flow("home", version: 2)?.text == text)
    }

    /// Calls waiting for a fresh read of the fingerprint share the next one, and never one begun
    /// before they came: while a read is stalled, ten more calls wait; once it ends, the call
    /// that came before it runs after it, and the ten after one more read, all together.
    @Test func callsForAFreshReadShareTheNextAndNeverOneUnderWay() throws {
        let (database, base) = try Self.seeded(.sqlite)
        defer { try? base.close(); withExtendedLifetime(database) {} }
        let store = StallingStore(base: base)
        let sync = DefinitionSync(store: store, registry: try Self.loaded(base), known: try base.definitionsFingerprint(),
                                  logger: Logger(label: "test"), counters: ClusterCounters())
        let shared = SharedReads(thread: "test-reads") { sync.refresh() }  // as a node among several shares them
        let readsAt = Mutex<[String: Int]>([:])
        let ran = DispatchSemaphore(value: 0)
        let fingerprint = try base.definitionsFingerprint()
        func record(_ name: String) -> @Sendable (String?) -> Void {
            { [store] seen in
                #expect(seen == fingerprint, "each is given the fingerprint read for it")
                readsAt.withLock { $0[name] = store.fingerprintReads.load(ordering: .sequentiallyConsistent) }
                ran.signal()
            }
        }
        let before = store.fingerprintReads.load(ordering: .sequentiallyConsistent)
        store.stallFingerprint()
        shared.afterFreshRead(record("first"))
        #expect(store.fingerprintStalled.wait(timeout: .now() + 10) == .success)
        for index in 0..<10 { shared.afterFreshRead(record("late \(index)")) }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(readsAt.withLock { $0.isEmpty }, "nothing runs before its read ends")
        store.releaseFingerprint()
        for _ in 0..<11 { #expect(ran.wait(timeout: .now() + 10) == .success) }
        let reads = readsAt.withLock { $0 }
        #expect(reads["first"] == before + 1)
        #expect((0..<10).allSatisfy { reads["late \($0)"] == before + 2 }, "one more read, shared: \(reads)")
        #expect(store.fingerprintReads.load(ordering: .sequentiallyConsistent) == before + 2)
        withExtendedLifetime(shared) {}
    }
}

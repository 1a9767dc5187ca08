// An experiment's lifecycle change on SQLite and on PostgreSQL (each a named case): compare-and-set
// on the revision, the winner's flows made live and every entry audited, all in one transaction.
import FlowStore
import StoreTestSupport
import Testing

extension DefinitionStoreTests {
    static let stamp = AuditStamp(credential: "admin:0badc0de")

    static func stamp(_ action: String) -> AuditStamp { AuditStamp(credential: "admin:0badc0de", action: action) }

    /// A store with onboarding 1 (live) and 2, home 1 (live), and experiment `e` at revision 1.
    static func seeded(_ kind: TestStoreKind) throws -> (TestDatabase, any FlowStore) {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        try store.seedFlow(name: "onboarding", definition: "{}")
        try store.seedFlow(name: "home", definition: "{}")
        #expect(try store.addFlowVersion(name: "onboarding", definition: #"{"v":2}"#, activate: false) == 2)
        #expect(try store.putDefinition(.experiment, key: "e", definition: #"{"variants":[]}"#) == 1)
        return (database, store)
    }

    /// A conclusion stores the next revision, makes the winner's pinned versions live (a version
    /// already live, or one that does not exist, is left alone) and audits the conclusion, then
    /// each activation, in the same transaction; the definitions' fingerprint moves, so other
    /// nodes reload.
    @Test(arguments: TestStoreKind.allCases) func concludeActivatesTheWinnersPins(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { withExtendedLifetime(database) {} }
        let fingerprint = try store.definitionsFingerprint()
        let revision = try store.changeExperiment(
            key: "e", definition: #"{"status":"concluded"}"#, revision: 1,
            activating: ["onboarding": 2, "home": 1, "nowhere": 3], audit: Self.stamp(AuditAction.experimentConclude))
        #expect(revision == 2)
        #expect(try store.liveFlowVersions() == ["onboarding": 2, "home": 1])
        #expect(try store.flowActivations()["onboarding"] == [1, 2])
        #expect(try store.allDefinitions(.experiment).map(\.definition) == [#"{"status":"concluded"}"#])
        #expect(try store.allDefinitions(.experiment).map(\.revision) == [2])
        #expect(try AuditStoreTests.entries(store) == [
            "1 experiment.conclude e 1→2 admin:0badc0de",
            "2 flow.activate onboarding 1→2 admin:0badc0de",
        ])
        #expect(try store.definitionsFingerprint() != fingerprint)
    }

    /// A stale revision writes nothing: no definition, no activation, no audit entry.
    @Test(arguments: TestStoreKind.allCases) func staleRevisionChangesNothing(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { withExtendedLifetime(database) {} }
        #expect(try store.changeExperiment(key: "e", definition: #"{"status":"stopped"}"#, revision: 1, activating: [:],
                                           audit: Self.stamp(AuditAction.experimentStop)) == 2)
        #expect(try store.changeExperiment(key: "e", definition: #"{"status":"concluded"}"#, revision: 1,
                                           activating: ["onboarding": 2], audit: Self.stamp(AuditAction.experimentConclude)) == nil)
        #expect(try store.changeExperiment(key: "gone", definition: "{}", revision: 0, activating: [:], audit: Self.stamp) == nil)
        #expect(try store.liveFlowVersions()["onboarding"] == 1)
        #expect(try store.allDefinitions(.experiment).map(\.definition) == [#"{"status":"stopped"}"#])
        #expect(try AuditStoreTests.entries(store) == ["1 experiment.stop e 1→2 admin:0badc0de"])
    }

    /// Without an action the stamp records `experiment.put`; without a stamp nothing is audited.
    @Test(arguments: TestStoreKind.allCases) func auditActionDefaultsAndUnaudited(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.seeded(kind)
        defer { withExtendedLifetime(database) {} }
        #expect(try store.changeExperiment(key: "e", definition: #"{"coverage":0.5}"#, revision: 1, activating: [:], audit: Self.stamp) == 2)
        #expect(try store.changeExperiment(key: "e", definition: "{}", revision: 2, activating: ["onboarding": 2], audit: nil) == 3)
        #expect(try store.liveFlowVersions()["onboarding"] == 2)
        #expect(try AuditStoreTests.entries(store) == ["1 experiment.put e 1→2 admin:0badc0de"])
    }
}

// Releases on SQLite and on PostgreSQL (each a named case): made with their flow versions in one
// transaction, activated and rolled back whole, refused when their state or what is live says so.
import FlowStore
import Foundation
import StoreTestSupport
import Synchronization
import Testing

@Suite("Release store")
struct ReleaseStoreTests {
    static let stamp = AuditStamp(credential: "admin:0badc0de")
    static let other = AuditStamp(credential: "key:reviewer")

    static func draft(_ versions: [String: Int], base: [String: Int], flags: [String: String] = [:],
                      experiments: [String: String] = [:]) -> ReleaseRecord {
        ReleaseRecord(description: "checkout", state: .draft, document: "{}", versions: versions, flags: flags, experiments: experiments,
                      base: base, createdBy: stamp.credential, createdAt: Timestamp.string())
    }

    static func conflict(_ code: String, _ call: () throws -> Void) {
        do {
            try call()
            Issue.record("expected \(code)")
        } catch let error as ReleaseConflict {
            #expect(error.code == code)
        } catch {
            Issue.record("expected \(code), got \(error)")
        }
    }

    @Test(arguments: TestStoreKind.allCases) func activateAndRollBackWhole(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.seedFlow(name: "app", definition: #"{"v":1}"#)
        try store.seedDefinition(.flag, key: "old", definition: #"{"old":1}"#)
        let base = try store.liveFlowVersions()

        let made = try store.createRelease(Self.draft(["app": 2, "checkout": 1], base: base, flags: ["old": #"{"old":2}"#, "new": "{}"],
                                                      experiments: ["exp": #"{"e":1}"#]),
                                           texts: ["app": #"{"v":2}"#, "checkout": "{}"], audit: Self.stamp)
        #expect(made.id >= 1)
        #expect(try store.flowVersion(name: "checkout", version: 1)?.definition == "{}")
        #expect(try store.liveFlowVersions() == ["app": 1])
        // A version taken meanwhile: nothing of the second release is stored.
        Self.conflict("release-stale") {
            _ = try store.createRelease(Self.draft(["app": 2, "other": 1], base: base), texts: [:], audit: Self.stamp)
        }
        #expect(try store.flowVersion(name: "other", version: 1) == nil)
        #expect(try store.releases().map(\.id) == [made.id])

        Self.conflict("release-untested") { _ = try store.activateRelease(id: made.id, rules: .init(), audit: Self.stamp) }
        Self.conflict("self-approval") { _ = try store.approveRelease(id: made.id, audit: Self.stamp) }
        #expect(try store.approveRelease(id: made.id, audit: Self.other)?.approvedBy == "key:reviewer")
        let tested = try store.recordReleaseTests(id: made.id, tests: #"{"passed":1,"failed":0}"#, passed: true, base: base)
        #expect(tested?.state == .ready)

        let fingerprint = try store.definitionsFingerprint()
        let live = try #require(try store.activateRelease(id: made.id, rules: .init(requireApproval: true), audit: Self.stamp))
        #expect(live.state == .live)
        #expect(live.previous?.flows == ["app": 1, "checkout": nil])
        #expect(live.previous?.flags == ["old": #"{"old":1}"#, "new": nil])
        #expect(live.activatedBy == Self.stamp.credential)
        #expect(try store.liveFlowVersions() == ["app": 2, "checkout": 1])
        #expect(try store.allDefinitions(.experiment).map(\.definition) == [#"{"e":1}"#])
        let afterActivation = try store.definitionsFingerprint()
        #expect(afterActivation != fingerprint)
        Self.conflict("release-state") { _ = try store.activateRelease(id: made.id, rules: .init(), audit: Self.stamp) }
        Self.conflict("release-state") { _ = try store.recordReleaseTests(id: made.id, tests: "{}", passed: true, base: base) }

        let back = try #require(try store.rollbackRelease(id: made.id, reason: "broken", stopped: ["exp": #"{"e":1,"status":"stopped"}"#],
                                                          audit: Self.stamp))
        #expect(back.state == .rolledBack)
        #expect(back.reason == "broken")
        #expect(try store.liveFlowVersions() == ["app": 1])
        #expect(try store.allDefinitions(.flag).map(\.key) == ["old"])
        #expect(try store.allDefinitions(.flag).first?.definition == #"{"old":1}"#)
        #expect(try store.allDefinitions(.experiment).map(\.definition) == [#"{"e":1,"status":"stopped"}"#])
        #expect(try store.definitionsFingerprint() != afterActivation)
        let log = try store.auditLog(after: 0, limit: 100)
        #expect(log.last?.action == "release.rollback")
        #expect(log.last?.detail == "broken")
        #expect(log.contains { $0.action == "flow.activate" && $0.subject == "app" && $0.newVersion == 1 && $0.detail == "rollback of release \(made.id)" })
        Self.conflict("release-state") { _ = try store.rollbackRelease(id: made.id, reason: nil, stopped: [:], audit: Self.stamp) }
        #expect(try store.activateRelease(id: 999, rules: .init(), audit: Self.stamp) == nil)
        #expect(try store.release(id: 999) == nil)
    }

    @Test(arguments: TestStoreKind.allCases) func staleAndSupersededAreRefused(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.seedFlow(name: "app", definition: "{}")
        try store.seedFlow(name: "home", definition: "{}")
        let base = try store.liveFlowVersions()
        let release = try store.createRelease(Self.draft(["app": 2], base: base), texts: ["app": "{}"], audit: Self.stamp)
        _ = try store.recordReleaseTests(id: release.id, tests: "{}", passed: true, base: base)
        #expect(try store.addFlowVersion(name: "home", definition: "{}", activate: true) == 2)
        Self.conflict("release-stale") { _ = try store.activateRelease(id: release.id, rules: .init(), audit: Self.stamp) }
        #expect(try store.liveFlowVersions() == ["app": 1, "home": 2])
        _ = try store.recordReleaseTests(id: release.id, tests: "{}", passed: false, base: try store.liveFlowVersions())
        Self.conflict("tests-failed") { _ = try store.activateRelease(id: release.id, rules: .init(), audit: Self.stamp) }
        _ = try store.recordReleaseTests(id: release.id, tests: "{}", passed: true, base: try store.liveFlowVersions())
        Self.conflict("review-required") {
            _ = try store.activateRelease(id: release.id, rules: .init(requireApproval: true), audit: Self.stamp)
        }
        #expect(try store.activateRelease(id: release.id, rules: .init(), audit: Self.stamp)?.state == .live)
        #expect(try store.activateFlow(name: "app", version: 1))
        Self.conflict("release-superseded") {
            _ = try store.rollbackRelease(id: release.id, reason: nil, stopped: [:], audit: Self.stamp)
        }
        #expect(try store.release(id: release.id)?.state == .live)
    }

    /// Two releases made on the same live versions and activated at once through two stores
    /// (two nodes): one goes live, the other is refused as stale, never both; the other store's
    /// definitions fingerprint moves, so its node reloads.
    @Test(arguments: TestStoreKind.allCases) func concurrentActivationsThroughTwoStores(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let first = try database.migratedStore()
        let second = try database.migratedStore()
        try first.seedFlow(name: "app", definition: "{}")
        try first.seedFlow(name: "home", definition: "{}")
        let base = try first.liveFlowVersions()
        let a = try first.createRelease(Self.draft(["app": 2], base: base), texts: ["app": "{}"], audit: Self.stamp)
        let b = try second.createRelease(Self.draft(["home": 2], base: base), texts: ["home": "{}"], audit: Self.stamp)
        _ = try first.recordReleaseTests(id: a.id, tests: "{}", passed: true, base: base)
        _ = try second.recordReleaseTests(id: b.id, tests: "{}", passed: true, base: base)
        let seen = try second.definitionsFingerprint()

        let outcomes = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let (store, id) = index == 0 ? (first, a.id) : (second, b.id)
            do {
                _ = try store.activateRelease(id: id, rules: .init(), audit: Self.stamp)
                outcomes.withLock { $0.append("live") }
            } catch let conflict as ReleaseConflict {
                outcomes.withLock { $0.append(conflict.code) }
            } catch {
                outcomes.withLock { $0.append("\(error)") }
            }
        }
        #expect(outcomes.withLock { $0.sorted() } == ["live", "release-stale"])
        let live = try second.liveFlowVersions()
        #expect(live == ["app": 2, "home": 1] || live == ["app": 1, "home": 2])
        #expect(try second.definitionsFingerprint() != seen)
        #expect(try first.releases().filter { $0.state == .live }.count == 1)
    }
}

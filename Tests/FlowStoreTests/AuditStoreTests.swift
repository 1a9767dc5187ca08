// The audit log on SQLite and on PostgreSQL (each a named case): each admin change appends its
// entry in the same transaction, with the version or revision before and after; ids page in order.
import FlowStore
import Foundation
import StoreTestSupport
import Synchronization
import Testing

@Suite("Audit store")
struct AuditStoreTests {
    static let stamp = AuditStamp(credential: "admin:0badc0de")

    static func entries(_ store: any FlowStore) throws -> [String] {
        try store.auditLog(after: 0, limit: 1000).map {
            "\($0.id) \($0.action) \($0.subject) \($0.oldVersion.map(String.init) ?? "-")→\($0.newVersion.map(String.init) ?? "-") \($0.credential)"
        }
    }

    /// Flow versions: a PUT is `flow.put` from the latest version, an activation
    /// `flow.activate` from the live one; an unknown version and unaudited calls add nothing.
    @Test(arguments: TestStoreKind.allCases) func flowChanges(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.seedFlow(name: "onboarding", definition: "{}")
        #expect(try store.addFlowVersion(name: "onboarding", definition: "{\"v\":2}", activate: false, audit: Self.stamp).version == 2)
        #expect(try store.addFlowVersion(name: "onboarding", definition: "{\"v\":3}", activate: true, audit: Self.stamp).version == 3)
        #expect(try store.activateFlow(name: "onboarding", version: 1, audit: Self.stamp))
        #expect(try !store.activateFlow(name: "onboarding", version: 9, audit: Self.stamp))
        #expect(try store.addFlowVersion(name: "brand-new", definition: "{}", activate: true, audit: Self.stamp).version == 1)
        #expect(try store.addFlowVersion(name: "onboarding", definition: "{}", activate: true) == 4)
        #expect(try Self.entries(store) == [
            "1 flow.put onboarding 1→2 admin:0badc0de",
            "2 flow.put onboarding 2→3 admin:0badc0de",
            "3 flow.activate onboarding 1→3 admin:0badc0de",
            "4 flow.activate onboarding 3→1 admin:0badc0de",
            "5 flow.put brand-new -→1 admin:0badc0de",
            "6 flow.activate brand-new -→1 admin:0badc0de",
        ])
        let first = try #require(try store.auditLog(after: 0, limit: 1).first)
        #expect(!first.at.isEmpty)
    }

    /// Flags and experiments record their revisions; user resets and client keys their subject.
    @Test(arguments: TestStoreKind.allCases) func keyedChanges(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        #expect(try store.putDefinition(.flag, key: "f", definition: "{}", audit: Self.stamp) == 1)
        #expect(try store.putDefinition(.flag, key: "f", definition: "{}", audit: Self.stamp) == 2)
        #expect(try store.putDefinition(.experiment, key: "e", definition: "{}", audit: AuditStamp(credential: "admin:feedface")) == 1)
        try store.insert(SessionStoreTests.session("s-1", user: "ada"))
        #expect(try store.removeUserState(id: "ada", key: "onboarded", audit: AuditStamp(credential: "admin:0badc0de", action: "user.onboarding.reset")) != nil)
        #expect(try store.removeUserState(id: "nobody", key: "onboarded", audit: Self.stamp) == nil)
        let key = ClientKeyRecord(id: "ck_1", name: "ios", keyHash: Array(repeating: 7, count: 32), createdAt: Timestamp.string())
        try store.insertClientKey(key, audit: Self.stamp)
        #expect(try store.revokeClientKey(id: "ck_1", at: Timestamp.string(), audit: Self.stamp)?.revokedAt != nil)
        #expect(try store.revokeClientKey(id: "ck_1", at: Timestamp.string(), audit: Self.stamp) != nil)  // already revoked: no entry
        #expect(try store.revokeClientKey(id: "ck_none", at: Timestamp.string(), audit: Self.stamp) == nil)
        // PostgreSQL keeps a revision of each user's state (nodes compare it); SQLite has none.
        let reset = (kind == .postgresql) ? "0→1" : "-→-"
        #expect(try Self.entries(store) == [
            "1 flag.put f -→1 admin:0badc0de",
            "2 flag.put f 1→2 admin:0badc0de",
            "3 experiment.put e -→1 admin:feedface",
            "4 user.onboarding.reset ada \(reset) admin:0badc0de",
            "5 clientKey.create ck_1 -→- admin:0badc0de",
            "6 clientKey.revoke ck_1 -→- admin:0badc0de",
        ])
    }

    /// Pages by id: `after` the last id seen, `limit` at a time, oldest first.
    @Test(arguments: TestStoreKind.allCases) func pagesById(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        for _ in 0..<5 { _ = try store.putDefinition(.flag, key: "f", definition: "{}", audit: Self.stamp) }
        #expect(try store.auditLog(after: 0, limit: 2).map(\.id) == [1, 2])
        #expect(try store.auditLog(after: 2, limit: 2).map(\.id) == [3, 4])
        #expect(try store.auditLog(after: 4, limit: 2).map(\.newVersion) == [5])
        #expect(try store.auditLog(after: 5, limit: 2).isEmpty)
    }

    /// A change that fails writes no entry: the entry is in the change's transaction.
    @Test(arguments: TestStoreKind.allCases) func failedChangeLeavesNoEntry(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let key = ClientKeyRecord(id: "ck_1", name: "ios", keyHash: Array(repeating: 7, count: 32), createdAt: Timestamp.string())
        try store.insertClientKey(key, audit: Self.stamp)
        #expect(throws: (any Error).self) { try store.insertClientKey(key, audit: Self.stamp) }
        #expect(try Self.entries(store) == ["1 clientKey.create ck_1 -→- admin:0badc0de"])
    }

    /// Two stores on one database (two nodes) appending at once: every change has its entry,
    /// ids 1…n with no gap or duplicate.
    @Test(arguments: TestStoreKind.allCases) func concurrentWritersGetOrderedIds(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let first = try database.migratedStore()
        let second = (kind == .postgresql) ? try database.migratedStore() : first
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            let store = index % 2 == 0 ? first : second
            do {
                _ = try store.putDefinition(.flag, key: "f\(index % 4)", definition: "{}", audit: Self.stamp)
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        let log = try first.auditLog(after: 0, limit: 100)
        #expect(log.map(\.id) == Array(1...40))
        for key in 0..<4 {
            #expect(log.filter { $0.subject == "f\(key)" }.compactMap(\.newVersion) == Array(1...10))
        }
    }
}

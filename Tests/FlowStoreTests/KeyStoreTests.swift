// Client keys, admin keys and the kept bootstrap admin token on SQLite and on PostgreSQL (each a
// named case): names unique among live admin keys, revocation, audit entries, and one kept token
// however many processes start at once.
import FlowStore
import Foundation
import StoreTestSupport
import Testing

@Suite("Key store")
struct KeyStoreTests {
    static let stamp = AuditStamp(credential: "admin")

    static func key(_ id: String, _ name: String, role: String = "edit", hash: UInt8) -> AdminKeyRecord {
        AdminKeyRecord(id: id, name: name, role: role, keyHash: Array(repeating: hash, count: 32), createdAt: Timestamp.string(),
                       createdBy: "admin")
    }

    /// A key is stored and found by its hash while live; a second live key of the same name is
    /// refused (nothing stored, nothing audited); once revoked it opens nothing and frees its name.
    @Test(arguments: TestStoreKind.allCases) func keysAreUniqueAmongLiveAndRevocable(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        #expect(try store.insertAdminKey(Self.key("ak_1", "ci-deploy", role: "publish", hash: 1), audit: Self.stamp))
        #expect(try !store.insertAdminKey(Self.key("ak_2", "ci-deploy", hash: 2), audit: Self.stamp))
        let found = try #require(try store.liveAdminKey(hash: Array(repeating: 1, count: 32)))
        #expect(found.id == "ak_1" && found.name == "ci-deploy" && found.role == "publish" && found.createdBy == "admin")
        #expect(found.keyHash == Array(repeating: 1, count: 32) && found.revokedAt == nil && !found.createdAt.isEmpty)
        #expect(try store.liveAdminKey(hash: Array(repeating: 2, count: 32)) == nil)
        #expect(try store.adminKeys().map(\.id) == ["ak_1"])

        let revoked = try #require(try store.revokeAdminKey(id: "ak_1", at: "2026-11-25T00:00:00.000Z", audit: AuditStamp(credential: "key:ops")))
        #expect(revoked.revokedAt == "2026-11-25T00:00:00.000Z")
        #expect(try store.liveAdminKey(hash: Array(repeating: 1, count: 32)) == nil)
        // Revoked again: keeps its time, no second entry. Unknown: nil.
        #expect(try store.revokeAdminKey(id: "ak_1", at: "2026-11-26T00:00:00.000Z", audit: Self.stamp)?.revokedAt == "2026-11-25T00:00:00.000Z")
        #expect(try store.revokeAdminKey(id: "ak_none", at: Timestamp.string(), audit: Self.stamp) == nil)
        // The name is free again.
        #expect(try store.insertAdminKey(Self.key("ak_3", "ci-deploy", role: "read", hash: 3), audit: Self.stamp))
        #expect(try store.liveAdminKey(hash: Array(repeating: 3, count: 32))?.role == "read")
        #expect(try store.adminKeys().map(\.id).sorted() == ["ak_1", "ak_3"])
        #expect(try store.auditLog(after: 0, limit: 100).map { "\($0.action) \($0.subject) \($0.credential)" } == [
            "adminKey.create ak_1 admin",
            "adminKey.revoke ak_1 key:ops",
            "adminKey.create ak_3 admin",
        ])
    }

    /// A client key is stored and found by its hash while live (names may repeat: two apps may
    /// share one); once revoked it opens nothing and keeps its first revocation's time; making
    /// and revoking it are audited only when stamped, and a repeated revocation is not.
    @Test(arguments: TestStoreKind.allCases) func clientKeysLiveUntilRevoked(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let hash = { (byte: UInt8) in Array(repeating: byte, count: 32) }
        try store.insertClientKey(ClientKeyRecord(id: "ck_1", name: "ios", keyHash: hash(1), createdAt: "2026-11-24T00:00:00.000Z"),
                                  audit: Self.stamp)
        try store.insertClientKey(ClientKeyRecord(id: "ck_2", name: "ios", keyHash: hash(2), createdAt: "2026-11-24T00:00:01.000Z"))
        let found = try #require(try store.liveClientKey(hash: hash(1)))
        #expect(found == ClientKeyRecord(id: "ck_1", name: "ios", keyHash: hash(1), createdAt: "2026-11-24T00:00:00.000Z"))
        #expect(try store.liveClientKey(hash: hash(3)) == nil)
        #expect(try store.clientKeys().map(\.id) == ["ck_1", "ck_2"])

        let revoked = try #require(try store.revokeClientKey(id: "ck_1", at: "2026-11-25T00:00:00.000Z", audit: AuditStamp(credential: "key:ops")))
        #expect(revoked.revokedAt == "2026-11-25T00:00:00.000Z" && revoked.keyHash == hash(1))
        #expect(try store.liveClientKey(hash: hash(1)) == nil)
        #expect(try store.revokeClientKey(id: "ck_1", at: "2026-11-26T00:00:00.000Z", audit: Self.stamp)?.revokedAt
                    == "2026-11-25T00:00:00.000Z")
        #expect(try store.revokeClientKey(id: "ck_none", at: Timestamp.string()) == nil)
        #expect(try store.revokeClientKey(id: "ck_2", at: "2026-11-27T00:00:00.000Z")?.revokedAt == "2026-11-27T00:00:00.000Z")
        #expect(try store.clientKeys().map(\.revokedAt) == ["2026-11-25T00:00:00.000Z", "2026-11-27T00:00:00.000Z"])
        #expect(try store.auditLog(after: 0, limit: 100).map { "\($0.action) \($0.subject) \($0.credential)" } == [
            "clientKey.create ck_1 admin",
            "clientKey.revoke ck_1 key:ops",
        ])
        // Client keys and admin keys are two tables: a client key's hash opens no admin key.
        #expect(try store.liveAdminKey(hash: hash(2)) == nil)
    }

    /// The bootstrap token's hash: none at first; the first one kept stays (a second start, or a
    /// node that lost the race, gets it back); a reset replaces it and is audited.
    @Test(arguments: TestStoreKind.allCases) func bootstrapTokenIsKeptOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let first = Array(repeating: UInt8(0xA1), count: 32), second = Array(repeating: UInt8(0xB2), count: 32)
        #expect(try store.adminTokenHash() == nil)
        #expect(try store.keepAdminTokenHash(first, at: Timestamp.string(), replace: false, audit: nil) == first)
        #expect(try store.keepAdminTokenHash(second, at: Timestamp.string(), replace: false, audit: nil) == first)
        #expect(try store.adminTokenHash() == first)
        try store.close()
        let reopened = try database.migratedStore()
        #expect(try reopened.adminTokenHash() == first)
        #expect(try reopened.keepAdminTokenHash(second, at: Timestamp.string(), replace: true, audit: AuditStamp(credential: "cli")) == second)
        #expect(try reopened.adminTokenHash() == second)
        #expect(try reopened.auditLog(after: 0, limit: 10).map { "\($0.action) \($0.subject) \($0.credential)" } == ["adminToken.reset admin cli"])
    }

    /// Processes starting together on one new database (nodes on PostgreSQL): each tries to keep
    /// its own token, exactly one wins, and every one of them is told the winner's.
    @Test(arguments: TestStoreKind.allCases) func concurrentStartsKeepOneToken(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let stores = try (0..<4).map { _ in try database.migratedStore() }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            let mine = Array(repeating: UInt8(index + 1), count: 32)
            let kept = (try? stores[index].keepAdminTokenHash(mine, at: Timestamp.string(), replace: false, audit: nil)) ?? []
            results.add(mine: mine, kept: kept)
        }
        let all = results.all
        #expect(all.count == 4)
        #expect(Set(all.map(\.kept)).count == 1)
        #expect(all.filter { $0.mine == $0.kept }.count == 1)
        #expect(try stores[0].adminTokenHash() == all[0].kept)
        for store in stores { try store.close() }
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [(mine: [UInt8], kept: [UInt8])] = []
        func add(mine: [UInt8], kept: [UInt8]) { lock.lock(); items.append((mine, kept)); lock.unlock() }
        var all: [(mine: [UInt8], kept: [UInt8])] { lock.lock(); defer { lock.unlock() }; return items }
    }
}

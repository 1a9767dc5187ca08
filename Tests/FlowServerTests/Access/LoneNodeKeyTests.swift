// A lone node on PostgreSQL (`--single-node`) checks client keys at the definitions' revision,
// as a node among several does: flag evaluations' and new sessions'.
import Foundation
@testable import FlowServer
import FlowStore
import HTTPTestClient
@testable import PostgresStore
import StoreTestSupport
import Synchronization
import Testing

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "a lone node on a PostgreSQL database"))
struct LoneNodeKeyTests {
    /// One node given `singleNode` on a fresh database, through a store that counts and stalls.
    struct LoneNode {
        let database: TestDatabase
        let base: any FlowStore
        let store: StallingStore
        let app: Application

        init() throws {
            database = try TestDatabase()
            base = try database.migratedStore()
            store = StallingStore(base: base)
            app = try Application(store: store, adminToken: TestApp.adminToken, singleNode: true)
        }

        /// Revokes client key `id` behind the node's back, as an operator's SQL would.
        func revokeBySQL(_ id: String) throws {
            let postgres = try #require(base as? PostgresStore)
            _ = try postgres.write([PGStatement("UPDATE client_keys SET revoked_at = 'now' WHERE id = '\(id)'")])
        }

        func close() {
            store.releaseFingerprint()
            try? store.close()
        }
    }

    /// A lone node trusts the definitions it holds, but not the client keys: the evaluations that
    /// come while a read of the revision is under way share the next read, a key is looked up
    /// once while the revision stays, and a key revoked by SQL (an operator, another tool on the
    /// database) is refused by the next evaluation, OFREP's and the GrowthBook payload's.
    @Test func evaluationsCheckTheirKeyAtTheRevisionReadForThem() throws {
        let node = try LoneNode()
        defer { node.close() }
        let (store, app) = (node.store, node.app)
        let (id, key) = try OFREPTests.clientKey(DirectSender(app.handle))
        let evaluate = { @Sendable in
            try DirectSender(app.handle).send("POST", OFREPTests.single + "eu-face-scan", body: OFREPTests.body(#"{"targetingKey":"ada"}"#),
                                              headers: [("Authorization", "Bearer \(key)")])
        }
        func counts() -> (reads: Int, lookups: Int) {
            (store.fingerprintReads.load(ordering: .sequentiallyConsistent), store.keyLookups.load(ordering: .sequentiallyConsistent))
        }
        #expect(try evaluate().status == 200)
        let warm = counts()
        for _ in 0..<5 { #expect(try evaluate().status == 200) }
        #expect(counts().reads == warm.reads + 5, "one read of the revision each")
        #expect(counts().lookups == warm.lookups, "the key kept while the revision stays")

        // Evaluations that come while a read is stalled wait for the next one, and share it.
        store.stallFingerprint()
        let statuses = Mutex<[Int]>([])
        let answered = DispatchSemaphore(value: 0)
        let send = { @Sendable in
            let status = (try? evaluate().status) ?? -1
            statuses.withLock { $0.append(status) }
            answered.signal()
        }
        let stalled = counts()
        Thread.detachNewThread(send)
        #expect(store.fingerprintStalled.wait(timeout: .now() + 10) == .success, "the evaluation read no revision")
        for _ in 0..<10 { Thread.detachNewThread(send) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(statuses.withLock { $0.isEmpty }, "none answered before its read")
        store.releaseFingerprint()
        for _ in 0..<11 { #expect(answered.wait(timeout: .now() + 10) == .success) }
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 11))
        #expect(counts().reads - stalled.reads <= 3, "11 evaluations, \(counts().reads - stalled.reads) reads of the revision")
        #expect(counts().lookups == stalled.lookups)

        // Revoked by SQL, behind the node's back: the revision moved, so the key is looked up again.
        try node.revokeBySQL(id)
        #expect(try evaluate().status == 401, "revoked by SQL: refused at once")
        #expect(try DirectSender(app.handle).send("GET", "/api/features/\(key)").status == 401)
    }

    /// A new session's client key, on a lone node: a user the node does not hold is read with
    /// the revision, and the key checked at it, so a kept key costs no look-up; a user it holds
    /// is not read, and the key is looked up. A key revoked by SQL is refused by the next creation.
    @Test func aNewSessionsKeyIsCheckedAtTheRevisionReadWithItsUser() throws {
        let node = try LoneNode()
        defer { node.close() }
        let (store, app) = (node.store, node.app)
        let (id, key) = try OFREPTests.clientKey(DirectSender(app.handle))
        func create(_ user: String) throws -> Int {
            try DirectSender(app.handle).send("POST", "/v1/sessions", body: #"{"userId":"\#(user)"}"#, headers: [("X-API-Key", key)]).status
        }
        func lookups() -> Int { store.keyLookups.load(ordering: .sequentiallyConsistent) }
        #expect(try create("first") == 201)
        let warm = lookups()
        for index in 0..<10 { #expect(try create("new-\(index)") == 201) }
        #expect(lookups() == warm, "new users read with the revision: the key kept")
        #expect(try create("new-0") == 201, "a user the node holds")
        #expect(lookups() == warm + 1, "looked up, the user not read")

        try node.revokeBySQL(id)
        #expect(try create("after-revocation") == 401, "revoked by SQL: refused at once")
        #expect(try create("new-1") == 401, "a user the node holds, too")
    }
}

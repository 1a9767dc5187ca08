// PostgreSQL only: nodes starting together, a database that stops answering, an unreachable
// server. These run on the throwaway PostgreSQL whatever FLOWSTACK_TEST_DB_KIND says, and are
// skipped only when its binaries are absent.
import FlowStore
import Foundation
@testable import PostgresStore
import StoreTestSupport
import Synchronization
import Testing

@Suite("PostgreSQL store")
struct PostgresStoreTests {
    /// Nodes starting together on an empty database migrate it once: the advisory lock makes
    /// the others wait, and they then find nothing left to apply.
    @Test(arguments: [TestStoreKind.postgresql]) func concurrentStartsMigrateOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let stores = try (0..<4).map { _ in try database.open() }
        let applied = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            do {
                let done = try stores[index].migrate()
                applied.withLock { $0.append(done.count) }
            } catch {
                Issue.record("node \(index) failed to migrate: \(error)")
            }
        }
        let bundled = Migration.bundled(.postgresql)
        #expect(applied.withLock { $0.sorted() } == [0, 0, 0, bundled.count])
        #expect(try stores[0].schemaVersion() == (bundled.last?.version ?? 0))
    }

    /// A connection that stops answering (its backend frozen) is reported within the request
    /// deadline, never later, and dropped; the requests after it fail at once until the pool's
    /// probe has connected again, by itself, within moments.
    @Test(arguments: [TestStoreKind.postgresql]) func unansweringDatabaseFailsFastAndRecovers(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try #require(try database.migratedStore() as? PostgresStore)
        let rows = try store.read([PGStatement("SELECT pg_backend_pid()")])
        let backend = try #require(try rows[0].integer(0, 0))
        // Only this store's one pooled connection is frozen; new connections would still work,
        // so the first failure is what must mark the pool down.
        kill(pid_t(backend), SIGSTOP)
        defer { kill(pid_t(backend), SIGCONT) }
        let start = ContinuousClock.now
        #expect(store.healthCheck() == nil)
        let waited = start.duration(to: .now)
        #expect(waited >= .milliseconds(1_000) && waited < .milliseconds(5_000), "waited \(waited)")
        // Down now: requests fail at once, without a wait of their own, until the pool's probe
        // connects again (it can: only that one backend is frozen).
        let refused = ContinuousClock.now
        _ = store.healthCheck()
        #expect(refused.duration(to: .now) < .milliseconds(900), "at once, not after a second's wait of its own")
        var recovered = false
        for _ in 0..<400 where !recovered {  // up to 20 s
            Thread.sleep(forTimeInterval: 0.05)
            recovered = store.healthCheck() == (Migration.bundled(.postgresql).last?.version ?? 0)
        }
        #expect(recovered)
        #expect(try store.sessionCount() == 0)
    }

    /// A commit judged with a user state another node has since changed writes nothing: the
    /// user's revision must still be the one the action saw; a patch raises it by one.
    @Test(arguments: [TestStoreKind.postgresql]) func commitRequiresTheUserRevisionItWasJudgedWith(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(SessionStoreTests.session("judged"))
        #expect(try store.user(id: "u-1")?.revision == 0)
        var patched = SessionStoreTests.commit("judged", version: 1, patch: "{\"onboarded\":true}")
        patched.userRevision = 0
        try store.commit(patched)
        #expect(try store.user(id: "u-1")?.revision == 1)
        var stale = SessionStoreTests.commit("judged", version: 2)
        stale.userRevision = 0
        #expect(throws: CommitError.versionConflict(stored: 2)) { try store.commit(stale) }
        stale.userRevision = 1
        try store.commit(stale)
        #expect(try store.removeUserState(id: "u-1", key: "onboarded")?.revision == 2)
        #expect(try store.actions(sessionId: "judged", after: 0, limit: 10).map(\.version) == [1, 2])
    }

    /// The definitions' fingerprint, read at every session's creation and every poll, is
    /// planned once per connection: unprepared, PostgreSQL planned its six subqueries at each
    /// read (about a millisecond, which halved creations on a shared database). It still moves
    /// with a change, read through the statement prepared before it.
    @Test(arguments: [TestStoreKind.postgresql]) func theDefinitionsFingerprintIsPlannedOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try #require(try database.migratedStore() as? PostgresStore)
        let before = try store.definitionsFingerprint()
        #expect(try store.definitionsFingerprint() == before)
        // One thread, one pooled connection: the statements it prepared are its own.
        let prepared = try store.read([PGStatement("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%FROM flow_activations%'")])
        #expect(try prepared[0].integer(0, 0) == 1, "the fingerprint is prepared on the connection that read it")
        try store.seedDefinition(.flag, key: "planned-once", definition: "{}")
        #expect(try store.definitionsFingerprint() != before)
    }

    /// A server that does not exist is a clear error at start, fast, without the password.
    @Test func unreachableServerIsAClearError() throws {
        let port = try TestPostgresServer.freePort()
        let start = ContinuousClock.now
        do {
            _ = try PostgresStore(uri: "postgresql://flow:s3cret@127.0.0.1:\(port)/flowstack")
            Issue.record("connected to a port where nothing listens")
        } catch let error as StoreError {
            #expect(error.description.contains("127.0.0.1:\(port)"))
            #expect(!error.description.contains("s3cret"))
            #expect(error.description.contains("flow:***@"))
        }
        #expect(start.duration(to: .now) < .seconds(2))
    }
}

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
    /// planned once per connection: unprepared, PostgreSQL planned it at each read (about a
    /// millisecond, which halved creations on a shared database).
    @Test(arguments: [TestStoreKind.postgresql]) func theDefinitionsFingerprintIsPlannedOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try #require(try database.migratedStore() as? PostgresStore)
        let before = try store.definitionsFingerprint()
        #expect(try store.definitionsFingerprint() == before)
        // One thread, one pooled connection: the statements it prepared are its own.
        let prepared = try store.read([PGStatement("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%FROM definitions_revision%'")])
        #expect(try prepared[0].integer(0, 0) == 1, "the fingerprint is prepared on the connection that read it")
    }

    /// A new session on a shared database reads its user and the definitions' fingerprint in one
    /// round trip, and gets what the two reads alone return.
    @Test(arguments: [TestStoreKind.postgresql]) func aUserIsReadWithTheDefinitionsFingerprintInOneRoundTrip(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try #require(try database.migratedStore() as? PostgresStore)
        try store.insert(SessionStoreTests.session("with-user"))
        let fingerprint = try store.definitionsFingerprint()
        let trips = store.counters.roundTrips.load(ordering: .relaxed)
        let (user, seen) = try store.userAndDefinitionsFingerprint(id: "u-1")
        #expect(store.counters.roundTrips.load(ordering: .relaxed) == trips + 1)
        #expect(user == (try store.user(id: "u-1")) && user != nil)
        #expect(seen == fingerprint)
        let (nobody, again) = try store.userAndDefinitionsFingerprint(id: "nobody")
        #expect(nobody == nil && again == fingerprint)
    }

    /// The fingerprint is the definitions' revision (one row, migration 17), which every change
    /// to the six tables raises in its own transaction, made through the store or by hand, and
    /// a statement that changes nothing does not. Without the row it is counted over the tables,
    /// and still moves.
    @Test(arguments: [TestStoreKind.postgresql]) func everyChangeToTheDefinitionsRaisesTheRevision(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try #require(try database.migratedStore() as? PostgresStore)
        let audit = AuditStamp(credential: "test")
        var seen = [try store.definitionsFingerprint()]
        #expect(seen[0].hasPrefix("r"), "read from the revision's row: \(seen[0])")
        func moved(_ what: String, _ change: () throws -> Void) throws {
            try change()
            let now = try store.definitionsFingerprint()
            #expect(!seen.contains(now), "\(what) did not move the fingerprint")
            seen.append(now)
        }
        func still(_ what: String, _ change: () throws -> Void) throws {
            let before = try store.definitionsFingerprint()
            try change()
            #expect(try store.definitionsFingerprint() == before, "\(what) moved the fingerprint")
        }
        try moved("a flow version stored") { _ = try store.addFlowVersion(name: "shop", definition: "{}", activate: false, audit: audit) }
        try moved("a flow version stored and made live") { _ = try store.addFlowVersion(name: "shop", definition: "{}", activate: true, audit: nil) }
        try moved("a version made live") {
            let made = try store.activateFlow(name: "shop", version: 1, audit: audit)
            #expect(made)
        }
        try moved("a flag put") { _ = try store.putDefinition(.flag, key: "f", definition: "{}", audit: audit) }
        try moved("an experiment put") { _ = try store.putDefinition(.experiment, key: "e", definition: "{}", audit: nil) }
        try moved("an experiment changed") {
            let revision = try store.changeExperiment(key: "e", definition: "{}", revision: 1, activating: [:], audit: audit)
            #expect(revision == 2)
        }
        try still("a compare-and-set that lost") {
            let revision = try store.changeExperiment(key: "e", definition: "{}", revision: 1, activating: [:], audit: audit)
            #expect(revision == nil)
        }
        try still("a seed that finds its flag") { try store.seedDefinition(.flag, key: "f", definition: "{}") }
        try still("an activation of a version that does not exist") {
            let made = try store.activateFlow(name: "shop", version: 99, audit: nil)
            #expect(!made)
        }
        for (table, sql) in [("flow_versions", "UPDATE flow_versions SET created_at = created_at WHERE name = 'shop' AND version = 1"),
                             ("live_flows", "UPDATE live_flows SET activated_at = activated_at WHERE name = 'shop'"),
                             ("flow_activations", "DELETE FROM flow_activations WHERE name = 'shop' AND version = 2"),
                             ("flags", "DELETE FROM flags WHERE key = 'f'"),
                             ("experiments", "UPDATE experiments SET updated_at = updated_at"),
                             ("releases", "INSERT INTO releases (description, state, document, versions, flags, experiments, base, created_by, created_at) VALUES ('', 'draft', '{}', '{}', '{}', '{}', '{}', 'test', 'now')"),
                             ("releases, emptied", "TRUNCATE releases"),
                             ("client_keys", "INSERT INTO client_keys (id, name, key_hash, created_at) VALUES ('ck_t', 't', '\\x00', 'now')"),
                             ("client_keys, revoked", "UPDATE client_keys SET revoked_at = 'now' WHERE id = 'ck_t'")] {
            try moved("an operator's change to \(table)") { _ = try store.write([PGStatement(sql)]) }
        }
        // From a session whose search_path does not reach the tables (an operator's psql): the
        // trigger still finds its row.
        let schema = try #require(try store.read([PGStatement("SELECT current_schema()")])[0].string(0, 0))
        try moved("a change made under another search_path") {
            _ = try store.write([PGStatement("BEGIN"), PGStatement("SET LOCAL search_path TO pg_catalog"),
                                 PGStatement("UPDATE \"\(schema)\".experiments SET updated_at = updated_at"), PGStatement("COMMIT")])
        }
        _ = try store.write([PGStatement("DELETE FROM definitions_revision")])
        let counted = try store.definitionsFingerprint()
        #expect(!counted.hasPrefix("r") && !counted.isEmpty, "counted over the tables: \(counted)")
        try moved("a flag put, without the revision's row") { _ = try store.putDefinition(.flag, key: "g", definition: "{}", audit: audit) }
    }

    /// Nodes changing the definitions at once, each through its own store (flow versions stored
    /// and made live, activations, a flag, an experiment), all succeed: the revision's row, which
    /// each of those writes now takes, makes none of them wait for another in a cycle (PostgreSQL
    /// would abort one as a deadlock after a second; a trigger that also took the audit log's
    /// lock did, here). Each change raises it.
    @Test(arguments: [TestStoreKind.postgresql]) func definitionWritesFromManyNodesDoNotDeadlock(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let first = try #require(try database.migratedStore() as? PostgresStore)
        let nodes = [first] + (try (0..<3).map { _ in try #require(try database.open() as? PostgresStore) })
        let start = try first.definitionsFingerprint()
        let failures = Mutex<[String]>([])
        let rounds = 40
        // Every node writes the same rows (the flow's live row, one flag), audited and not (an
        // audited write takes the audit log's lock first; seeds and imports write without it).
        DispatchQueue.concurrentPerform(iterations: nodes.count) { index in
            let store = nodes[index]
            for round in 0..<rounds {
                let audit = (index + round) % 2 == 0 ? AuditStamp(credential: "node\(index)") : nil
                do {
                    switch round % 4 {
                    case 0: _ = try store.addFlowVersion(name: "shared", definition: "{}", activate: true, audit: audit)
                    case 1: _ = try store.activateFlow(name: "shared", version: 1, audit: audit)
                    case 2: _ = try store.putDefinition(.flag, key: "shared-flag", definition: "{}", audit: audit)
                    default: _ = try store.putDefinition(.experiment, key: "shared-experiment", definition: "{}", audit: audit)
                    }
                } catch {
                    failures.withLock { $0.append("node \(index), round \(round): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let revision = try first.read([PGStatement("SELECT revision FROM definitions_revision")])[0].integer(0, 0)
        // Each write raises it at least once (a version stored and made live: three rows).
        #expect((revision ?? 0) >= 1 + nodes.count * rounds, "revision \(revision ?? -1)")
        #expect(try first.definitionsFingerprint() != start)
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

// One session ended by an admin on SQLite and on PostgreSQL (each a named case): that session's
// rows go, counted and audited in the same transaction; its user, the user's other sessions and the
// experiment records stay; a later commit of it writes nothing.
import FlowStore
import Foundation
import StoreTestSupport
import Testing

extension SessionStoreTests {
    static let stamp = AuditStamp(credential: "admin")

    /// Rows of `table` whose `session_id` is `id`.
    static func count(_ store: any FlowStore, _ table: String, session id: String) throws -> Int {
        Int(try UserDataStoreTests.rows(store, "SELECT COUNT(*) FROM \(table) WHERE session_id = $1", [id]).first?.first.flatMap { $0 } ?? "") ?? -1
    }

    /// Ending `u-1-live` (two log entries, an Idempotency-Key, a stream ticket) removes exactly
    /// those rows and the session's, says whose it was and at which version, and appends one
    /// `session.end` naming the session with the counts; the user's row and state, their other
    /// session, the session's experiment, funnel and rollout rows, and another user's rows stay.
    /// Ending it again, or an unknown id, is nil and audits nothing.
    @Test(arguments: TestStoreKind.allCases) func endingRemovesThatSessionOnly(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let sessions = try UserDataStoreTests.populate(store, user: "u-1")
        let others = try UserDataStoreTests.populate(store, user: "u-2")
        let kept = try UserDataStoreTests.footprint(store, user: "u-2", sessions: others)
        let kinds = ["exposures", "session_features", "rollout_sessions"]
        let records = try kinds.map { try Self.count(store, $0, session: "u-1-live") }
        let auditBefore = try store.auditLog(after: 0, limit: 100).count
        let user = try #require(try store.user(id: "u-1"))

        let ended = try #require(try store.endSession(id: "u-1-live", audit: Self.stamp))

        var expected = SessionEnding(sessionId: "u-1-live", userId: "u-1", version: 2)
        expected.actions = 2
        expected.idempotencyKeys = 1
        expected.streamTickets = 1
        #expect(ended == expected)
        #expect(try store.session(id: "u-1-live") == nil)
        for table in ["actions", "idempotency_keys", "stream_tickets"] {
            #expect(try Self.count(store, table, session: "u-1-live") == 0, "\(table)")
        }
        #expect(try kinds.map { try Self.count(store, $0, session: "u-1-live") } == records, "reports keep counting it")
        #expect(try store.user(id: "u-1") == user)
        #expect(try store.session(id: sessions[1]) != nil, "the user's other session")
        #expect(try UserDataStoreTests.footprint(store, user: "u-2", sessions: others) == kept)

        let log = try store.auditLog(after: 0, limit: 100)
        #expect(log.count == auditBefore + 1)
        let entry = try #require(log.last)
        #expect(entry.action == AuditAction.sessionEnd)
        #expect(entry.subject == "u-1-live")
        #expect(entry.oldVersion == 2 && entry.newVersion == nil)
        #expect(entry.credential == "admin")
        #expect(entry.detail == #"{"sessions":1,"actions":2,"idempotencyKeys":1,"streamTickets":1}"#)

        #expect(try store.endSession(id: "u-1-live", audit: Self.stamp) == nil)
        #expect(try store.endSession(id: "nobody", audit: Self.stamp) == nil)
        #expect(try store.auditLog(after: 0, limit: 100).count == auditBefore + 1)
    }

    /// A commit of an ended session fails as `sessionNotFound` and writes nothing: no log entry,
    /// no Idempotency-Key answer, and its user-state change is not applied.
    @Test(arguments: TestStoreKind.allCases) func commitAfterTheEndWritesNothing(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        _ = try UserDataStoreTests.populate(store, user: "u-1")
        let state = try store.user(id: "u-1")?.state
        _ = try store.endSession(id: "u-1-live", audit: Self.stamp)
        let commit = SessionStoreTests.commit("u-1-live", version: 3, user: "u-1", patch: #"{"late":true}"#, key: "k-2")
        #expect(throws: CommitError.sessionNotFound) { try store.commit(commit) }
        #expect(try store.actions(sessionId: "u-1-live", after: 0, limit: 10).isEmpty)
        #expect(try store.idempotentAnswer(sessionId: "u-1-live", key: "k-2") == nil)
        #expect(try store.user(id: "u-1")?.state == state)
    }
}

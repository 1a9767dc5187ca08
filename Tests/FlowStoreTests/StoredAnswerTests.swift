// A keyed action's stored answer, read in one statement stepped directly: what was stored
// comes back byte for byte, and a damaged row is an error that shows none of its values.
import FlowStore
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Stored answers (SQLite)")
struct StoredAnswerTests {
    static func store() throws -> (TestDatabase, SQLiteStore) {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        try store.insert(SessionStoreTests.session("s-1"))
        return (database, store)
    }

    /// Bodies of every size (none, one byte, a state document's, with NUL bytes) and hashes
    /// come back as stored; another session's or another key's answer is not found.
    @Test func answersReadBackAsStored() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        let bodies: [[UInt8]] = [[], [0], Array(repeating: 0x7B, count: 3_000) + [0, 255, 0], Array("{\"ok\":true}".utf8)]
        for (index, body) in bodies.enumerated() {
            var commit = SessionStoreTests.commit("s-1", version: index + 1)
            commit.idempotency = ("k\(index)", IdempotentAnswer(requestHash: Array(repeating: UInt8(index), count: 32), status: 200 + index,
                                                                version: index + 1, body: body))
            try store.commit(commit)
        }
        for (index, body) in bodies.enumerated() {
            let answer = try store.idempotentAnswer(sessionId: "s-1", key: "k\(index)")
            #expect(answer == IdempotentAnswer(requestHash: Array(repeating: UInt8(index), count: 32), status: 200 + index,
                                               version: index + 1, body: body))
        }
        #expect(try store.idempotentAnswer(sessionId: "s-2", key: "k0") == nil)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "K0") == nil)
    }

    /// A status that is not an integer (a file written by hand) is an undecodable row naming
    /// the table, not a zero status and not the row's values; the store keeps serving.
    @Test func aDamagedRowIsAnErrorWithoutItsValues() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.pool.write { db in
            try db.execute(sql: """
                INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
                VALUES ('s-1', 'damaged', x'00', 'secret-text', 1, x'7B7D', '2026-11-30T00:00:00.000Z')
                """)
        }
        do {
            _ = try store.idempotentAnswer(sessionId: "s-1", key: "damaged")
            Issue.record("a damaged row was read as an answer")
        } catch let error as StoreError {
            guard case .undecodableRow(_, let detail) = error else { Issue.record("\(error)"); return }
            #expect(detail.contains("idempotency_keys"))
            #expect(!String(describing: error).contains("secret-text"))
        }
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "other") == nil)
    }

    /// A session's keys, as many as the limit; nil past it (each key is then looked up).
    @Test func usedKeysUpToTheLimit() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.insert(SessionStoreTests.session("s-2"))
        #expect(try store.usedKeys(sessionId: "s-1", limit: 3) == [])
        for version in 1...3 { try store.commit(SessionStoreTests.commit("s-1", version: version, key: "k\(version)")) }
        try store.commit(SessionStoreTests.commit("s-2", version: 1, key: "other"))
        #expect(try store.usedKeys(sessionId: "s-1", limit: 3).map(Set.init) == ["k1", "k2", "k3"])
        #expect(try store.usedKeys(sessionId: "s-1", limit: 2) == nil)
        #expect(try store.usedKeys(sessionId: "s-2", limit: 2) == ["other"])
        #expect(try store.usedKeys(sessionId: "none", limit: 2) == [])
    }

    /// A closed store answers that it is closed.
    @Test func aClosedStoreIsUnavailable() throws {
        let (database, store) = try Self.store()
        defer { withExtendedLifetime(database) {} }
        try store.close()
        #expect(throws: StoreError.self) { try store.idempotentAnswer(sessionId: "s-1", key: "k") }
    }
}

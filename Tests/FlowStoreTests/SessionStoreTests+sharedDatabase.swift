// Two stores on one database, as two nodes are: the database, not the process, keeps the log right.
import FlowStore
import Foundation
@testable import PostgresStore
import StoreTestSupport
import Synchronization
import Testing

extension SessionStoreTests {
    /// Two writers of the same version on one session: exactly one applies, the other is told
    /// the version moved; the log holds one entry per version, with the winner's action.
    @Test(arguments: TestStoreKind.allCases) func secondWriterOfAVersionFails(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let first = try database.migratedStore()
        let second = try database.open()
        try first.insert(SessionStoreTests.session("race"))
        for version in 1...20 {
            let outcomes = Mutex<[Result<Void, any Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let store = index == 0 ? first : second
                var commit = SessionStoreTests.commit("race", version: version)
                commit.action.type = "node\(index)"
                let outcome = Result { try store.commit(commit) }
                outcomes.withLock { $0.append(outcome) }
            }
            let results = outcomes.withLock { $0 }
            #expect(results.filter { if case .success = $0 { true } else { false } }.count == 1, "version \(version)")
            for case .failure(let error) in results {
                #expect(error as? CommitError == .versionConflict(stored: version), "version \(version): \(error)")
            }
        }
        let log = try second.actions(sessionId: "race", after: 0, limit: 100)
        #expect(log.map(\.version) == Array(1...20))
        #expect(log.allSatisfy { $0.type == "node0" || $0.type == "node1" })
    }

    /// An Idempotency-Key applied through one store cannot apply a second action through
    /// another, even at the next version: the second commit writes nothing.
    @Test(arguments: TestStoreKind.allCases) func idempotencyKeyAppliesOnceAcrossStores(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let first = try database.migratedStore()
        let second = try database.open()
        try first.insert(SessionStoreTests.session("keyed"))
        try first.commit(SessionStoreTests.commit("keyed", version: 1, key: "retry-me"))
        #expect(throws: CommitError.self) {
            try second.commit(SessionStoreTests.commit("keyed", version: 2, key: "retry-me"))
        }
        #expect(try second.actions(sessionId: "keyed", after: 0, limit: 10).map(\.version) == [1])
        #expect(try second.idempotentAnswer(sessionId: "keyed", key: "retry-me")?.version == 1)
    }
}

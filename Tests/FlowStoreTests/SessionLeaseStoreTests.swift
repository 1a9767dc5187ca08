// Session leases in PostgreSQL: one owner at a time, taken over only once expired, and the
// fence: a commit under an epoch that is no longer the session's writes nothing.
import FlowStore
import Foundation
@testable import PostgresStore
import StoreTestSupport
import Synchronization
import Testing

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "leases are kept in a shared PostgreSQL database"))
struct SessionLeaseStoreTests {
    static func stores() throws -> (TestDatabase, PostgresStore, PostgresStore) {
        let database = try TestDatabase(kind: .postgresql)
        let first = try #require(try database.migratedStore() as? PostgresStore)
        let second = try #require(try database.open() as? PostgresStore)
        return (database, first, second)
    }

    static func epoch(_ grant: LeaseGrant) -> Int? {
        if case .granted(let epoch, _) = grant { epoch } else { nil }
    }

    /// The first asker gets the lease; another node is told who holds it (and the head); the
    /// holder renews under the same epoch; an unknown session is missing.
    @Test func oneOwnerAtATime() throws {
        let (database, a, b) = try Self.stores()
        defer { withExtendedLifetime(database) {} }
        try a.insert(SessionStoreTests.session("leased"))
        try a.commit(SessionStoreTests.commit("leased", version: 1))
        let granted = try a.acquireLease(sessionId: "leased", node: "http://a", milliseconds: 10_000)
        let epoch = try #require(Self.epoch(granted))
        #expect(granted == .granted(epoch: epoch, head: 1))
        #expect(try b.acquireLease(sessionId: "leased", node: "http://b", milliseconds: 10_000) == .held(owner: "http://a", epoch: epoch, head: 1))
        #expect(try a.acquireLease(sessionId: "leased", node: "http://a", milliseconds: 10_000) == .granted(epoch: epoch, head: 1))
        #expect(try b.acquireLease(sessionId: "nobody", node: "http://b", milliseconds: 10_000) == .missing)
    }

    /// An expired lease is taken over under a new epoch; the old owner's commit under its epoch
    /// then writes nothing (a version conflict), and the new owner's applies.
    @Test func takeoverFencesTheOldOwner() throws {
        let (database, a, b) = try Self.stores()
        defer { withExtendedLifetime(database) {} }
        try a.insert(SessionStoreTests.session("fenced"))
        let old = try #require(Self.epoch(try a.acquireLease(sessionId: "fenced", node: "http://a", milliseconds: 200)))
        var first = SessionStoreTests.commit("fenced", version: 1)
        first.leaseEpoch = old
        try a.commit(first)
        Thread.sleep(forTimeInterval: 0.3)
        let new = try #require(Self.epoch(try b.acquireLease(sessionId: "fenced", node: "http://b", milliseconds: 10_000)))
        #expect(new != old)
        var late = SessionStoreTests.commit("fenced", version: 2)
        late.leaseEpoch = old
        late.action.type = "late"
        #expect(throws: CommitError.self) { try a.commit(late) }
        var owned = SessionStoreTests.commit("fenced", version: 2)
        owned.leaseEpoch = new
        try b.commit(owned)
        #expect(try b.actions(sessionId: "fenced", after: 0, limit: 10).map(\.type) == ["t1", "t2"])
        // The old owner asks again: the lease is held, and the head counts the new owner's commit.
        #expect(try a.acquireLease(sessionId: "fenced", node: "http://a", milliseconds: 10_000) == .held(owner: "http://b", epoch: new, head: 2))
    }

    /// A commit in flight under the old epoch and a takeover race: whichever locks the lease
    /// first wins, and the head the new owner reads counts every commit made under the old epoch.
    @Test func takeoverSeesEveryCommitOfTheOldEpoch() throws {
        let (database, a, b) = try Self.stores()
        defer { withExtendedLifetime(database) {} }
        try a.insert(SessionStoreTests.session("raced"))
        for round in 0..<20 {
            let old = try #require(Self.epoch(try a.acquireLease(sessionId: "raced", node: "http://a", milliseconds: 1)))
            Thread.sleep(forTimeInterval: 0.005)
            let head = try a.headVersion(sessionId: "raced") ?? 0
            let grant = Mutex<LeaseGrant?>(nil)
            let committed = Mutex<Bool>(false)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    var commit = SessionStoreTests.commit("raced", version: head + 1)
                    commit.leaseEpoch = old
                    let applied = (try? a.commit(commit)) != nil
                    committed.withLock { $0 = applied }
                } else {
                    let taken = try? b.acquireLease(sessionId: "raced", node: "http://b", milliseconds: 1)
                    grant.withLock { $0 = taken }
                }
            }
            let taken = try #require(grant.withLock { $0 })
            guard case .granted(_, let seen) = taken else {
                Issue.record("round \(round): the expired lease was not taken over: \(taken)")
                continue
            }
            let applied = committed.withLock { $0 }
            #expect(seen == head + (applied ? 1 : 0), "round \(round): head \(seen), committed \(applied)")
            try b.releaseLeases(node: "http://b", sessionIds: ["raced"])
        }
    }

    /// A delete under an epoch another node has taken over deletes nothing; the owner's does,
    /// once; a session that is gone is not found.
    @Test func deletesAreFencedToo() throws {
        let (database, a, b) = try Self.stores()
        defer { withExtendedLifetime(database) {} }
        try a.insert(SessionStoreTests.session("deleted"))
        let old = try #require(Self.epoch(try a.acquireLease(sessionId: "deleted", node: "http://a", milliseconds: 100)))
        Thread.sleep(forTimeInterval: 0.2)
        let new = try #require(Self.epoch(try b.acquireLease(sessionId: "deleted", node: "http://b", milliseconds: 10_000)))
        #expect(try a.deleteLeasedSession(id: "deleted", epoch: old) == nil, "fenced: the owner decides")
        #expect(try a.headVersion(sessionId: "deleted") == 0, "still there")
        #expect(try b.deleteLeasedSession(id: "deleted", epoch: new) == true)
        #expect(try b.headVersion(sessionId: "deleted") == nil)
        #expect(try b.deleteLeasedSession(id: "deleted", epoch: new) == false)
    }

    /// A node that gives its leases up hands them on at once.
    @Test func releasedLeasesAreFree() throws {
        let (database, a, b) = try Self.stores()
        defer { withExtendedLifetime(database) {} }
        try a.insert(SessionStoreTests.session("handed"))
        _ = try a.acquireLease(sessionId: "handed", node: "http://a", milliseconds: 60_000)
        try a.releaseLeases(node: "http://a", sessionIds: ["handed"])
        #expect(Self.epoch(try b.acquireLease(sessionId: "handed", node: "http://b", milliseconds: 60_000)) != nil)
    }
}

// The nodes serving on a shared PostgreSQL database: each kind found apart, rows that stop being
// renewed age out, and a node stopping takes its row away.
import FlowStore
import Foundation
@testable import PostgresStore
import StoreTestSupport
import Testing

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "the nodes of a cluster are kept in a shared PostgreSQL database"))
struct ClusterNodeStoreTests {
    /// Owners and nodes without leases are listed apart, each as soon as it announced itself (from
    /// another connection); an owner that restarts without leases moves to the other list.
    @Test func eachKindIsSeenApart() throws {
        let database = try TestDatabase(kind: .postgresql)
        let a = try #require(try database.migratedStore() as? PostgresStore)
        let b = try #require(try database.open() as? PostgresStore)
        try a.announceNode("http://a#1", ownsSessions: true)
        try a.announceNode("http://c#1", ownsSessions: true)
        try b.announceNode("host pid 7 #2", ownsSessions: false)
        #expect(try b.nodesSeen(ownsSessions: true, withinMilliseconds: 10_000) == ["http://a#1", "http://c#1"])
        #expect(try a.nodesSeen(ownsSessions: false, withinMilliseconds: 10_000) == ["host pid 7 #2"])
        try b.announceNode("http://c#1", ownsSessions: false)
        #expect(try a.nodesSeen(ownsSessions: true, withinMilliseconds: 10_000) == ["http://a#1"])
        #expect(try a.nodesSeen(ownsSessions: false, withinMilliseconds: 10_000) == ["host pid 7 #2", "http://c#1"])
    }

    /// A row not renewed within the window is not live; renewed, it is again; withdrawn, it is gone.
    @Test func rowsAgeOutAndGo() throws {
        let database = try TestDatabase(kind: .postgresql)
        let store = try #require(try database.migratedStore() as? PostgresStore)
        // The window is long next to a round trip (an announce is two writes and the read one
        // more, each a commit that may wait its turn on a loaded machine) and the sleep is longer.
        try store.announceNode("http://a#1", ownsSessions: true)
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try store.nodesSeen(ownsSessions: true, withinMilliseconds: 1_000).isEmpty)
        #expect(try store.nodesSeen(ownsSessions: true, withinMilliseconds: 10_000) == ["http://a#1"])
        try store.announceNode("http://a#1", ownsSessions: true)
        #expect(try store.nodesSeen(ownsSessions: true, withinMilliseconds: 1_000) == ["http://a#1"])
        try store.withdrawNode("http://a#1")
        #expect(try store.nodesSeen(ownsSessions: true, withinMilliseconds: 10_000).isEmpty)
    }
}

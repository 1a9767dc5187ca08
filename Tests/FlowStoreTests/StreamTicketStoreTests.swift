// Stream tickets on SQLite and on PostgreSQL (each a named case): taking one, its window and its
// end, generations, renewals, and deletion with the session.
import FlowStore
import StoreTestSupport
import Testing

@Suite("Stream ticket store")
struct StreamTicketStoreTests {
    static let ticket: [UInt8] = Array(repeating: 7, count: 32)

    static func storeWithSession(_ kind: TestStoreKind) throws -> (TestDatabase, any FlowStore) {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        try store.insert(SessionStoreTests.session("s-1"))
        try store.insert(SessionStoreTests.session("s-2"))
        return (database, store)
    }

    /// A ticket opens its session's stream within its window, each time with a new generation,
    /// and moves its window; never for another session.
    @Test(arguments: TestStoreKind.allCases) func takingATicketMovesItsWindowAndGeneration(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.storeWithSession(kind)
        defer { withExtendedLifetime(database) {} }
        try store.insertStreamTicket(hash: Self.ticket, sessionId: "s-1", expiresAt: 1_030, endsAt: 5_000, now: 1_000)
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-2", now: 1_001, holdUntil: 1_061) == nil)
        let first = try #require(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_010, holdUntil: 1_070))
        #expect(first.generation == 1)
        #expect(first.endsAt == 5_000)
        // Past the first-use time but within the window the take moved.
        let second = try #require(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_060, holdUntil: 1_120))
        #expect(second.generation == 2)
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_121, holdUntil: 1_181) == nil, "past the window")
        #expect(try store.takeStreamTicket(hash: [1, 2, 3], sessionId: "s-1", now: 1_000, holdUntil: 1_060) == nil, "unknown")
    }

    /// Renewing keeps the window ahead only for the generation that holds the ticket; an older
    /// generation learns that it was replaced.
    @Test(arguments: TestStoreKind.allCases) func renewalsBelongToTheNewestGeneration(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.storeWithSession(kind)
        defer { withExtendedLifetime(database) {} }
        try store.insertStreamTicket(hash: Self.ticket, sessionId: "s-1", expiresAt: 1_030, endsAt: 100_000, now: 1_000)
        let older = try #require(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_010, holdUntil: 1_070))
        #expect(try store.renewStreamTickets([older], until: 2_000).isEmpty)
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_990, holdUntil: 2_050) != nil, "renewed to 2000")
        #expect(try store.renewStreamTickets([older], until: 9_000) == [older], "a newer stream took it")
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 2_051, holdUntil: 2_111) == nil,
                "the older generation's renewal did not move the window")
        #expect(try store.renewStreamTickets([], until: 9_000).isEmpty)
    }

    /// However often it is renewed or taken, a ticket opens nothing past its end.
    @Test(arguments: TestStoreKind.allCases) func aTicketEndsAtItsEnd(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.storeWithSession(kind)
        defer { withExtendedLifetime(database) {} }
        try store.insertStreamTicket(hash: Self.ticket, sessionId: "s-1", expiresAt: 1_030, endsAt: 1_100, now: 1_000)
        let hold = try #require(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_010, holdUntil: 1_070))
        #expect(try store.renewStreamTickets([hold], until: 5_000).isEmpty)
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_100, holdUntil: 1_160) != nil)
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_101, holdUntil: 1_161) == nil)
    }

    /// Deleting the session deletes its tickets; tickets past their window or end are cleared
    /// when a new one is made.
    @Test(arguments: TestStoreKind.allCases) func ticketsGoWithTheirSessionAndWhenSpent(_ kind: TestStoreKind) throws {
        let (database, store) = try Self.storeWithSession(kind)
        defer { withExtendedLifetime(database) {} }
        try store.insertStreamTicket(hash: Self.ticket, sessionId: "s-1", expiresAt: 1_030, endsAt: 5_000, now: 1_000)
        let hold = try #require(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_010, holdUntil: 1_070))
        #expect(try store.deleteSession(id: "s-1"))
        #expect(try store.takeStreamTicket(hash: Self.ticket, sessionId: "s-1", now: 1_011, holdUntil: 1_071) == nil)
        #expect(try store.renewStreamTickets([hold], until: 2_000) == [hold])

        let spent: [UInt8] = Array(repeating: 8, count: 32)
        try store.insertStreamTicket(hash: spent, sessionId: "s-2", expiresAt: 1_030, endsAt: 5_000, now: 1_000)
        let spentHold = try #require(try store.takeStreamTicket(hash: spent, sessionId: "s-2", now: 1_010, holdUntil: 1_070))
        try store.insertStreamTicket(hash: Self.ticket, sessionId: "s-2", expiresAt: 2_030, endsAt: 5_000, now: 2_000)
        #expect(try store.renewStreamTickets([spentHold], until: 3_000) == [spentHold], "cleared: its window ran out at 1070")
    }
}

// Session ids as the server makes them: in creation order, carrying the stored creation time; and
// a session stored under a random id, as earlier releases made them, still served.
@testable import FlowServer
import FlowStore
import Foundation
import Testing

struct SessionIdOrderTests {
    static func nowMilliseconds() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Sessions created a few milliseconds apart have ids in the order they were created, by
    /// bytes as the store's keys sort; each id's time is its stored `created_at`.
    @Test func idsFollowCreationAndCarryItsTime() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        var ids: [String] = []
        for index in 0..<12 {
            let before = Self.nowMilliseconds()
            let session = try client.create(userId: "order-\(index)")
            let after = Self.nowMilliseconds()
            let made = try #require(SessionIdentifierTests.milliseconds(of: session.id), "\(session.id)")
            #expect(before <= made && made <= after, "\(session.id): \(made) outside \(before)...\(after)")
            let stored = try #require(try test.store.session(id: session.id))
            let day = Int(made) / 86_400_000
            #expect(stored.createdAt == Timestamp.string(days: day, millisecondOfDay: Int(made) - day * 86_400_000))
            ids.append(session.id)
            Thread.sleep(forTimeInterval: 0.002)
        }
        #expect(ids == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    /// A session stored under a 128-bit random id (as releases before ordered ids made them) is
    /// read and acted on after a restart, its id's form unchanged.
    @Test func aRandomIdOfBeforeIsServed() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let made = try client.create(userId: "before")
        var record = try #require(try test.store.session(id: made.id))
        var generator = SystemRandomNumberGenerator()
        record.id = "s_" + BearerToken.base64URL((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try test.store.insert(record, exposures: [], exclusions: [], firstFeature: nil)
        let restarted = try test.reopened()
        let old = CreatedSession(id: record.id, token: made.token, state: made.state)
        let oldClient = SessionClient(sender: restarted.direct)
        let read = try oldClient.state(old)
        #expect(read.status == 200)
        #expect(read.json["sessionId"].stringValue == record.id)
        let first = read.json["top"]["id"].stringValue ?? ""
        let state = try oldClient.apply(old, #"{"type":"onboarding.showSecond","from":"\#(first)"}"#)
        #expect(state["version"] == 1)
        #expect(state.features == ["onboarding.first", "onboarding.second"])
    }
}

// Two windows of one app (two FlowSessions of one user on one store, running at once) take
// different slots of the store, so neither writes over the taps the other queued: the claiming
// rules on a memory store, the stored form of a slot, and two windows against a real flowstack.
@testable import FlowStackClient
import Foundation
import JSON
import Testing

@Suite(.serialized)
struct SessionSlotTests {
    static let key = SessionKey(server: "http://127.0.0.1:8080", userId: "win")

    static func kept(_ slot: Int, taps: [String] = []) -> StoredSession {
        StoredSession(server: key.server, sessionId: "s_\(slot)", token: "t_\(slot)", userId: key.userId,
                      queue: taps.enumerated().map { QueuedAction(key: $1, version: $0, action: FlowAction(type: "x")) }, slot: slot)
    }

    /// A session starting claims a slot no running one holds: the first, else the next; a slot
    /// let go is claimed again; a slot keeping taps not yet sent comes before an idle one.
    @Test func aStartingSessionClaimsAFreeSlotPreferringOneWithTapsWaiting() throws {
        let store = MemorySessionStore()
        let first = try SessionSlots.claim(Self.key, in: store)
        #expect(first.key.slot == 1 && first.kept == nil && first.claim != nil)
        let second = try SessionSlots.claim(Self.key, in: store)
        #expect(second.key.slot == 2)
        #expect(SessionSlots.held(Self.key, in: store) == [1, 2])
        // Another user, or another store, is another scope.
        #expect(try SessionSlots.claim(SessionKey(server: Self.key.server, userId: "other"), in: store).key.slot == 1)
        #expect(try SessionSlots.claim(Self.key, in: MemorySessionStore()).key.slot == 1)
        first.claim?.release()
        first.claim?.release()  // once only: slot 2 stays held
        #expect(SessionSlots.held(Self.key, in: store) == [2])
        #expect(try SessionSlots.claim(Self.key, in: store).key.slot == 1)  // dropped at once: let go
        #expect(SessionSlots.held(Self.key, in: store) == [2])
        second.claim?.release()
        #expect(SessionSlots.held(Self.key, in: store).isEmpty)

        // Slot 1 idle, slot 2 with a tap a closed window left: the next session takes slot 2,
        // the one after it slot 1, the one after that slot 3 (nothing in it: a new session).
        try store.save(Self.kept(1))
        try store.save(Self.kept(2, taps: ["k1"]))
        let waiting = try SessionSlots.claim(Self.key, in: store)
        #expect(waiting.key.slot == 2 && waiting.kept?.queue.map(\.key) == ["k1"])
        let idle = try SessionSlots.claim(Self.key, in: store)
        #expect(idle.key.slot == 1 && idle.kept?.sessionId == "s_1")
        let fresh = try SessionSlots.claim(Self.key, in: store)
        #expect(fresh.key.slot == 3 && fresh.kept == nil)
        for claim in [waiting, idle, fresh] { claim.claim?.release() }

        // Every slot held: slot 1, unclaimed, as before there were slots.
        let all = try SessionKey.slots.map { _ in try SessionSlots.claim(Self.key, in: store) }
        #expect(all.map(\.key.slot).sorted() == Array(SessionKey.slots) && all.first?.key.slot == 2)
        let over = try SessionSlots.claim(Self.key, in: store)
        #expect(over.key.slot == 1 && over.claim == nil)
        for claim in all { claim.claim?.release() }
        #expect(SessionSlots.held(Self.key, in: store).isEmpty)
    }

    /// A slot is part of the stored form and of the journal's lines; a store keeps each slot's
    /// session apart; slot 1 is written as before (no `slot`), and a wrong slot does not read.
    @Test func slotsAreKeptApartInTheFileAndItsJournal() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-slots-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        let store = FileSessionStore(path: path)
        var one = Self.kept(1)
        var two = Self.kept(2)
        try store.save(one)
        try store.save(two)
        // Taps appended to each (journal lines), then a kill: a new store reads each slot's own.
        one.queue.append(QueuedAction(key: "a1", version: 0, action: FlowAction(type: "x")))
        try store.save(one)
        two.queue.append(QueuedAction(key: "b1", version: 0, action: FlowAction(type: "x")))
        try store.save(two)
        two.queue.append(QueuedAction(key: "b2", version: 1, action: FlowAction(type: "x")))
        try store.save(two)
        let journal = try String(contentsOfFile: path + ".journal", encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 3 && journal.contains(#""slot":2"#))
        let again = FileSessionStore(path: path)
        #expect(try again.load(Self.key)?.queue.map(\.key) == ["a1"])
        #expect(try again.load(Self.key.inSlot(2))?.queue.map(\.key) == ["b1", "b2"])
        #expect(try again.load(Self.key.inSlot(3)) == nil)
        #expect(!String(decoding: one.encoded(), as: UTF8.self).contains("slot"))
        #expect(StoredSession(encoded: two.encoded()) == two)
        for wrong in [#""slot":0"#, #""slot":65"#, #""slot":"2""#] {
            let text = String(decoding: one.encoded(), as: UTF8.self).replacingOccurrences(of: #""queue""#, with: "\(wrong),\"queue\"")
            #expect(StoredSession(encoded: Array(text.utf8)) == nil, "\(wrong)")
        }
        #expect(Self.key.inSlot(2).description == "win on http://127.0.0.1:8080 (slot 2)")
    }

    /// Two windows of one user on one store, against a real flowstack: the second runs a session
    /// of its own; the first queues two taps offline and is closed with them waiting; the second
    /// goes on and is closed. The next launch resumes the first window's slot and sends its taps,
    /// each stored once; a window opened beside it resumes the second's session.
    @Test func twoWindowsOnOneStoreKeepEachOthersTaps() async throws {
        let server = try ServerProcess()
        let path = FlowSessionTests.storePath(server)
        let store = FileSessionStore(path: path)
        let first = try await FlowSession.start(FlowSessionTests.configuration(server, user: "win", store: store))
        let second = try await FlowSession.start(FlowSessionTests.configuration(server, user: "win", store: store))
        #expect(second.sessionId != first.sessionId, "the second window resumed the first window's session")
        #expect(await FlowSessionTests.engineLoaded(first))
        #expect(await FlowSessionTests.engineLoaded(second))
        await first.settled()
        await first.setOffline(true)
        _ = try await first.send(FlowAction(type: "onboarding.showSecond"))
        _ = try await first.send(FlowAction(type: "onboarding.completed"))
        // The second window taps on, online: each of its saves leaves the first's taps in the store.
        _ = try await second.send(FlowAction(type: "onboarding.showSecond"))
        await second.settled()
        await first.close()
        _ = try await second.send(FlowAction(type: "back"))
        await second.settled()
        await second.close()
        let kept = try FileSessionStore(path: path).all()
        let waiting = try #require(kept.first { $0.sessionId == first.sessionId }, "the first window's session is not in the store")
        #expect(waiting.queue.map(\.action.type) == ["onboarding.showSecond", "onboarding.completed"])
        #expect(kept.first { $0.sessionId == second.sessionId }?.queue.isEmpty == true)

        // The next launch: the slot with taps waiting first, then the idle one.
        let relaunched = FileSessionStore(path: path)
        let resumed = try await FlowSession.start(FlowSessionTests.configuration(server, user: "win", store: relaunched))
        #expect(resumed.sessionId == first.sessionId)
        await resumed.settled()
        #expect(await resumed.confirmedState.features == ["home.first"])
        let beside = try await FlowSession.start(FlowSessionTests.configuration(server, user: "win", store: relaunched))
        #expect(beside.sessionId == second.sessionId)
        #expect(await beside.state.features == ["onboarding.first"])
        let (status, log) = try await server.request("GET", "/v1/sessions/\(waiting.sessionId)/actions", token: waiting.token)
        #expect(status == 200)
        let types = try JSONParser.parse(Array(log.utf8))["actions"]?.arrayValue?.compactMap { $0["type"]?.stringValue }
        #expect(types == ["onboarding.showSecond", "onboarding.completed"], "\(log)")
        await resumed.close()
        await beside.close()
    }
}

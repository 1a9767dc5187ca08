// The bounded session cache: its bound, its eviction, and correctness when sessions are evicted.
@testable import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import Synchronization
import Testing

extension SessionCache {
    /// Takes and gives back the slot of `id`, as one request would.
    func use(_ id: String) -> SessionSlot {
        let slot = pin(id)
        unpin(slot)
        return slot
    }
}

struct SessionCacheTests {
    /// The cache never holds more slots than its capacity.
    @Test func staysWithinCapacity() {
        let cache = SessionCache(capacity: 100)
        for index in 0..<1_000 { _ = cache.use("s\(index)") }
        #expect(cache.count == 100)
    }

    /// A slot in use keeps its identity; an unused one is evicted first (second chance).
    @Test func usedSlotsGetASecondChance() {
        let cache = SessionCache(capacity: 3)
        let a = cache.use("a")
        _ = cache.use("b")
        _ = cache.use("c")
        _ = cache.use("d")           // the clock clears every flag, then evicts a
        #expect(cache.use("b") !== a)
        _ = cache.use("c")           // c is used again
        _ = cache.use("e")           // evicts one of the others, not c
        let c = cache.use("c")
        #expect(cache.use("c") === c)
        #expect(cache.count == 3)
    }

    /// A slot in use is never evicted, however many other sessions come; the cache grows past
    /// its capacity only by the slots in use.
    @Test func pinnedSlotsAreNeverEvicted() {
        let cache = SessionCache(capacity: 2)
        let held = cache.pin("held")
        for index in 0..<50 { _ = cache.use("other\(index)") }
        #expect(cache.use("held") === held)
        let second = cache.pin("second")
        let third = cache.pin("third")
        #expect(cache.count == 3)
        cache.unpin(held)
        cache.unpin(second)
        cache.unpin(third)
        for index in 0..<10 { _ = cache.use("after\(index)") }
        #expect(cache.count <= 3)
    }

    /// Removing a session frees its place; the bound still holds as ids come and go.
    @Test func removalsAreReclaimed() {
        let cache = SessionCache(capacity: 10)
        for round in 0..<50 {
            for index in 0..<10 { _ = cache.use("r\(round)-\(index)") }
            for index in 0..<5 { cache.remove("r\(round)-\(index)", slot: cache.use("r\(round)-\(index)")) }
            #expect(cache.count <= 10)
        }
    }
}

struct SessionEvictionTests {
    /// With a cache of one session, many sessions acted on concurrently stay exact: every state
    /// read back from the database is the committed one, and no action is lost.
    @Test func tinyCacheKeepsEverySessionExact() throws {
        let test = try TestApp(cacheCapacity: 1)
        let client = SessionClient(sender: test.direct)
        let sessions = try (0..<6).map { try client.create(userId: "e\($0)") }
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 6 * 4) { index in
            let session = sessions[index % 6]
            for _ in 0..<5 {
                for body in [#"{"type":"onboarding.showSecond"}"#, #"{"type":"back"}"#] {
                    if (try? client.act(session, body))?.status != 200 { failures.add(1, ordering: .relaxed) }
                }
            }
        }
        // Concurrent posts to one session may be refused (showSecond on top of second is
        // refused, back on first is refused) but never lost: the log and the version agree.
        for session in sessions {
            let state = try client.state(session).json
            let version = state["version"].integerValue ?? -1
            let log = try client.sender.send("GET", "/v1/sessions/\(session.id)/actions?limit=1000", headers: session.auth).json
            #expect(log["actions"].arrayValue?.compactMap { $0["version"].integerValue } == Array(stride(from: 1, through: version, by: 1)))
            #expect(version > 0)
        }
        #expect(failures.load(ordering: .relaxed) < 6 * 4 * 10)
    }
}

struct StaleCacheTests {
    /// When the database moved past the cached state (a writer under an evicted slot), the
    /// commit is refused, the session is reloaded, and the action applies on the committed state.
    @Test func staleCachedStateIsReloadedAndRetried() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "stale")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        // Another writer on the same database (another process on the file) takes versions 2
        // and 3, back where version 1 stood.
        let beside = try TestApp(beside: test)
        defer { withExtendedLifetime(beside) {} }
        let other = SessionClient(sender: beside.direct)
        try other.apply(session, #"{"type":"back"}"#)
        #expect(try other.apply(session, #"{"type":"onboarding.showSecond"}"#)["version"] == 3)
        let state = try client.apply(session, #"{"type":"back"}"#)
        #expect(state["version"] == 4)
        #expect(state.features == ["onboarding.first"])
        #expect(try test.store.actions(sessionId: session.id, after: 0, limit: 10).map(\.type)
                == ["onboarding.showSecond", "back", "onboarding.showSecond", "back"])
    }
}

struct EvictionRaceTests {
    /// A slot evicted while a request waits on its lock cannot leave an older copy behind: the
    /// slot is pinned, so the next reader finds the same slot and reads what was acknowledged.
    @Test func readsAfterAnAcknowledgedActionSeeIt() throws {
        let test = try TestApp(cacheCapacity: 1)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "stale-read")
        let cache = test.app.sessions.cache
        let slot = cache.pin(session.id)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            slot.state.withLock { _ in
                locked.signal()
                release.wait()
            }
        }
        locked.wait()
        let acknowledged = Mutex<Response?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let response = try? client.act(session, #"{"type":"onboarding.showSecond"}"#)
            acknowledged.withLock { $0 = response }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.2)
        _ = try client.create(userId: "other")          // capacity 1: would evict the slot
        cache.unpin(slot)
        release.signal()
        done.wait()
        let response = try #require(acknowledged.withLock { $0 })
        #expect(response.status == 200)
        #expect(response.json["version"] == 1)
        #expect(try client.state(session).json["version"] == 1)
        #expect(try client.act(session, #"{"type":"onboarding.completed"}"#).status == 200)
        #expect(try client.act(session, #"{"type":"back"}"#, headers: [("If-Match", "\"2\"")]).status == 422)
    }

    /// Requests for unknown ids or with wrong tokens never push live sessions out of the cache.
    @Test func unknownIdsDoNotEvictLiveSessions() throws {
        let test = try TestApp(cacheCapacity: 10)
        let client = SessionClient(sender: test.direct)
        let sessions = try (0..<10).map { try client.create(userId: "c\($0)") }
        let slots = sessions.map { test.app.sessions.cache.use($0.id) }
        for index in 0..<10 {
            #expect(try test.direct.send("GET", "/v1/sessions/s_bogus\(index)", headers: [("Authorization", "Bearer nope")]).status == 404)
            #expect(try test.direct.send("GET", "/v1/sessions/\(sessions[index].id)", headers: [("Authorization", "Bearer nope")]).status == 401)
        }
        #expect(zip(sessions, slots).allSatisfy { test.app.sessions.cache.use($0.0.id) === $0.1 })
    }

    /// User state is shared by a user's sessions: one session completing onboarding is seen by
    /// the other's next action, cached or not, and the admin reset is seen too.
    @Test func userStateIsSharedAcrossSessions() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let first = try client.create(userId: "twin")
        let second = try client.create(userId: "twin")
        try client.apply(first, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(first, #"{"type":"onboarding.completed"}"#)
        #expect(try test.app.sessions.users.state(of: "twin", store: test.store)["onboarded"] == true)
        #expect(try client.create(userId: "twin").state.features == ["home.first"])
        _ = try test.direct.send("DELETE", "/v1/users/twin/onboarding", headers: [("Authorization", "Bearer \(TestApp.adminToken)")])
        #expect(try test.app.sessions.users.state(of: "twin", store: test.store)["onboarded"] == nil)
        #expect(try client.state(second).json.features == ["onboarding.first"])
    }
}

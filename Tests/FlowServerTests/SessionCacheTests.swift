// The bounded session cache: its bound, its eviction, and correctness when sessions are evicted.
@testable import FlowServer
import FlowStore
import Foundation
import HTTPTestClient
import Synchronization
import Testing

struct SessionCacheTests {
    /// The cache never holds more slots than its capacity.
    @Test func staysWithinCapacity() {
        let cache = SessionCache(capacity: 100)
        for index in 0..<1_000 { _ = cache.slot(for: "s\(index)") }
        #expect(cache.count == 100)
    }

    /// A slot in use keeps its identity; an unused one is evicted first (second chance).
    @Test func usedSlotsGetASecondChance() {
        let cache = SessionCache(capacity: 3)
        let a = cache.slot(for: "a")
        _ = cache.slot(for: "b")
        _ = cache.slot(for: "c")
        _ = cache.slot(for: "d")           // the clock clears every flag, then evicts a
        #expect(cache.slot(for: "b") !== a)
        _ = cache.slot(for: "c")           // c is used again
        _ = cache.slot(for: "e")           // evicts one of the others, not c
        let c = cache.slot(for: "c")
        #expect(cache.slot(for: "c") === c)
        #expect(cache.count == 3)
    }

    /// Removing a session frees its place; the bound still holds as ids come and go.
    @Test func removalsAreReclaimed() {
        let cache = SessionCache(capacity: 10)
        for round in 0..<50 {
            for index in 0..<10 { _ = cache.slot(for: "r\(round)-\(index)") }
            for index in 0..<5 { cache.remove("r\(round)-\(index)") }
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
        let stored = try #require(try test.store.session(id: session.id))
        let action = ActionRecord(version: 2, type: "elsewhere", source: nil, params: "{}", interactive: false,
                                  handledBy: "onboarding", transition: nil, createdAt: FlowStore.timestamp())
        try test.store.commit(ActionCommit(sessionId: session.id, userId: "stale", version: 2, tree: stored.tree, action: action))
        let state = try client.apply(session, #"{"type":"back"}"#)
        #expect(state["version"] == 3)
        #expect(state.features == ["onboarding.first"])
        let log = try client.sender.send("GET", "/v1/sessions/\(session.id)/actions", headers: session.auth).json
        #expect(log["actions"].arrayValue?.compactMap { $0["type"].stringValue } == ["onboarding.showSecond", "elsewhere", "back"])
    }
}

// FlowSession's life around its store against a real flowstack: a store that fails and works
// again, and a session closed while its request is on the wire with a new one on the same store.
import FlowStackClient
import Foundation
import JSON
import Testing
import TestSupport

@Suite(.serialized)
struct FlowSessionLifecycleTests {
    /// A tap whose save failed (a directory where the store's journal goes: a file in the way, as
    /// a full disk would) is saved once the store works again, with no other change to trigger a
    /// save: an app killed after that, still offline, keeps the tap.
    @Test func aTapTheStoreFailedToKeepIsKeptOnceItWorksAgain() async throws {
        let server = try ServerProcess()
        let path = FlowSessionTests.storePath(server)
        let store = FileSessionStore(path: path)
        let session = try await FlowSession.start(FlowSessionTests.configuration(server, user: "ida", store: store))
        #expect(await FlowSessionTests.engineLoaded(session))
        await session.settled()
        await session.setOffline(true)
        let journal = path + ".journal"
        try? FileManager.default.removeItem(atPath: journal)
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: false)
        let second = try await session.send(FlowAction(type: "onboarding.showSecond"))
        #expect(second.features == ["onboarding.first", "onboarding.second"])
        #expect(await session.lastStoreError != nil, "the save of the tap failed")
        try FileManager.default.removeItem(atPath: journal)
        // The store works again; the app does nothing more, and is killed a moment later.
        try await Task.sleep(for: .seconds(1))
        let key = SessionKey(server: server.server, userId: "ida")
        let kept = try FileSessionStore(path: path).load(key)
        #expect(kept?.queue.map(\.action.type) == ["onboarding.showSecond"], "the tap is in the store the next launch reads")
        await session.close()
        // The next launch sends it.
        let relaunched = try await FlowSession.start(FlowSessionTests.configuration(server, user: "ida", store: FileSessionStore(path: path)))
        await relaunched.settled()
        #expect(await relaunched.confirmedState.features == ["onboarding.first", "onboarding.second"])
        await relaunched.close()
    }

    /// The app closes a session while its tap is on the wire and starts a new one on the same
    /// store (a view made again): the new one resends the tap and the user taps on. The closed
    /// one's answer, when it comes, is not written over the new one's store: the tap made on the
    /// new session (queued, offline) stays in the store, and the next launch sends it.
    @Test func aClosedSessionDoesNotWriteOverTheNextOnesStore() async throws {
        let server = try ServerProcess()
        let path = FlowSessionTests.storePath(server)
        let store = FileSessionStore(path: path)
        let gate = Gate()
        var configuration = FlowSessionTests.configuration(server, user: "ren", store: store)
        configuration.transport = HeldTransport(URLSessionTransport(server: server.server, timeout: 5), gate: gate)
        let first = try await FlowSession.start(configuration)
        #expect(await FlowSessionTests.engineLoaded(first))
        await first.settled()
        gate.holding = true
        _ = try await first.send(FlowAction(type: "onboarding.showSecond"))
        #expect(await eventually { gate.held == 1 }, "the tap's post waits on the wire, before the server")
        await first.close()

        let second = try await FlowSession.start(FlowSessionTests.configuration(server, user: "ren", store: store))
        #expect(second.sessionId == first.sessionId)
        #expect(await second.state.features == ["onboarding.first", "onboarding.second"])
        await second.settled()
        #expect(await second.confirmedState.version == 1)
        await second.setOffline(true)
        let home = try await second.send(FlowAction(type: "onboarding.completed"))
        #expect(home.features == ["home.first"])
        #expect(try store.only()?.queue.map(\.action.type) == ["onboarding.completed"])

        // The closed session's post goes now: the server answers it from its log.
        gate.holding = false
        #expect(await eventually { gate.answered == 1 })
        #expect(await eventually { await first.pendingCount == 0 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(try store.only()?.queue.map(\.action.type) == ["onboarding.completed"],
                "the closed session wrote over the store: the tap made on the new one is gone from it")
        await second.close()
        let relaunched = try await FlowSession.start(FlowSessionTests.configuration(server, user: "ren", store: FileSessionStore(path: path)))
        await relaunched.settled()
        #expect(await relaunched.confirmedState.features == ["home.first"])
        await relaunched.close()
    }

    /// A session closed is done: a tap on it is not queued where nobody sends it (it throws).
    @Test func aTapOnAClosedSessionThrows() async throws {
        let server = try ServerProcess()
        let store = MemorySessionStore()
        let session = try await FlowSession.start(FlowSessionTests.configuration(server, user: "ola", store: store))
        #expect(await FlowSessionTests.engineLoaded(session))
        await session.close()
        await #expect(throws: Unreachable.self) { try await session.send(FlowAction(type: "onboarding.showSecond")) }
        #expect(await session.pendingCount == 0)
        #expect(try store.load(SessionKey(server: server.server, userId: "ola"))?.queue.isEmpty == true)
    }
}

/// Holds posts of taps (single or batch) while `holding`, before they reach the server.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isHolding = false
    private var heldCount = 0
    private var answeredCount = 0
    var holding: Bool {
        get { lock.withLock { isHolding } }
        set { lock.withLock { isHolding = newValue } }
    }
    var held: Int { lock.withLock { heldCount } }
    var answered: Int { lock.withLock { answeredCount } }

    func pass(_ request: FlowRequest, _ send: () async throws -> FlowAnswer) async throws -> FlowAnswer {
        guard request.method == "POST", request.path.contains("/actions"), holding else { return try await send() }
        lock.withLock { heldCount += 1 }
        while holding { try? await Task.sleep(for: .milliseconds(10)) }
        let answer = try await send()
        lock.withLock { answeredCount += 1 }
        return answer
    }
}

/// URLSession's transport to the real server, through a ``Gate``.
struct HeldTransport: FlowTransport {
    let inner: URLSessionTransport
    let gate: Gate
    init(_ inner: URLSessionTransport, gate: Gate) {
        self.inner = inner
        self.gate = gate
    }

    func send(_ request: FlowRequest) async throws -> FlowAnswer {
        try await gate.pass(request) { try await inner.send(request) }
    }
}

// FlowSession against a real flowstack process on a loopback port.
import FlowStackClient
import Foundation
import JSON
import Testing
import TestSupport

@Suite(.serialized)
struct FlowSessionTests {
    static func configuration(_ server: ServerProcess, user: String = "u-\(UUID().uuidString.prefix(8))", store: any SessionStore = MemorySessionStore(),
                              latency: Duration = .zero) -> FlowSession.Configuration {
        FlowSession.Configuration(
            server: server.server, userId: user,
            client: .init(platform: "linux", appVersion: "1.0.0",
                          features: ["onboarding.first", "onboarding.second", "onboarding.faceScan", "home.first", "home.second", "modal",
                                     "login.form", "checkout.cart", "checkout.review", "address.list", "address.form", "address.row", "paywall.offer", "purchase"]),
            store: store, retry: RetryPolicy(attempts: 2, initialDelay: .milliseconds(50), maximumDelay: .milliseconds(300)),
            timeout: 5, simulatedLatency: latency)
    }

    static func storePath(_ server: ServerProcess) -> String { server.directory.appendingPathComponent("session.json").path }

    /// Waits until the bundle is loaded, so taps run on the local engine.
    static func engineLoaded(_ session: FlowSession) async -> Bool {
        await eventually { await session.hasLocalEngine }
    }

    static func corrections(_ session: FlowSession) async -> [Correction] {
        await session.history.compactMap { if case .corrected(let correction) = $0 { correction } else { nil } }
    }

    /// A new session taps through onboarding: each tap is shown before its answer could have
    /// come (1 s of latency added to every request), and every one is confirmed unchanged.
    @Test func tapsThroughOnboardingWithoutWaiting() async throws {
        let server = try ServerProcess()
        let session = try await FlowSession.start(Self.configuration(server, latency: .seconds(1)))
        #expect(await session.state.features == ["onboarding.first"])
        #expect(await Self.engineLoaded(session))
        for (type, features) in [("onboarding.showSecond", ["onboarding.first", "onboarding.second"]), ("onboarding.completed", ["home.first"]),
                                 ("home.presentModal", ["home.first", "modal"])] {
            let shown = try await session.send(FlowAction(type: type, params: type == "home.presentModal" ? ["content": "Hi"] : [:]))
            // Shown before its answer came: a tap that waited returns only once it (and every tap
            // before it) is confirmed. (Not a stopwatch: on 2 cores shared by the whole suite, the
            // actor may wait its turn for longer than 100 ms; the latency is a second so that the
            // answer cannot come before the check either.)
            #expect(await session.pendingCount > 0, "\(type) waited for the network")
            #expect(shown.features == features)
        }
        await session.settled()
        let confirmed = await session.confirmedState
        #expect(confirmed.version == 3 && confirmed.features == ["home.first", "modal"])
        #expect(await session.state == confirmed)
        #expect(await Self.corrections(session).isEmpty)
        // Taps faster than answers went as a post, then a batch: confirmed, never corrected.
        #expect(await session.history.contains(.confirmed(confirmed)))
        await session.close()
    }

    /// Without a bundle, a tap the last answer predicted is shown at once; one it did not predict
    /// (params) waits for the answer.
    @Test func predictionsWithoutABundle() async throws {
        let server = try ServerProcess()
        var configuration = Self.configuration(server, latency: .seconds(1))
        configuration.usesBundle = false
        let session = try await FlowSession.start(configuration)
        for type in ["onboarding.showSecond", "onboarding.completed"] {
            let shown = try await session.send(FlowAction(type: type))
            // Shown before its answer came (a tap that waited returns once it is confirmed); not
            // a stopwatch, which the whole suite on 2 cores breaks (see tapsThroughOnboardingWithoutWaiting).
            #expect(await session.pendingCount > 0, "\(type) waited")
            #expect(shown.top?.feature == (type == "onboarding.completed" ? "home.first" : "onboarding.second"))
            await session.settled()
        }
        #expect(await session.hasLocalEngine == false)
        let started = ContinuousClock.now
        let answer = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
        #expect(ContinuousClock.now - started >= .seconds(1), "an unpredicted tap is the answer")
        #expect(answer.features == ["home.second"] && answer.version == 3)
        #expect(await Self.corrections(session).isEmpty)
        await session.close()
    }

    /// A predictions-only client tapping twice without waiting: the second tap has no prediction
    /// yet (the first is on the wire), so it waits for the first tap's answer, whose predictions
    /// show it at once: one round trip, not two; nothing corrected.
    @Test func predictionsOnlyTapsBackToBack() async throws {
        let server = try ServerProcess()
        var configuration = Self.configuration(server, latency: .seconds(1))
        configuration.usesBundle = false
        let session = try await FlowSession.start(configuration)
        let started = ContinuousClock.now
        let first = try await session.send(FlowAction(type: "onboarding.showSecond"))
        #expect(await session.pendingCount > 0, "the predicted tap waited")
        #expect(first.top?.feature == "onboarding.second")
        let second = try await session.send(FlowAction(type: "onboarding.completed"))
        let waited = ContinuousClock.now - started
        #expect(second.features == ["home.first"] && second.version == 2)
        // The first answer takes one round trip (1 s each request); waiting for a second would
        // take 2 s or more. The round trips are long so that a loaded machine's stalls (up to
        // about a second in the whole suite on 2 cores) fit in the margin.
        #expect(waited < .milliseconds(1900), "the second tap waited \(waited)")
        await session.settled()
        #expect(await session.confirmedState == second)
        #expect(await Self.corrections(session).isEmpty)
        await session.close()
    }

    /// `states()` gives every state shown, in order: the first, each tap at once, a correction's
    /// state, and a new session's first state after a restart, which `.restarted` carries too.
    @Test func statesStreamEveryShownState() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "sol", store: store))
        #expect(await Self.engineLoaded(session))
        let states = await session.states()
        let collected = Task { () -> [NavigationState] in
            var seen: [NavigationState] = []
            for await state in states { seen.append(state) }
            return seen
        }
        let second = try await session.send(FlowAction(type: "onboarding.showSecond"))
        let home = try await session.send(FlowAction(type: "onboarding.completed"))
        await session.settled()
        // Support ends the session; the next tap finds it gone and the client starts a new one.
        let token = try #require(try store.only()?.token)
        let (status, _) = try await server.request("DELETE", "/v1/sessions/\(session.sessionId)", token: token)
        #expect(status == 204)
        _ = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
        await session.settled()
        let restart = try #require(await session.lastRestart)
        #expect(restart.state.version == 0 && restart.state.sessionId == session.sessionId)
        #expect(restart.dropped.map(\.action.type) == ["home.selectTab"])
        #expect(await session.state == restart.state)
        await session.close()
        let seen = await collected.value
        #expect(seen.first?.features == ["onboarding.first"])
        #expect(seen.contains(second) && seen.contains(home))
        #expect(seen.last == restart.state, "\(seen.map(\.features))")
        for (earlier, later) in zip(seen, seen.dropFirst()) { #expect(earlier != later) }
        let order = [seen.firstIndex(of: second), seen.firstIndex(of: home), seen.lastIndex(of: restart.state)].compactMap { $0 }
        #expect(order == order.sorted() && order.count == 3)
    }

    /// A client made again from the same store (the app was killed) resumes the same session at
    /// its version.
    @Test func resumesAfterTheAppIsKilled() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let first = try await FlowSession.start(Self.configuration(server, user: "kim", store: store))
        _ = try await first.send(FlowAction(type: "onboarding.showSecond"))
        await first.settled()
        await first.close()
        let second = try await FlowSession.start(Self.configuration(server, user: "kim", store: store))
        #expect(second.sessionId == first.sessionId)
        #expect(await second.state.version == 1)
        #expect(await second.state.features == ["onboarding.first", "onboarding.second"])
        #expect(await second.restartReason == nil)
        // The bundle the store kept is at the server's version: the engine is there at once.
        #expect(await second.hasLocalEngine)
        let home = try await second.send(FlowAction(type: "onboarding.completed"))
        #expect(home.features == ["home.first"] && home.version == 2)
        await second.settled()
        #expect(await second.confirmedState == home)
        #expect(await Self.corrections(second).isEmpty)
        await second.close()
    }

    /// A kept session the server deleted is replaced by a new one, and the client says so.
    @Test func aDeletedSessionStartsAnew() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let first = try await FlowSession.start(Self.configuration(server, user: "lee", store: store))
        let token = try #require(try store.only()?.token)
        let (status, _) = try await server.request("DELETE", "/v1/sessions/\(first.sessionId)", token: token)
        #expect(status == 204)
        await first.close()
        let second = try await FlowSession.start(Self.configuration(server, user: "lee", store: store))
        #expect(second.sessionId != first.sessionId)
        let reason = try #require(await second.restartReason)
        #expect(reason.contains("404") || reason.contains("401"))
        #expect(await second.history.contains { if case .restarted(let restart) = $0 { restart.reason == reason } else { false } })
        #expect(try store.only()?.sessionId == second.sessionId)
        await second.close()
    }

    /// A session deleted while in use: the next post is answered 404 for the session itself, so
    /// the client starts a new session and says so, rather than treating it as a refused tap.
    @Test func aSessionDeletedInUseStartsAnew() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "sam", store: store))
        #expect(await Self.engineLoaded(session))
        let first = session.sessionId
        let token = try #require(try store.only()?.token)
        let (status, _) = try await server.request("DELETE", "/v1/sessions/\(first)", token: token)
        #expect(status == 204)
        _ = try await session.send(FlowAction(type: "onboarding.showSecond"))
        await session.settled()
        #expect(session.sessionId != first)
        let reason = try #require(await session.restartReason)
        #expect(reason.contains(first) && (reason.contains("404") || reason.contains("401")), "\(reason)")
        #expect(await session.history.contains { if case .restarted(let restart) = $0 { restart.reason == reason } else { false } })
        #expect(await Self.corrections(session).isEmpty)
        #expect(try store.only()?.sessionId == session.sessionId)
        let fresh = await session.state
        #expect(fresh.version == 0 && fresh.features == ["onboarding.first"])
        // The new session works: its bundle loads and a tap is confirmed on it.
        #expect(await Self.engineLoaded(session))
        let next = try await session.send(FlowAction(type: "onboarding.showSecond"))
        await session.settled()
        #expect(await session.confirmedState == next && next.sessionId == session.sessionId)
        await session.close()
    }

    /// With the server down, taps keep working on the local engine and are queued in the store;
    /// when the server is back (same database and port) they are sent and confirmed, and a
    /// client made again from the store after a kill sends what it kept.
    @Test func offlineTapsAreQueuedAndSentWhenBack() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "max", store: store))
        #expect(await Self.engineLoaded(session))
        server.stop()
        let second = try await session.send(FlowAction(type: "onboarding.showSecond"))
        #expect(second.features == ["onboarding.first", "onboarding.second"])
        #expect(await eventually { await session.isOffline })
        let home = try await session.send(FlowAction(type: "onboarding.completed"))
        #expect(home.features == ["home.first"])
        #expect(try store.only()?.queue.map(\.action.type) == ["onboarding.showSecond", "onboarding.completed"])
        try server.start()
        #expect(await eventually(.seconds(15)) { let pending = await session.pendingCount; let offline = await session.isOffline; return pending == 0 && !offline })
        await session.settled()
        #expect(await session.confirmedState.version == 2)
        #expect(await session.confirmedState == home)
        #expect(await session.history.contains(.confirmed(home)))  // `refused: null` is no refusal
        #expect(await Self.corrections(session).isEmpty)
        #expect(try store.only()?.queue.isEmpty == true)
        // They went as one batch: the action log keeps each item's client time.
        let token = try #require(try store.only()?.token)
        let (status, log) = try await server.request("GET", "/v1/sessions/\(session.sessionId)/actions", token: token)
        #expect(status == 200)
        #expect(log.components(separatedBy: "\"clientAt\"").count - 1 == 2, "\(log)")

        // Killed while offline: the queue is in the store, and the next launch sends it.
        await session.setOffline(true)
        _ = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
        #expect(try store.only()?.queue.count == 1)
        await session.close()
        let relaunched = try await FlowSession.start(Self.configuration(server, user: "max", store: store))
        #expect(await relaunched.state.features == ["home.second"])  // replayed on the bundle, before any answer
        await relaunched.settled()
        #expect(await relaunched.confirmedState.version == 3)
        #expect(await relaunched.state.features == ["home.second"])
        #expect(try store.only()?.queue.isEmpty == true)
        await relaunched.close()
    }

    /// Killed after the server applied the kept taps and before their answer came: the next
    /// launch cannot replay them on the bundle (the server is past them), but once they are
    /// answered (as already applied) the bundle loads, and the next tap is shown at once.
    @Test func relaunchAfterKeptTapsWereAppliedGetsItsEngineBack() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let first = try await FlowSession.start(Self.configuration(server, user: "ivo", store: store))
        #expect(await Self.engineLoaded(first))
        await first.setOffline(true)
        _ = try await first.send(FlowAction(type: "onboarding.showSecond"))
        _ = try await first.send(FlowAction(type: "onboarding.completed"))
        _ = try await first.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
        await first.close()
        let kept = try #require(try store.only())
        #expect(kept.queue.count == 3)
        // The batch that was on the wire when the app was killed: the server applied it, the answer was lost.
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("actions")
        writer.beginArray()
        for item in kept.queue {
            writer.beginObject()
            writer.writeKey("key")
            writer.writeString(item.key)
            writer.writeKey("version")
            writer.writeInteger(item.version)
            writer.writeKey("action")
            writer.writeValue(item.action.json)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        let (status, body) = try await server.request("POST", "/v1/sessions/\(kept.sessionId)/actions/batch", token: kept.token,
                                                      body: String(decoding: writer.takeBytes(), as: UTF8.self))
        #expect(status == 200, "\(body)")

        // Each request takes a second, so a tap that waited for its answer cannot look shown.
        let session = try await FlowSession.start(Self.configuration(server, user: "ivo", store: store, latency: .seconds(1)))
        await session.settled()
        #expect(await session.pendingCount == 0, "the kept taps were answered as already applied")
        #expect(await session.confirmedState.version == 3)
        #expect(await session.state.top?.feature == "home.second")
        #expect(await eventually(.seconds(10)) { await session.hasLocalEngine }, "the bundle at the confirmed version loaded")
        let shown = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 0]))
        #expect(await session.pendingCount > 0, "the tap waited for the network")
        #expect(shown.top?.feature == "home.first")
        await session.settled()
        #expect(await session.confirmedState == shown)
        #expect(await Self.corrections(session).isEmpty)
        let (logStatus, log) = try await server.request("GET", "/v1/sessions/\(kept.sessionId)/actions", token: kept.token)
        #expect(logStatus == 200)
        let types = try JSONParser.parse(Array(log.utf8))["actions"]?.arrayValue?.compactMap { $0["type"]?.stringValue }
        #expect(types == ["onboarding.showSecond", "onboarding.completed", "home.selectTab", "home.selectTab"], "\(log)")
        await session.close()
    }

    /// Killed while offline and started again while still offline: the client starts from the
    /// store (confirmed state, bundle, queue replayed), shows what was last shown, and keeps
    /// working offline; when the server is back, the taps from before and after the kill go as
    /// one batch and are confirmed.
    @Test func startsAgainWhileStillOffline() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let (id, lastShown) = try await { () async throws -> (String, NavigationState) in
            let session = try await FlowSession.start(Self.configuration(server, user: "ria", store: store))
            #expect(await Self.engineLoaded(session))
            let second = try await session.send(FlowAction(type: "onboarding.showSecond"))
            await session.settled()
            #expect(await session.confirmedState == second)
            server.stop()
            let home = try await session.send(FlowAction(type: "onboarding.completed"))
            #expect(home.features == ["home.first"])
            #expect(await eventually { await session.isOffline })
            await session.close()
            return (session.sessionId, home)  // the client is dropped here: the app was killed
        }()
        let kept = try #require(try store.only())
        #expect(kept.confirmed?["version"]?.integerValue == 1)
        #expect(kept.bundle != nil)

        let relaunched = try await FlowSession.start(Self.configuration(server, user: "ria", store: store))
        #expect(relaunched.sessionId == id)
        #expect(await relaunched.isOffline)
        #expect(await relaunched.history.contains(.offline))
        #expect(await relaunched.hasLocalEngine)
        #expect(await relaunched.confirmedState.version == 1)
        #expect(await relaunched.state == lastShown)
        #expect(await relaunched.pendingCount == 1)
        let tab = try await relaunched.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
        #expect(await relaunched.pendingCount == 2, "the tap was queued, not waited for")
        #expect(tab.features == ["home.second"] && tab.version == 3)
        #expect(try store.only()?.queue.map(\.action.type) == ["onboarding.completed", "home.selectTab"])

        try server.start()
        #expect(await eventually(.seconds(15)) { let pending = await relaunched.pendingCount; let offline = await relaunched.isOffline; return pending == 0 && !offline })
        await relaunched.settled()
        #expect(await relaunched.confirmedState == tab)
        #expect(await relaunched.state == tab)
        #expect(await Self.corrections(relaunched).isEmpty)
        #expect(try store.only()?.queue.isEmpty == true)
        #expect(try store.only()?.confirmed?["version"]?.integerValue == 3)
        let (status, log) = try await server.request("GET", "/v1/sessions/\(id)/actions", token: kept.token)
        #expect(status == 200)
        // The two offline taps went as one batch (each with its client time); the first was posted online.
        #expect(log.components(separatedBy: "\"clientAt\":\"").count - 1 == 2, "\(log)")
        #expect(log.components(separatedBy: "\"clientAt\":null").count - 1 == 1, "\(log)")
        for type in ["onboarding.showSecond", "onboarding.completed", "home.selectTab"] { #expect(log.contains(type), "\(log)") }
        await relaunched.close()
    }

    /// A store that fails at the first launch (a full disk, a keychain error): `start` still
    /// returns the session the server made, with its state to draw; the session is stored by the
    /// first save that succeeds (here the next tap's), and the next launch resumes it.
    @Test func aStoreFailingAtFirstLaunchDoesNotFailStart() async throws {
        let server = try ServerProcess()
        let kept = MemorySessionStore()
        let store = RefusingDisk(kept, full: true)
        let session = try await FlowSession.start(Self.configuration(server, user: "eda", store: store))
        #expect(await session.state.top?.feature == "onboarding.first")
        #expect(await Self.engineLoaded(session))
        #expect(store.refusals > 0)
        #expect(kept.all.isEmpty, "nothing could be stored")
        store.isFull = false
        let second = try await session.send(FlowAction(type: "onboarding.showSecond"))
        #expect(second.top?.feature == "onboarding.second")
        let saved = try #require(kept.all.first, "the tap's save stored the session")
        let token = await session.token
        #expect(saved.sessionId == session.sessionId && saved.token == token)
        await session.settled()
        #expect(await session.confirmedState == second)
        await session.close()
        #expect(kept.all.first?.confirmed?["version"]?.integerValue == 1)
        let relaunched = try await FlowSession.start(Self.configuration(server, user: "eda", store: store))
        #expect(relaunched.sessionId == session.sessionId)
        #expect(await relaunched.state == second)
        await relaunched.close()
    }

    /// A store that refuses saves for a while and then takes them: the session records why
    /// (`lastStoreError`) and tries again with backoff, so the session and a tap made meanwhile are
    /// stored without another change, and the session goes on after a relaunch.
    @Test func aStoreThatRecoversIsWrittenWithoutAnotherChange() async throws {
        let server = try ServerProcess()
        let kept = MemorySessionStore()
        let store = RefusingDisk(kept, full: true)
        let session = try await FlowSession.start(Self.configuration(server, user: "fay", store: store))
        #expect(await session.lastStoreError is RefusingDisk.Full)
        #expect(await Self.engineLoaded(session))
        let second = try await session.send(FlowAction(type: "onboarding.showSecond"))
        await session.settled()
        #expect(kept.all.isEmpty)
        let failed = store.refusals
        store.isFull = false
        #expect(await eventually(.seconds(10)) { kept.all.first?.confirmed?["version"]?.integerValue == 1 },
                "the retry stored the session at the tap's version, with no tap or answer after the store recovered")
        #expect(store.refusals >= failed)
        #expect(kept.all.first?.sessionId == session.sessionId)
        await session.close()
        let relaunched = try await FlowSession.start(Self.configuration(server, user: "fay", store: store))
        #expect(relaunched.sessionId == session.sessionId)
        #expect(await relaunched.state == second)
        await relaunched.close()
    }

    /// A store file written before the confirmed state and the bundle were kept still loads (and
    /// resumes online as before); one with them round-trips; a corrupt one is no session.
    @Test func storeFilesStayReadable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileSessionStore(path: directory.appendingPathComponent("session.json").path)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let old = #"{"server":"http://127.0.0.1:8080","sessionId":"s_1","token":"t_1","userId":"kim","queue":[{"key":"k1","version":0,"action":{"type":"onboarding.showSecond"},"at":"2026-11-25T18:00:00.000Z"}]}"#
        try Data(old.utf8).write(to: URL(fileURLWithPath: store.path))
        let kept = try #require(try store.only())
        #expect(kept.sessionId == "s_1" && kept.token == "t_1" && kept.queue.map(\.action.type) == ["onboarding.showSecond"])
        #expect(kept.confirmed == nil && kept.bundle == nil && kept.bundleTag == nil)

        var next = kept
        next.confirmed = ["sessionId": "s_1", "version": 1]
        next.bundle = Array(#"{"format":1,"sessionId":"s_1"}"#.utf8)
        next.bundleTag = "\"1-abc\""
        try store.save(next)
        let again = try #require(try FileSessionStore(path: store.path).only())  // read again from the file, as a new launch does
        #expect(again.confirmed == next.confirmed && again.bundleTag == next.bundleTag && again.queue == next.queue)
        #expect(try again.bundle.map { try JSONParser.parse($0) } == (try JSONParser.parse(#"{"format":1,"sessionId":"s_1"}"#.utf8)))

        try Data("{\"server\": tru".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(try FileSessionStore(path: store.path).only() == nil)
    }

    /// An offline tap the server refuses (another device moved the session meanwhile) is rolled
    /// back to the server's state and reported with the taps it did not take.
    @Test func aRefusedOfflineTapRollsBack() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "noa", store: store))
        #expect(await Self.engineLoaded(session))
        await session.setOffline(true)
        _ = try await session.send(FlowAction(type: "onboarding.showSecond"))
        _ = try await session.send(FlowAction(type: "onboarding.completed"))
        let token = try #require(try store.only()?.token)
        let id = session.sessionId
        let (status, body) = try await server.request("POST", "/v1/sessions/\(id)/actions", token: token, body: #"{"type":"onboarding.showSecond"}"#)
        #expect(status == 200, "\(body)")
        await session.setOffline(false)
        await session.settled()
        #expect(await session.state.features == ["onboarding.first", "onboarding.second"])
        #expect(await session.state.version == 1)
        let corrections = await Self.corrections(session)
        #expect(corrections.count == 1)
        // The batch stopped at its first item (412: the session had moved on), so neither was taken.
        #expect(corrections.first?.refused == [FlowAction(type: "onboarding.showSecond"), FlowAction(type: "onboarding.completed")])
        #expect(corrections.first?.problem?["status"]?.integerValue == 412)
        #expect(corrections.first?.from.features == ["home.first"])
        await session.close()
    }

    /// A subscriber that reads nothing while thousands of events come loses none of them: the
    /// correction that came first (a refused tap) is still there when it reads at last.
    @Test func aSubscriberFarBehindLosesNoEvent() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "lev", store: store))
        #expect(await Self.engineLoaded(session))
        let events = await session.events()
        await session.setOffline(true)
        _ = try await session.send(FlowAction(type: "onboarding.showSecond"))
        let token = try #require(try store.only()?.token)
        let (status, body) = try await server.request("POST", "/v1/sessions/\(session.sessionId)/actions", token: token,
                                                      body: #"{"type":"onboarding.showSecond"}"#)
        #expect(status == 200, "\(body)")
        await session.setOffline(false)
        await session.settled()
        #expect(await Self.corrections(session).count == 1)
        for _ in 0..<1_500 {  // 3,000 events: offline, online, ...
            await session.setOffline(true)
            await session.setOffline(false)
        }
        await session.close()
        var corrections = 0
        var received = 0
        for await event in events {
            received += 1
            if case .corrected = event { corrections += 1 }
        }
        #expect(corrections == 1, "the correction came first and was kept")
        #expect(received > 3_000)
    }

    /// Another device acts first: the tap shown is corrected to the server's state (412, then
    /// the state read again), and the next tap runs on the reloaded bundle.
    @Test func anotherDeviceActingIsACorrection() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "ola", store: store))
        #expect(await Self.engineLoaded(session))
        let token = try #require(try store.only()?.token)
        let id = session.sessionId
        for type in ["onboarding.showSecond", "onboarding.completed"] {
            _ = try await server.request("POST", "/v1/sessions/\(id)/actions", token: token, body: #"{"type":"\#(type)"}"#)
        }
        let shown = try await session.send(FlowAction(type: "onboarding.showSecond"))
        #expect(shown.features == ["onboarding.first", "onboarding.second"])
        await session.settled()
        let corrections = await Self.corrections(session)
        #expect(corrections.count == 1)
        #expect(corrections.first?.reason == .versionMismatch)
        #expect(corrections.first?.to.features == ["home.first"])
        #expect(await session.state.version == 2)
        #expect(await Self.engineLoaded(session))
        let next = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
        #expect(next.features == ["home.second"])
        await session.settled()
        #expect(await session.confirmedState == next)
        await session.close()
    }

    /// Following the event stream, the client adopts versions another device makes.
    @Test func followsAnotherDevice() async throws {
        let server = try ServerProcess()
        let store = FileSessionStore(path: Self.storePath(server))
        let session = try await FlowSession.start(Self.configuration(server, user: "pia", store: store))
        await session.follow()
        let token = try #require(try store.only()?.token)
        let id = session.sessionId
        try await Task.sleep(for: .milliseconds(300))
        let (status, _) = try await server.request("POST", "/v1/sessions/\(id)/actions", token: token, body: #"{"type":"onboarding.showSecond"}"#)
        #expect(status == 200)
        #expect(await eventually { await session.state.version == 1 })
        #expect(await session.state.features == ["onboarding.first", "onboarding.second"])
        #expect(await session.history.contains { if case .remote = $0 { true } else { false } })
        // The bundle is fetched again, so the next tap runs locally on the new version.
        #expect(await eventually { await session.hasLocalEngine })
        let home = try await session.send(FlowAction(type: "onboarding.completed"))
        #expect(home.features == ["home.first"])
        await session.settled()
        #expect(await session.confirmedState == home)
        await session.close()
    }

    /// Flags and variants read typed from the session (on the database the run asked for).
    @Test func flagsAreTyped() async throws {
        let server = try ServerProcess()
        let postgres = ProcessInfo.processInfo.environment["FLOWSTACK_TEST_DB_KIND"] == "postgresql"
        #expect(server.listening.contains(postgres ? "(database postgresql://" : "db.sqlite"), "\(server.listening)")
        var configuration = Self.configuration(server)
        configuration.attributes = ["country": "DE"]
        let session = try await FlowSession.start(configuration)
        let flags = await session.flags
        #expect(flags.bool("eu-face-scan") == true)
        #expect(flags.flagVariant("eu-face-scan") == "on")
        #expect(flags.string("eu-face-scan") == nil)
        #expect(flags.bool("no-such-flag", default: false) == false)
        await session.close()
    }
}

extension FileSessionStore {
    /// The one session a test's store file holds (its tests start one server and one user).
    func only() throws -> StoredSession? { try all().last }
}

// FlowSession itself under seeded schedules: the actor's drain loop, retries, probe, start and
// store, over a simulated transport (lost requests and answers, 500s, 502s and bodies that are
// not JSON before and after commits, the server down, the app killed and started again with
// another spelling of the server's address, started while every answer is a 500, and a disk that
// fills up for stretches and refuses every save). The machine simulation (ClientSimulationTests)
// explores the decisions exhaustively; this one checks that the driver performs them without
// losing or doubling a tap (but for one made while the disk was full and killed with the app).
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import Testing
import TestSupport

@Suite(.serialized, .enabled(if: simulationRuns))
struct FlowSessionSimulationTests {
    struct Outcome: CustomStringConvertible {
        var seed: UInt64
        var made = 0
        var stored = 0
        var reported = 0
        /// Taps a full disk lost: never in a save the store took, never sent, and the app killed
        /// while its last save was refused.
        var lost = 0
        var launches = 0
        var faults = 0
        /// Saves the full disk refused.
        var refusals = 0
        var failures: [String] = []
        var description: String {
            "seed \(seed): \(made) taps made, \(stored) stored, \(reported) reported not taken, \(lost) lost with the disk full, "
                + "\(launches) launches, \(faults) faults, \(refusals) saves refused"
                + (failures.isEmpty ? "" : "; FAILED: " + failures.joined(separator: "; "))
        }
    }

    /// Equivalent spellings of one server: every launch must find the session the last one kept.
    static let spellings = ["http://sim.test", "HTTP://Sim.Test:80/", "http://sim.test/", "http://SIM.test:80"]

    /// Events of one launch, collected as they come.
    actor Collector {
        static func describe(_ event: ClientEvent) -> String {
            switch event {
            case .confirmed(let state): return "confirmed v\(state.version)"
            case .corrected(let c) where c.from != c.to && c.from.version == c.to.version:
                var lines: [String] = []
                for member in c.from.document.objectValue?.members ?? [] where member.value != c.to.document[member.key] {
                    lines.append("\(member.key): \(member.value) ≠ \(c.to.document[member.key] ?? nil)")
                }
                return "corrected \(c.reason.rawValue) same version, differs in \(lines)"
            case .corrected(let c): return "corrected \(c.reason.rawValue) \(c.taps.map { "\($0.key.prefix(4)) \($0.action.type) v\($0.version)" }) from v\(c.from.version) to v\(c.to.version) \(c.problem?["detail"]?.stringValue ?? "")"
            case .restarted(let r): return "restarted \(r.reason)"
            case .remote(let state): return "remote v\(state.version)"
            case .offline: return "offline"
            case .online: return "online"
            }
        }
        var reported = Set<String>()
        /// Why each correction came, and in which launch (counted from 1).
        var corrections: [(reason: String, launch: Int)] = []
        /// The newest version the server confirmed in each launch (a restart starts it again: a new session).
        var confirmed: [Int: Int] = [:]
        /// A launch whose confirmed state went back: an answer the server replayed for a tap it
        /// stored long ago, taken as news.
        var wentBack: [String] = []
        func take(_ event: ClientEvent, launch: Int) {
            FlowSessionSimulationTests.trace("event \(Self.describe(event))")
            switch event {
            case .corrected(let correction):
                for tap in correction.taps { reported.insert(tap.key) }
                corrections.append((correction.reason.rawValue, launch))
            case .restarted(let restart):
                for tap in restart.dropped { reported.insert(tap.key) }
                corrections.append(("restarted", launch))
                confirmed[launch] = restart.state.version
            case .confirmed(let state), .remote(let state):
                if let newest = confirmed[launch], state.version < newest {
                    wentBack.append("launch \(launch): the confirmed state went back from v\(newest) to v\(state.version)")
                }
                confirmed[launch] = max(confirmed[launch] ?? 0, state.version)
            default:
                break
            }
        }
    }

    /// FLOWSTACK_SIM_TRACE=1: print what each schedule does.
    static let tracing = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_TRACE"] != nil
    static func trace(_ line: @autoclosure () -> String) { if tracing { print("  " + line()) } }

    static func schedule(seed: UInt64, usesBundle: Bool) async throws -> Outcome {
        var outcome = Outcome(seed: seed)
        var random = SeededGenerator(seed: seed)
        let server = SimulatedServer(catalog: SimulatedServer.sampleCatalog)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = FileSessionStore(path: directory.appendingPathComponent("sessions.json").path)
        let disk = RefusingDisk(file)
        // The disk fills up from its own seed, so the schedule's taps, kills and outages are
        // those it drew before the disk could fill.
        var diskRandom = SeededGenerator(seed: seed ^ 0x6469_736b_6675_6c6c)
        var fullFor = 0
        // Half the times the disk has room again, the app is killed right after the next tap: its
        // save is the first one taken after the refused ones, and what it holds may not be sent.
        var killAfterTap = false
        var tappedWithRoom = false
        let collector = Collector()
        let target = 15 + Int(random.next() % 25)
        // What each launch asked its store to keep, whether its kill came with its last save
        // refused, the taps its app still held when killed (the only ones a refused save can
        // lose), and whether it started from a store that missed taps the server has (a kill with
        // a save refused): kept taps made on states the server has left, refused with a 412.
        var launched: [(store: KillableStore, killedUnsaved: Bool, held: Set<String>, stale: Bool)] = []

        func launch(failingStart: Bool) async throws -> (FlowSession, SimulatedTransport, KillableStore, Task<Void, Never>) {
            let transport = SimulatedTransport(server: server, seed: random.next())
            let store = KillableStore(disk)
            let spelling = spellings[Int(random.next() % UInt64(spellings.count))]
            // Whether the store missed what the app did last: the server applied a tap no save the
            // store took held, past the confirmed state it kept; or it keeps taps the server has not
            // applied, made on a state the server has left.
            var stale = false
            if let before = try? file.all().first, let live = server.session(before.sessionId) {
                let saved = disk.saved
                let keptVersion = before.confirmed?["version"]?.integerValue ?? -1
                let log = server.withLock { server.log }
                stale = log.contains { $0.session == before.sessionId && $0.version > keptVersion && $0.key.map { !saved.contains($0) } == true }
                    || before.queue.contains { item in
                        !log.contains { $0.session == before.sessionId && $0.key == item.key } && item.version < live.state.version
                    }
            }
            // A start while no server answers: connection refused, or a 500 to everything.
            if failingStart {
                if random.next() % 2 == 0 { server.down = true } else { transport.failEverything(true) }
            }
            let session = try await FlowSession.start(FlowSession.Configuration(
                server: URL(string: spelling)!, userId: "ada", store: store,
                retry: RetryPolicy(attempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(8)),
                usesBundle: usesBundle, transport: transport))
            server.down = false
            transport.failEverything(false)
            outcome.launches += 1
            if tracing {
                let (shown, pending) = (await session.state.version, await session.pending)
                trace("launched: shows v\(shown), pending \(pending.map { "\($0.key.prefix(4)) v\($0.version)\($0.expected == nil ? " blind" : "")" })")
            }
            let events = await session.events()
            launched.append((store, false, [], stale))
            let number = launched.count
            let task = Task { for await event in events { await collector.take(event, launch: number) } }
            for event in await session.history { await collector.take(event, launch: number) }  // what start reported before the subscription
            return (session, transport, store, task)
        }

        var (session, transport, store, events) = try await launch(failingStart: false)
        while outcome.made < target {
            // A full disk: a stretch of a few steps, begun at random, in which every save is refused.
            if fullFor > 0 {
                fullFor -= 1
                if fullFor == 0 {
                    disk.isFull = false
                    killAfterTap = diskRandom.next() % 2 == 0
                    trace("disk has room")
                }
            } else if diskRandom.next() % 100 < 8 {
                fullFor = 2 + Int(diskRandom.next() % 6)
                disk.isFull = true
                trace("disk full for \(fullFor) steps")
            }
            if (killAfterTap && tappedWithRoom) || random.next() % 100 < 6 {
                (killAfterTap, tappedWithRoom) = (false, false)
                // Killed: nothing more is sent or written; started again from the store, with
                // another spelling of the server, and now and then while no server answers.
                trace("kill")
                transport.kill()
                launched[launched.count - 1].killedUnsaved = store.kill()
                launched[launched.count - 1].held = Set(await session.pending.map(\.key))
                outcome.faults += transport.faultsInjected
                await session.close()
                await events.value
                let failing = random.next() % 4 == 0
                (session, transport, store, events) = try await launch(failingStart: failing)
                continue
            }
            if random.next() % 100 < 4 { server.withLock { server.down.toggle() } }
            let action = await Self.chooseAction(session, random: &random)
            do {
                let shown = try await session.send(action)
                trace("tap \(action.type) shown v\(shown.version) \(shown.top?.feature ?? "")")
                outcome.made += 1
                tappedWithRoom = killAfterTap
            } catch is FlowError {
                // The local engine refused it: nothing was queued, as the server would refuse it too.
            } catch is ActionRefused {
                outcome.made += 1  // a tap that waited, refused by the server: reported
            } catch is Unreachable {
                outcome.made += 1  // a tap that waited, offline: it stays queued
            }
            if tracing {
                let pending = await session.pending
                trace("after \(action.type): pending \(pending.map { "\($0.key.prefix(4)) v\($0.version)\($0.expected == nil ? " blind" : "")" })")
            }
            if !tappedWithRoom && random.next() % 3 == 0 { try? await Task.sleep(for: .microseconds(random.next() % 2_000)) }
        }
        server.withLock { server.down = false }
        transport.heal()
        disk.isFull = false
        outcome.faults += transport.faultsInjected
        let settled = await Self.settle(session)
        if !settled { outcome.failures.append("did not settle in 20 s (\(await session.pendingCount) queued, offline \(await session.isOffline))") }
        await session.close()
        await events.value

        let counts = server.keyCounts()
        let reported = await collector.reported
        let storedKeys = Set(counts.all.keys)
        outcome.stored = storedKeys.count
        outcome.reported = reported.subtracting(storedKeys).count
        outcome.refusals = disk.refusals
        for (key, count) in counts.all where count > 1 { outcome.failures.append("key \(key) stored \(count) times") }
        for key in reported.intersection(Set(counts.live.keys)) { outcome.failures.append("key \(key) stored but reported not taken") }
        // A tap the store took survives any kill: it reaches the server once, or is reported.
        let saved = disk.saved
        for key in saved.subtracting(storedKeys).subtracting(reported).sorted() {
            outcome.failures.append("key \(key.prefix(8)) was in a save the store took, and was neither stored nor reported")
        }
        // Every tap a launch made was in a save it asked for (taken or refused); one neither
        // stored nor reported is lost only the way a full disk loses it: its launch was killed with
        // its last save refused, while the app still held it (a tap the client let go of before
        // the kill, unsent and unreported, is the client's loss, not the disk's).
        for (index, launch) in launched.enumerated() {
            for key in launch.store.asked.subtracting(storedKeys).subtracting(reported).subtracting(saved).sorted() {
                if launch.killedUnsaved && launch.held.contains(key) {
                    outcome.lost += 1
                } else {
                    let why = index + 1 == launched.count ? "the last launch"
                        : launch.killedUnsaved ? "let go of before the kill" : "killed with its last save taken"
                    outcome.failures.append("key \(key.prefix(8)) of launch \(index + 1) was neither stored nor reported, and no kill "
                        + "came while its save was refused and the app held it (\(why))")
                }
            }
        }
        if outcome.made != outcome.stored + outcome.reported + outcome.lost {
            let missing = outcome.made - outcome.stored - outcome.reported - outcome.lost
            outcome.failures.append("\(outcome.made) taps made, \(outcome.stored) stored, \(outcome.reported) reported, "
                + "\(outcome.lost) lost with the disk full: \(missing) lost otherwise")
        }
        // Once a kill came with a save refused, the store missed what the app did last, and a
        // launch that starts from it (and the ones after, until one sends what it kept, which may
        // be several offline ones) posts kept taps made on states the server has left, and taps
        // queued behind them: a 412, in such a launch only. Any other correction needs someone
        // else on the session.
        let firstStale = (launched.firstIndex(where: \.killedUnsaved) ?? launched.count) + 2
        let reasons = await collector.corrections.filter {
            $0.reason != "refused" && !($0.reason == "versionMismatch" && $0.launch >= firstStale && launched[$0.launch - 1].stale)
        }
            .map { "\($0.reason) in launch \($0.launch)" }
        if !reasons.isEmpty { outcome.failures.append("corrections with nobody else on the session: \(reasons)") }
        outcome.failures += await collector.wentBack.prefix(2)
        if settled, let live = server.session(session.sessionId), let state = try? NavigationState(live.state) {
            if await session.state != state { outcome.failures.append("shows v\(await session.state.version), the server is at v\(state.version)") }
        }
        // (A creation whose 201 was lost is sent again and leaves an unused session on the server:
        // POST /v1/sessions takes no Idempotency-Key. No tap is ever made on it.)
        let used = Set(server.withLock { server.log.map(\.session) })
        if used.count > 1 { outcome.failures.append("taps went to \(used.count) sessions of one user on one server: \(used.sorted())") }
        if try file.all().count != 1 { outcome.failures.append("the store holds \(try file.all().count) sessions") }
        return outcome
    }

    /// Whether `session` settled (nothing queued or on the wire) within 20 seconds.
    static func settle(_ session: FlowSession) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await session.settled(); return true }
            group.addTask { try? await Task.sleep(for: .seconds(20)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    static func chooseAction(_ session: FlowSession, random: inout SeededGenerator) async -> FlowAction {
        let available = await session.availableActions.filter { !FlowAction(type: $0.type).isInteractionAction && $0.type != "link" }
        let state = await session.state
        let candidates: [FlowAction]
        if !available.isEmpty {
            candidates = available.map { entry in
                var params = JSONObject()
                for param in entry.params where param.required {
                    params[param.name] = param.name == "index" ? .integer(state.top?.feature == "home.first" ? 1 : 0) : "sample"
                }
                return FlowAction(type: entry.type, params: params)
            }
        } else {
            // What the sample app's screen on top offers (the client has neither engine nor
            // prediction for it yet); the server decides.
            switch state.top?.feature {
            case "onboarding.first": candidates = [FlowAction(type: "onboarding.showSecond")]
            case "onboarding.second": candidates = [FlowAction(type: "onboarding.completed"), FlowAction(type: "back")]
            case "home.first", "home.second":
                candidates = [FlowAction(type: "home.selectTab", params: ["index": .integer(state.top?.feature == "home.first" ? 1 : 0)]),
                              FlowAction(type: "home.presentModal", params: ["content": "Hi"])]
            case "modal": candidates = [FlowAction(type: "modal.dismiss")]
            default: candidates = [FlowAction(type: "back")]
            }
        }
        return candidates[Int(random.next() % UInt64(candidates.count))]
    }

    /// 60 schedules with the local engine and 20 with predictions only.
    /// A transport that answers every request the same way.
    struct Fixed: FlowTransport {
        var answer: FlowAnswer?
        func send(_ request: FlowRequest) async throws -> FlowAnswer {
            guard let answer else { throw Unreachable(detail: "connection refused") }
            return answer
        }
    }

    static func start(_ transport: any FlowTransport, store: any SessionStore = MemorySessionStore()) async throws -> FlowSession {
        try await FlowSession.start(FlowSession.Configuration(
            server: URL(string: "http://sim.test")!, userId: "ada", store: store,
            retry: RetryPolicy(attempts: 2, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(2)), transport: transport))
    }

    /// A first launch with no working server throws ``Unreachable``, an app can catch it by type;
    /// a refusal throws ``FlowSession/Failure`` with the server's detail, or the start of a body
    /// that is not a problem document.
    @Test func startFailuresAreTyped() async throws {
        await #expect(throws: Unreachable.self) { _ = try await Self.start(Fixed(answer: nil)) }
        let html = FlowAnswer(status: 500, contentType: "text/html", body: Array("<html>Internal Server Error</html>".utf8))
        do {
            _ = try await Self.start(Fixed(answer: html))
            Issue.record("started on a 500")
        } catch let error as Unreachable {
            #expect(error.detail.contains("500"), "\(error)")
        }
        let problem = FlowAnswer(status: 422, contentType: "application/problem+json",
                                 body: Array(#"{"type":"https://flowstack.dev/problems/unsupported-client","status":422,"detail":"update the app"}"#.utf8))
        do {
            _ = try await Self.start(Fixed(answer: problem))
            Issue.record("started on a 422")
        } catch let error as FlowSession.Failure {
            #expect(error.status == 422 && "\(error)" == "FlowStack answered 422: update the app")
        }
        // A proxy's page where FlowStack's answer should be: no working server, said plainly.
        let page = FlowAnswer(status: 201, contentType: "text/html", body: Array("<html>Welcome to nginx</html>".utf8))
        do {
            _ = try await Self.start(Fixed(answer: page))
            Issue.record("started on a page")
        } catch let error as Unreachable {
            #expect(error.detail == "status 201 with a body that is not a JSON object", "\(error)")
        }
        // A 201 that is JSON but not a session: refused, showing what came.
        do {
            _ = try await Self.start(Fixed(answer: FlowAnswer(status: 201, body: Array(#"{"hello":"world"}"#.utf8))))
            Issue.record("started on an answer without a session")
        } catch let error as FlowSession.Failure {
            #expect("\(error)".contains(#"{"hello":"world"}"#), "\(error)")
        }
    }

    /// A kept session, and a server answering 500 to everything: the app starts from the store,
    /// offline, showing what it kept, and sends its queue once the server works again.
    @Test func startsFromTheStoreWhenTheServerFails() async throws {
        let server = SimulatedServer(catalog: SimulatedServer.sampleCatalog)
        let store = MemorySessionStore()
        let healthy = SimulatedTransport(server: server, seed: 1)
        healthy.heal()
        let first = try await Self.start(healthy, store: store)
        #expect(await eventually { await first.hasLocalEngine })
        await first.setOffline(true)
        let shown = try await first.send(FlowAction(type: "onboarding.showSecond"))
        await first.close()
        let failing = SimulatedTransport(server: server, seed: 2)
        failing.failEverything(true)
        let second = try await Self.start(failing, store: store)
        #expect(await second.isOffline)
        #expect(await second.state == shown)
        #expect(await second.pendingCount == 1)
        failing.failEverything(false)
        failing.heal()
        await second.settled()
        #expect(await second.confirmedState == shown)
        #expect(server.keyCounts().all.count == 1)
        await second.close()
    }

    /// A transport in front of a simulated server that answers every posted action with what
    /// `answer` gives (nil: passes it on), and notes when each was posted.
    final class ActionFaults: FlowTransport, @unchecked Sendable {
        private let lock = NSLock()
        private let inner: SimulatedTransport
        private let answer: @Sendable (Int) -> FlowAnswer?
        private var posted: [ContinuousClock.Instant] = []

        init(_ inner: SimulatedTransport, answer: @escaping @Sendable (Int) -> FlowAnswer?) {
            self.inner = inner
            self.answer = answer
        }

        var posts: [ContinuousClock.Instant] { lock.withLock { posted } }

        func send(_ request: FlowRequest) async throws -> FlowAnswer {
            if request.method == "POST", request.path.contains("/actions") {
                let index = lock.withLock { posted.append(.now); return posted.count }
                if let answer = answer(index) { return answer }
            }
            return try await inner.send(request)
        }
    }

    /// A 500 on every action while `/healthz` answers: the session goes offline, probes, comes
    /// back, and the pauses go on growing instead of starting again at the first delay (it posted
    /// about a hundred times a second before).
    @Test func aPersisting500BacksOffAcrossOfflineCycles() async throws {
        let server = SimulatedServer(catalog: SimulatedServer.sampleCatalog)
        let inner = SimulatedTransport(server: server, seed: 3)
        inner.heal()
        let failing = ActionFaults(inner) { _ in FlowAnswer(status: 500, contentType: "text/html", body: Array("<html>500</html>".utf8)) }
        let session = try await FlowSession.start(FlowSession.Configuration(
            server: URL(string: "http://sim.test")!, userId: "ada", store: MemorySessionStore(),
            retry: RetryPolicy(attempts: 3, initialDelay: .milliseconds(5), maximumDelay: .milliseconds(160)), transport: failing))
        _ = try? await session.send(FlowAction(type: "onboarding.showSecond"))
        try await Task.sleep(for: .milliseconds(1200))
        let posts = failing.posts
        await session.close()
        #expect(posts.count <= 16, "\(posts.count) posts in 1.2 s")
        let gaps = zip(posts.dropFirst(), posts).map { $0 - $1 }
        // After the first cycle's pauses (5 and 10 ms) none goes back to them. Not "the last two
        // reach the 160 ms cap": on a loaded machine (the whole suite in parallel) the 1.2 s may
        // hold only the first cycle and one more post.
        #expect(gaps.dropFirst(2).allSatisfy { $0 >= .milliseconds(15) }, "\(gaps)")
    }

    /// A 429 with `Retry-After`: the action goes again no sooner than the server asked.
    @Test func aRetryAfterIsWaited() async throws {
        let server = SimulatedServer(catalog: SimulatedServer.sampleCatalog)
        let inner = SimulatedTransport(server: server, seed: 4)
        inner.heal()
        let limited = ActionFaults(inner) { index in
            index == 1 ? FlowAnswer(status: 429, contentType: "application/problem+json", retryAfter: .milliseconds(400),
                                    body: Array(#"{"type":"urn:flowstack:problem:rate-limited","status":429}"#.utf8)) : nil
        }
        let session = try await Self.start(limited)
        _ = try? await session.send(FlowAction(type: "onboarding.showSecond"))
        await session.settled()
        let posts = limited.posts
        #expect(posts.count == 2)
        if posts.count == 2 { #expect(posts[1] - posts[0] >= .milliseconds(400), "\(posts[1] - posts[0])") }
        #expect(await session.pendingCount == 0)
        await session.close()
    }

    /// FLOWSTACK_SIM_SEED=13 FLOWSTACK_SIM_TRACE=1 swift test --filter replaysOneSession
    @Test func replaysOneSession() async throws {
        guard let text = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_SEED"], let seed = UInt64(text) else { return }
        print(try await Self.schedule(seed: seed, usesBundle: ProcessInfo.processInfo.environment["FLOWSTACK_SIM_KIND"] != "predictions"))
    }

    @Test(arguments: [true, false])
    func sessionsUnderFaults(usesBundle: Bool) async throws {
        let count = usesBundle ? 60 : 20
        var made = 0
        var stored = 0
        var reported = 0
        var lost = 0
        var launches = 0
        var faults = 0
        var refusals = 0
        var failed: [Outcome] = []
        let began = ContinuousClock.now
        for seed in 1...UInt64(count) {
            let outcome = try await Self.schedule(seed: seed, usesBundle: usesBundle)
            made += outcome.made
            stored += outcome.stored
            reported += outcome.reported
            lost += outcome.lost
            launches += outcome.launches
            faults += outcome.faults
            refusals += outcome.refusals
            if !outcome.failures.isEmpty { failed.append(outcome) }
        }
        print("FlowSession simulation (\(usesBundle ? "engine" : "predictions")): \(count) schedules, \(made) taps made, \(stored) stored, "
              + "\(reported) reported not taken, \(lost) lost with the disk full, \(launches) launches, \(faults) faults, "
              + "\(refusals) saves refused; \(failed.count) failed in \(ContinuousClock.now - began)")
        for outcome in failed.prefix(5) { Issue.record("\(outcome)") }
    }
}

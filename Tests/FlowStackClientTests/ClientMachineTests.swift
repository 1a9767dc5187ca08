// The client's turns as a value: every interleaving a plain unit test, no I/O.
import FlowStackClient
import Foundation
import Testing

struct ClientMachineTests {
    /// The sample app's session at version 0, as a server and its bundle would have it.
    static func start(user: [String: JSONValue] = [:]) throws -> SessionState {
        let (catalog, problems) = SampleApp.parsed
        #expect(problems.isEmpty)
        let context = FlowContext(userId: "u", user: user)
        let tree = try FlowEngine.start(catalog: catalog, context: context)
        return SessionState(sessionId: "s_1", userId: "u", version: 0, tree: tree, context: context, catalog: catalog,
                            flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
    }

    /// A machine with its bundle loaded at version 0.
    static func machine() throws -> (ClientMachine, SessionState) {
        let engine = try start()
        var machine = ClientMachine(confirmed: try NavigationState(engine))
        machine.loaded(engine)
        return (machine, engine)
    }

    /// A tap shows the engine's next state at once and asks to post it on the version shown;
    /// an equal answer confirms it.
    @Test func aTapIsShownAtOnceAndConfirmed() throws {
        var (machine, engine) = try Self.machine()
        let action = FlowAction(type: "onboarding.showSecond")
        let result = try machine.tap(action, key: "k1")
        let expected = try NavigationState(try engine.applying(action).next)
        #expect(result == .shown(expected))
        #expect(machine.shown.features == ["onboarding.first", "onboarding.second"])
        #expect(machine.nextCommand() == .post(QueuedAction(key: "k1", version: 0, action: action, expected: expected)))
        #expect(machine.nextCommand() == nil)  // one on the wire at a time
        #expect(machine.answered(key: "k1", state: expected) == [.confirmed(expected)])
        #expect(machine.queue.isEmpty)
        #expect(machine.confirmed == expected)
        #expect(machine.engine != nil)
    }

    /// An answer other than the state shown is adopted and reported as a correction from what
    /// was shown; the taps made on the wrong state are dropped and the engine must be reloaded.
    @Test func aDifferentAnswerIsACorrection() throws {
        var (machine, engine) = try Self.machine()
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        _ = try machine.tap(FlowAction(type: "onboarding.returnToFirst"), key: "k2")
        let shown = machine.shown
        guard case .post = machine.nextCommand(batches: false) else { Issue.record("expected a post"); return }
        // The server's user had finished onboarding elsewhere: its answer differs.
        let other = try NavigationState(try engine.applying(FlowAction(type: "onboarding.showSecond")).next.applying(FlowAction(type: "onboarding.completed")).next)
        let events = machine.answered(key: "k1", state: other)
        guard case .corrected(let correction) = events.first else { Issue.record("no correction"); return }
        #expect(correction.to == other && correction.from == shown)
        #expect(correction.refused == [FlowAction(type: "onboarding.returnToFirst")])
        #expect(machine.shown == other && machine.queue.isEmpty && machine.engine == nil && machine.needsBundle)
        engine = try engine.applying(FlowAction(type: "onboarding.showSecond")).next.applying(FlowAction(type: "onboarding.completed")).next
        machine.loaded(engine)
        #expect(machine.engine != nil)
    }

    /// A tap kept by a store that missed the saves after it (a full disk) is posted again once the
    /// server has moved on: the server replays the answer it stored, the state the tap made then.
    /// The tap is stored; the client stays at the newer state it confirmed (it went back to the
    /// old one, and the next tap, made on it, met a 412).
    @Test func aReplayedOldAnswerDoesNotTakeTheClientBack() throws {
        let start = try Self.start()
        let kept = FlowAction(type: "onboarding.showSecond")
        let then = try start.applying(kept).next
        let now = try then.applying(FlowAction(type: "onboarding.completed")).next
        var machine = ClientMachine(confirmed: try NavigationState(now))
        machine.restore([QueuedAction(key: "k1", version: 0, action: kept)])
        guard case .post(let item) = machine.nextCommand() else { Issue.record("expected a post"); return }
        #expect(machine.answered(key: item.key, state: try NavigationState(then)) == [])
        #expect(machine.queue.isEmpty)
        #expect(machine.confirmed == (try NavigationState(now)) && machine.shown == machine.confirmed)
        machine.loaded(now)
        #expect(machine.engine != nil)
    }

    /// A refusal (409/422) rolls back to the confirmed state and reports it; a 412 asks to reload.
    @Test func refusalsRollBackAndMismatchesReload() throws {
        var (machine, _) = try Self.machine()
        let start = machine.shown
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        _ = machine.nextCommand()
        let events = machine.refused(key: "k1", status: 409, problem: ["status": 409])
        guard case .corrected(let correction) = events.first else { Issue.record("no correction"); return }
        #expect(correction.to == start && correction.reason == .refused)
        #expect(machine.shown == start && machine.engine != nil)

        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k2")
        _ = machine.nextCommand()
        #expect(machine.refused(key: "k2", status: 412, problem: nil).isEmpty)
        #expect(machine.nextCommand() == .reload)
        let events2 = machine.reloaded(start)
        guard case .corrected(let mismatch) = events2.first else { Issue.record("no correction"); return }
        #expect(mismatch.reason == .versionMismatch && mismatch.refused == [FlowAction(type: "onboarding.showSecond")])
    }

    /// Offline, taps keep working and queue; back online they go as one batch, which confirms
    /// them all when the server's state is the one shown.
    @Test func offlineTapsGoAsOneBatch() throws {
        var (machine, _) = try Self.machine()
        #expect(machine.unreachable() == [.offline])
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        _ = try machine.tap(FlowAction(type: "onboarding.completed"), key: "k2")
        #expect(machine.shown.features == ["home.first"])
        #expect(machine.nextCommand() == nil)
        #expect(machine.reachable() == [.online])
        guard case .batch(let items) = machine.nextCommand() else { Issue.record("expected a batch"); return }
        #expect(items.map(\.key) == ["k1", "k2"] && items.map(\.version) == [0, 1])
        let final = machine.shown
        #expect(machine.batchAnswered(sent: 2, done: ["k1", "k2"], refusal: nil, state: final) == [.confirmed(final)])
        #expect(machine.queue.isEmpty && machine.engine != nil)
    }

    /// A batch the server stopped at a refusal rolls back to the server's state and names the
    /// taps it did not take.
    @Test func aRefusedBatchRollsBack() throws {
        let (start, engine) = try Self.machine()
        var machine = start
        _ = machine.unreachable()
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        _ = try machine.tap(FlowAction(type: "onboarding.completed"), key: "k2")
        _ = machine.reachable()
        _ = machine.nextCommand()
        let afterFirst = try NavigationState(try engine.applying(FlowAction(type: "onboarding.showSecond")).next)
        let events = machine.batchAnswered(sent: 2, done: ["k1"], refusal: ["status": 422], state: afterFirst)
        #expect(events.first == .confirmed(afterFirst))  // the first tap was taken
        guard case .corrected(let correction) = events.last else { Issue.record("no correction"); return }
        #expect(correction.refused == [FlowAction(type: "onboarding.completed")] && correction.reason == .refused)
        #expect(machine.shown == afterFirst && machine.queue.isEmpty)
        #expect(machine.engine?.version == 1)  // rolled back to the engine after the first tap
    }

    /// Another device's version is adopted when nothing is pending, and left to the answer while
    /// a tap is; versions the client already has are ignored.
    @Test func eventsFromOtherDevices() throws {
        var (machine, engine) = try Self.machine()
        let next = try NavigationState(try engine.applying(FlowAction(type: "onboarding.showSecond")).next)
        #expect(machine.received(machine.confirmed).isEmpty)
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        #expect(machine.received(next).isEmpty)
        _ = machine.nextCommand()
        _ = machine.answered(key: "k1", state: next)
        let remote = try NavigationState(try engine.applying(FlowAction(type: "onboarding.showSecond")).next.applying(FlowAction(type: "onboarding.completed")).next)
        #expect(machine.received(remote) == [.remote(remote)])
        #expect(machine.shown == remote && machine.needsBundle)
    }

    /// Without a bundle, a tap matching one of the server's predictions is shown from it; any
    /// other tap waits for the answer.
    @Test func predictionsThenWaiting() throws {
        let engine = try Self.start()
        var predictions: [(action: FlowAction, state: NavigationState)] = []
        for prediction in engine.predictions() { predictions.append((prediction.action, try NavigationState(prediction.next))) }
        var machine = ClientMachine(confirmed: try NavigationState(engine), predictions: predictions)
        let result = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        guard case .shown(let state) = result else { Issue.record("not shown"); return }
        #expect(state.features == ["onboarding.first", "onboarding.second"])
        #expect(try machine.tap(FlowAction(type: "onboarding.completed"), key: "k2") == .waiting(key: "k2"))
    }

    /// A row tap is never shown from the prediction of its type without a row (its rule reads
    /// the row, and row taps are not predicted): it waits for its answer, while the plain tap
    /// is shown at once.
    @Test func rowTapsAreNotShownFromPlainPredictions() throws {
        let app = #"""
            {"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [{"id": "r1", "kind": "k"}]}]}],
             "on": {"open": [{"from": "list", "row": "k", "do": [{"push": {"screen": "detail", "params": {"id": {"$param": "row.id"}}}}]},
                             {"from": "list", "do": [{"push": "overview"}]}]}}
            """#
        let (catalog, problems) = FlowCatalog.parse([("app", Array(app.utf8))])
        #expect(problems.isEmpty)
        let context = FlowContext(userId: "u")
        let engine = SessionState(sessionId: "s_1", userId: "u", version: 0, tree: try FlowEngine.start(catalog: catalog, context: context),
                                  context: context, catalog: catalog, flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
        var predictions: [(action: FlowAction, state: NavigationState)] = []
        for prediction in engine.predictions() { predictions.append((prediction.action, try NavigationState(prediction.next))) }
        #expect(predictions.map(\.action) == [FlowAction(type: "open", from: "e2")])
        var tapped = ClientMachine(confirmed: try NavigationState(engine), predictions: predictions)
        #expect(try tapped.tap(FlowAction(type: "open", from: "e2", row: "r1"), key: "k1") == .waiting(key: "k1"))
        var plain = ClientMachine(confirmed: try NavigationState(engine), predictions: predictions)
        guard case .shown(let state) = try plain.tap(FlowAction(type: "open", from: "e2"), key: "k1") else { Issue.record("not shown"); return }
        #expect(state.features == ["list", "overview"])
    }

    /// The stored form of a session round-trips, queue and all.
    @Test func storedSessionsRoundTrip() throws {
        let session = StoredSession(server: "http://127.0.0.1:1", sessionId: "s_1", token: "t", userId: "u", queue: [
            QueuedAction(key: "k", version: 3, action: FlowAction(type: "home.selectTab", from: "e6", params: ["index": 1])),
        ])
        #expect(StoredSession(encoded: session.encoded()) == session)
        #expect(StoredSession(encoded: Array("{}".utf8)) == nil)
    }

    /// Retries back off by doubling, up to the cap.
    @Test func retryDelaysDouble() {
        let policy = RetryPolicy(attempts: 5, initialDelay: .milliseconds(100), maximumDelay: .milliseconds(350))
        #expect([1, 2, 3, 4].map(policy.delay(before:)) == [.milliseconds(100), .milliseconds(200), .milliseconds(350), .milliseconds(350)])
    }

    /// A server that answers `/healthz` but fails every request: the backoff goes on across
    /// going offline and back (not the first delay after every probe), until an answer says what
    /// happened; after that, or after an outage the app made, no pause is owed on coming back.
    @Test func theBackoffGoesOnAcrossOfflineCycles() throws {
        var (machine, _) = try Self.machine()
        machine.retry = RetryPolicy(attempts: 2, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(1000))
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        let failed = ClientMachine.Reply.answer(status: 500, body: [])
        func cycle() -> [Duration] {
            var pauses: [Duration] = []
            while true {
                var command = machine.nextCommand()
                if case .pause(let delay) = command {
                    pauses.append(delay)
                    command = machine.nextCommand()
                }
                guard let post = command, case .post = post else { Issue.record("expected a post, got \(String(describing: command))"); return pauses }
                if machine.handle(failed, to: post).contains(.offline) { return pauses }
            }
        }
        #expect(cycle() == [.milliseconds(10)])
        #expect(machine.reachable() == [.online])
        #expect(cycle() == [.milliseconds(20), .milliseconds(40)])
        _ = machine.reachable()
        #expect(cycle() == [.milliseconds(80), .milliseconds(160)])
        _ = machine.reachable()
        #expect(machine.nextCommand() == .pause(.milliseconds(320)))
        guard case .post(let item) = machine.nextCommand(), let shown = item.expected else { Issue.record("expected a post"); return }
        #expect(machine.answered(key: item.key, state: shown) == [.confirmed(shown)])
        #expect(machine.streak == 0)
        _ = machine.unreachable()
        _ = try machine.tap(FlowAction(type: "onboarding.completed"), key: "k2")
        _ = machine.reachable()
        guard case .post = machine.nextCommand() else { Issue.record("no pause is owed after an answer"); return }
    }

    /// A `Retry-After` longer than the backoff is the pause owed; a shorter one changes nothing.
    /// The header reads as seconds or an HTTP date, capped at five minutes.
    @Test func retryAfterIsAtLeastThePause() throws {
        var (machine, _) = try Self.machine()
        machine.retry = RetryPolicy(attempts: 3, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(1000))
        _ = try machine.tap(FlowAction(type: "onboarding.showSecond"), key: "k1")
        guard let post = machine.nextCommand() else { Issue.record("expected a post"); return }
        _ = machine.handle(.answer(status: 429, body: []), to: post)
        machine.retryAfter(.seconds(2))
        #expect(machine.nextCommand() == .pause(.seconds(2)))
        guard let again = machine.nextCommand() else { Issue.record("expected a post"); return }
        _ = machine.handle(.answer(status: 429, body: []), to: again)
        machine.retryAfter(.milliseconds(5))
        #expect(machine.nextCommand() == .pause(.milliseconds(20)))

        let now = Date(timeIntervalSince1970: 1_796_000_000)
        #expect(FlowAnswer.retryAfter("3", now: now) == .seconds(3))
        #expect(FlowAnswer.retryAfter("86400", now: now) == .seconds(300))
        #expect(FlowAnswer.retryAfter("soon", now: now) == nil)
        #expect(FlowAnswer.retryAfter("-1", now: now) == nil)
        #expect(FlowAnswer.retryAfter(nil, now: now) == nil)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        #expect(FlowAnswer.retryAfter(formatter.string(from: now.addingTimeInterval(10)), now: now) == .seconds(10))
        #expect(FlowAnswer.retryAfter(formatter.string(from: now.addingTimeInterval(-10)), now: now) == .zero)
    }

    /// Started again from the store while offline: the kept taps replay on the kept bundle (the
    /// app shows what it showed), a new tap runs locally, and nothing is sent until back; then
    /// everything goes as one batch. Without a bundle, the confirmed state shows and the taps wait.
    @Test func restoredOfflineReplaysTheQueue() throws {
        let engine = try Self.start()
        let confirmed = try NavigationState(engine)
        let queued = [QueuedAction(key: "k1", version: 0, action: FlowAction(type: "onboarding.showSecond"), at: "2026-11-25T18:00:00.000Z"),
                      QueuedAction(key: "k2", version: 1, action: FlowAction(type: "onboarding.completed"), at: "2026-11-25T18:00:01.000Z")]
        var machine = ClientMachine.restoredOffline(confirmed: confirmed, bundle: engine, queue: queued)
        #expect(machine.offline && machine.engine != nil)
        #expect(machine.shown.features == ["home.first"] && machine.shown.version == 2)
        #expect(try machine.tap(FlowAction(type: "home.selectTab", params: ["index": 1]), key: "k3") != .waiting(key: "k3"))
        #expect(machine.shown.features == ["home.second"])
        #expect(machine.nextCommand() == nil)
        #expect(machine.reachable() == [.online])
        guard case .batch(let items) = machine.nextCommand() else { Issue.record("expected a batch"); return }
        #expect(items.map(\.key) == ["k1", "k2", "k3"])

        let bare = ClientMachine.restoredOffline(confirmed: confirmed, bundle: nil, queue: queued)
        #expect(bare.offline && bare.engine == nil && bare.shown == confirmed && bare.queue.map(\.key) == ["k1", "k2"])
    }
}

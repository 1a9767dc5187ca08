// ClientSimulation: one seeded schedule of a user, a network and a server, run on ClientMachine.
//
// In the spirit of FoundationDB's simulation tests and TigerBeetle's VOPR: everything the client
// meets (taps, the order in which requests reach the server and answers come back, lost requests
// and answers, 500s before and after a commit, bodies that are not JSON, the network going down,
// the app killed at any step and started again from what it kept, another device acting, the
// session deleted) is drawn from one seeded generator, so a failing seed replays exactly. The
// client is the real ClientMachine and the real engine; the server is SimulatedServer, the real
// engine behind FlowStack's rules. After each schedule the client's contract is checked:
// - every tap the user made is in the server's log exactly once, or was reported to the app as
//   not taken (a correction or a restart naming it), and never both (a tap stored on a session
//   deleted later went with that session's log; it may be reported with the restart or not);
// - every state reported confirmed is one the server stored at that version;
// - once the faults stop, the client settles: nothing queued, and it shows the server's state;
// - what the client keeps (its store) never loses a queued tap across a kill.
import FlowEngine
@testable import FlowStackClient
import Foundation
import JSON
import TestSupport

struct SimulationOptions: Sendable {
    /// Taps the user makes over the schedule.
    var taps: ClosedRange<Int> = 5...40
    /// Whether the client runs the session's engine (false: predictions, or waiting).
    var usesBundle = true
    var usesPredictions = true
    /// Chances (per thousand) of each fault, drawn per request or per step.
    var lostRequest = 40
    var lostAnswer = 40
    var serverErrorBefore = 25
    var serverErrorAfter = 25
    var garbageAfter = 25
    var networkFlap = 15
    var kill = 15
    var otherDevice = 10
    var deleteSession = 3
    /// Of the user's steps, how many in a thousand are a tap (the rest let the network move):
    /// high values tap faster than the network answers.
    var tapRate = 400
    /// A long offline queue: the network goes down for the first `offlineTaps` taps.
    var offlineTaps = 0

    static let standard = SimulationOptions()
}

/// What a schedule did, and what broke.
struct SimulationReport: CustomStringConvertible {
    var seed: UInt64
    var taps = 0
    var faults = 0
    var kills = 0
    var steps = 0
    var stored = 0
    var reported = 0
    /// Taps reported not taken, by why (`refused`, `versionMismatch`, `differentAnswer`, `restarted`).
    var reasons: [String: Int] = [:]
    var failures: [String] = []
    var trace: [String] = []

    var description: String {
        "seed \(seed): \(taps) taps, \(faults) faults, \(kills) kills, \(stored) stored, \(reported) reported as not taken"
            + (failures.isEmpty ? "" : "\n  FAILED: " + failures.joined(separator: "\n  FAILED: ") + "\n  last steps:\n    "
                + trace.suffix(60).joined(separator: "\n    "))
    }
}

struct ClientSimulation {
    let seed: UInt64
    var options: SimulationOptions
    private var random: SeededGenerator
    private let server: SimulatedServer
    private var machine: ClientMachine
    private var sessionId: String
    private var token: String
    /// What the app's store holds: the session, the last confirmed state, the engine at it, the queue.
    private var kept: (sessionId: String, token: String, confirmed: NavigationState, bundle: SessionState?, queue: [QueuedAction])
    /// The request on the wire: its command, and the answer once the server has handled it.
    private var wire: (command: ClientMachine.Command, request: FlowRequest, answer: FlowAnswer?)?
    private var networkDown = false
    private var made: [String: FlowAction] = [:]
    private var madeOrder: [String] = []
    private var reportedKeys: [String: String] = [:]
    private var confirmedStates: [NavigationState] = []
    private var report: SimulationReport
    private var nextKey = 1
    private var targetTaps: Int
    private var offlineUntilTap = 0
    private let retry = RetryPolicy(attempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(4))

    init(seed: UInt64, options: SimulationOptions = .standard) {
        self.seed = seed
        self.options = options
        random = SeededGenerator(seed: seed)
        server = SimulatedServer(catalog: SimulatedServer.sampleCatalog)
        report = SimulationReport(seed: seed)
        targetTaps = options.taps.lowerBound + Int(random.next() % UInt64(options.taps.count))
        let created = server.handle(FlowRequest(method: "POST", path: "/v1/sessions", query: "predict=true", body: Array(#"{"userId":"ada"}"#.utf8)))
        let json = (try? JSONParser.parse(created.body)) ?? nil
        sessionId = json["session"]?["id"]?.stringValue ?? ""
        token = json["session"]?["token"]?.stringValue ?? ""
        // The simulated server always answers a creation with a state.
        machine = ClientMachine(confirmed: try! NavigationState(json: json["state"] ?? nil), retry: retry)
        kept = (sessionId, token, machine.confirmed, nil, [])
        offlineUntilTap = options.offlineTaps
        if options.usesBundle { fetchBundle() }
        if offlineUntilTap > 0 {
            // The app was online long enough to load its bundle, then the network went.
            networkDown = true
            targetTaps = max(targetTaps, offlineUntilTap)
        }
        keep()
    }

    private mutating func roll(_ chance: KeyPath<SimulationOptions, Int>) -> Bool {
        let perThousand = options[keyPath: chance]
        return roll(perThousand)
    }

    private mutating func roll(_ perThousand: Int) -> Bool {
        Int(random.next() % 1000) < perThousand
    }

    private mutating func pick(_ count: Int) -> Int { Int(random.next() % UInt64(max(1, count))) }

    private mutating func note(_ line: String) {
        report.trace.append("\(report.steps): " + line)
        if report.trace.count > 200 { report.trace.removeFirst(100) }
    }

    // MARK: running

    /// Runs the schedule, then lets the client settle with the faults gone, and checks.
    mutating func run() -> SimulationReport {
        var idle = 0
        while report.taps < targetTaps || idle < 3 {
            report.steps += 1
            if report.steps > 20_000 { report.failures.append("the schedule did not end"); break }
            if report.taps < targetTaps && roll(\.tapRate) {
                tap()
                idle = 0
                continue
            }
            if roll(\.kill) { kill(); continue }
            if roll(\.networkFlap) && report.taps >= offlineUntilTap {
                networkDown.toggle()
                note(networkDown ? "network down" : "network up")
                report.faults += 1
            }
            if roll(\.otherDevice) {
                if server.actAsAnotherDevice(sessionId, random: &random) { note("another device acted") }
            }
            if roll(\.deleteSession) {
                server.delete(sessionId)
                note("the session was deleted on the server")
            }
            if roll(200) { streamEvent() }
            if !advance() { idle += 1 } else { idle = 0 }
        }
        settle()
        check()
        return report
    }

    /// The user taps: one of the actions the screen shown offers (from the engine when there is
    /// one), or, now and then or without an engine, one of the sample app's actions that may not apply.
    private mutating func tap() {
        // A tap that waits shows nothing new: the user waits for it before tapping again (offline,
        // the app was told it cannot be shown yet, and the user goes on).
        if !machine.offline && machine.queue.contains(where: { $0.expected == nil }) { return }
        let action = chooseAction()
        let key = "k\(nextKey)"
        nextKey += 1
        do throws(FlowError) {
            let result = try machine.tap(action, key: key)
            made[key] = action
            madeOrder.append(key)
            report.taps += 1
            switch result {
            case .shown(let state): note("tap \(key) \(action.type) shown v\(state.version) \(state.top?.feature ?? "")")
            case .waiting: note("tap \(key) \(action.type) waits")
            }
            if report.taps >= offlineUntilTap && offlineUntilTap > 0 && networkDown {
                networkDown = false
                offlineUntilTap = 0
                note("network up after the offline taps")
            }
            keep()
        } catch {
            note("tap \(action.type) refused by the local engine")
        }
    }

    private static let vocabulary: [FlowAction] = [
        FlowAction(type: "onboarding.showSecond"), FlowAction(type: "onboarding.completed"), FlowAction(type: "onboarding.returnToFirst"),
        FlowAction(type: "back"), FlowAction(type: "home.selectTab", params: ["index": 1]), FlowAction(type: "home.selectTab", params: ["index": 0]),
        FlowAction(type: "home.presentModal", params: ["content": "Hi"]), FlowAction(type: "modal.dismiss"),
    ]

    private mutating func chooseAction() -> FlowAction {
        if let engine = machine.engine, !roll(100) {
            let available = FlowEngine.availableActions(in: engine.tree, catalog: engine.catalog, context: engine.context)
                .filter { !FlowAction(type: $0.type).isInteractionAction && $0.type != "link" }
            if !available.isEmpty {
                let entry = available[pick(available.count)]
                return FlowAction(type: entry.type, params: Self.sampleParams(entry, state: machine.shown))
            }
        }
        if machine.engine == nil, machine.shown == machine.confirmed, !machine.predictions.isEmpty, !roll(200) {
            // What the app lists from the last answer's predictions.
            return machine.predictions[pick(machine.predictions.count)].action
        }
        if !roll(100), let top = machine.shown.top {
            // What the screen shown offers in the sample app, from its feature.
            let offered = Self.vocabulary.filter { Self.offers(top.feature, $0.type) }
            if !offered.isEmpty { return offered[pick(offered.count)] }
        }
        return Self.vocabulary[pick(Self.vocabulary.count)]
    }

    private static func offers(_ feature: String, _ type: String) -> Bool {
        switch feature {
        case "onboarding.first": return type == "onboarding.showSecond"
        case "onboarding.second": return ["onboarding.completed", "onboarding.returnToFirst", "back"].contains(type)
        case "home.first", "home.second": return type.hasPrefix("home.")
        case "modal": return type == "modal.dismiss" || type == "back"
        default: return type == "back"
        }
    }

    private static func sampleParams(_ entry: AvailableAction, state: NavigationState) -> JSONObject {
        var members: [JSONObject.Member] = []
        for param in entry.params where param.required {
            let value: JSONValue
            switch (param.name, param.type) {
            case ("index", _): value = .integer(state.top?.feature == "home.first" ? 1 : 0)
            case (_, .integer): value = 1
            case (_, .number): value = 0.5
            case (_, .boolean): value = true
            case (_, .object): value = ["line1": "1 Main St", "country": "US"]
            case (_, .array): value = []
            default: value = "sample"
            }
            members.append(JSONObject.Member(key: param.name, value: value))
        }
        return JSONObject(uniqueMembers: members)
    }

    /// Moves the network one step: sends the next command, has the server handle what is on the
    /// wire, or brings its answer back, each with its faults. False when there was nothing to do.
    private mutating func advance() -> Bool {
        if machine.offline {
            // The driver probes /healthz; it answers once the network is up.
            if !networkDown {
                deliver(machine.reachable())
                note("probe answered: online")
                return true
            }
            return false
        }
        guard let current = wire else {
            guard let command = machine.nextCommand() else {
                if options.usesBundle, machine.needsBundle, machine.queue.allSatisfy({ $0.expected == nil }) {
                    return fetchBundle()
                }
                return false
            }
            switch command {
            case .pause(let delay):
                note("pause \(delay)")
            case .create:
                wire = (command, FlowRequest(method: "POST", path: "/v1/sessions", query: "predict=true", body: Array(#"{"userId":"ada"}"#.utf8)), nil)
                note("create a new session")
            default:
                wire = (command, request(for: command), nil)
                note("send \(describe(command))")
            }
            return true
        }
        if current.answer == nil {
            // The request reaches the server, or is lost on the way, or meets a 500 before anything commits.
            if networkDown || roll(\.lostRequest) {
                report.faults += 1
                note("request lost")
                reply(.noAnswer("request lost"))
            } else if roll(\.serverErrorBefore) {
                report.faults += 1
                note("500 before commit")
                reply(.answer(status: 500, body: Array("<html><body>Internal Server Error</body></html>".utf8)))
            } else {
                wire?.answer = server.handle(current.request)
                note("server handled it: \(wire?.answer?.status ?? 0)")
            }
            return true
        }
        // The answer comes back, or is lost, or is replaced by a 500 or a body that is not JSON.
        guard let answer = current.answer else { return true }
        if networkDown || roll(\.lostAnswer) {
            report.faults += 1
            note("answer lost after the server handled it")
            reply(.noAnswer("answer lost"))
        } else if roll(\.serverErrorAfter) {
            report.faults += 1
            note("500 after the server handled it")
            reply(.answer(status: 500, body: Array(#"{"oops":true}"#.utf8)))
        } else if roll(\.garbageAfter) {
            report.faults += 1
            note("garbage after the server handled it")
            reply(.answer(status: 200, body: Array("<html>proxy</html>".utf8)))
        } else {
            reply(.answer(status: answer.status, body: answer.body))
        }
        return true
    }

    private mutating func reply(_ reply: ClientMachine.Reply) {
        guard let current = wire else { return }
        wire = nil
        if case .create = current.command {
            guard case .answer(201, let body) = reply, let json = try? JSONParser.parse(body), let id = json["session"]?["id"]?.stringValue,
                  let newToken = json["session"]?["token"]?.stringValue, let stateJSON = json["state"],
                  let state = try? NavigationState(json: stateJSON) else {
                deliver(machine.createFailed("\(reply)"))
                return
            }
            let old = sessionId
            sessionId = id
            token = newToken
            deliver(machine.restarted(state, oldSession: old))
            if options.usesBundle { fetchBundle() }
            keep()
            return
        }
        deliver(machine.handle(reply, to: current.command))
    }

    /// The request of a command, built as FlowSession builds it.
    private func request(for command: ClientMachine.Command) -> FlowRequest {
        let requests = SessionRequests(sessionId: sessionId, token: token)
        switch command {
        case .post(let item):
            return requests.post(item, predict: machine.engine == nil && options.usesPredictions)
        case .batch(let items):
            return requests.batch(items)
        default:
            return requests.reload()
        }
    }

    private func describe(_ command: ClientMachine.Command) -> String {
        switch command {
        case .post(let item): return "post \(item.key) \(item.action.type) on v\(item.version)"
        case .batch(let items): return "batch \(items.first?.key ?? "")…\(items.last?.key ?? "") (\(items.count))"
        case .reload: return "reload"
        case .create: return "create"
        case .pause(let delay): return "pause \(delay)"
        }
    }

    /// The bundle, as the driver fetches it when the engine is gone: the server's session state.
    @discardableResult
    private mutating func fetchBundle() -> Bool {
        guard !networkDown, let session = server.session(sessionId), session.alive, !roll(\.lostAnswer) else { return false }
        let before = machine.engine == nil
        machine.loaded(session.state)
        if before && machine.engine != nil { note("bundle loaded at v\(session.state.version)") }
        keep()
        return machine.engine != nil
    }

    /// Another device's version arrives on the event stream.
    private mutating func streamEvent() {
        guard !networkDown, let session = server.session(sessionId), session.alive, session.state.version > machine.confirmed.version,
              machine.queue.isEmpty, !machine.busy, let state = try? NavigationState(session.state) else { return }
        let events = machine.received(state)
        if !events.isEmpty { note("event stream: v\(state.version)") }
        deliver(events)
    }

    /// Records what the client reported, and keeps what the store would.
    private mutating func deliver(_ events: [ClientEvent]) {
        for event in events {
            switch event {
            case .confirmed(let state):
                confirmedStates.append(state)
                note("confirmed v\(state.version)")
            case .corrected(let correction):
                for tap in correction.taps { reportedKeys[tap.key] = "corrected (\(correction.reason.rawValue))" }
                note("corrected (\(correction.reason.rawValue)): \(correction.taps.map(\.key)) to v\(correction.to.version)")
            case .restarted(let restart):
                for tap in restart.dropped { reportedKeys[tap.key] = "restarted" }
                note("restarted: \(restart.reason)")
            case .offline: note("offline")
            case .online: note("online")
            case .remote(let state): note("remote v\(state.version)")
            }
        }
        keep()
    }

    /// What FlowSession persists after every step: the queue, the confirmed state, and the engine
    /// at the confirmed version when there is one.
    private mutating func keep() {
        kept.sessionId = sessionId
        kept.token = token
        kept.queue = machine.queue.map { QueuedAction(key: $0.key, version: $0.version, action: $0.action, at: $0.at) }
        kept.confirmed = machine.confirmed
        if let engine = machine.confirmedEngine, engine.version == machine.confirmed.version { kept.bundle = engine }
        if let bundle = kept.bundle, bundle.sessionId != sessionId || bundle.version > machine.confirmed.version { kept.bundle = nil }
    }

    // MARK: the app killed, and started again

    /// The app dies: what was on the wire may or may not reach the server; the client starts
    /// again from what it kept, as FlowSession.start does.
    private mutating func kill() {
        report.kills += 1
        if let current = wire, current.answer == nil, !networkDown, roll(500) {
            _ = server.handle(current.request)  // it reached the server before the app died
        }
        wire = nil
        note("killed; kept \(kept.queue.count) tap(s) at v\(kept.confirmed.version)")
        // start: read the kept session's state.
        let reply: ClientMachine.Reply = networkDown || roll(\.lostRequest)
            ? .noAnswer("down")
            : {
                let answer = server.handle(FlowRequest(method: "GET", path: "/v1/sessions/\(kept.sessionId)", query: "predict=true",
                                                       headers: ["Authorization": "Bearer \(kept.token)"]))
                return .answer(status: answer.status, body: answer.body)
            }()
        switch reply {
        case .answer(200, let body):
            guard let json = try? JSONParser.parse(body), let state = try? NavigationState(json: json) else { return }
            var predictions: [(action: FlowAction, state: NavigationState)] = []
            for item in json["predictions"]?.arrayValue ?? [] {
                if let action = try? FlowAction(json: item["action"] ?? nil), let next = try? NavigationState(json: item["state"] ?? nil) {
                    predictions.append((action, next))
                }
            }
            machine = ClientMachine(confirmed: state, predictions: options.usesPredictions ? predictions : [], retry: retry)
            machine.restore(kept.queue)
            if options.usesBundle && !kept.queue.isEmpty { fetchBundle() }
            note("started again online at v\(state.version)")
        case .answer(404, _), .answer(401, _):
            // Gone: the next command creates a new session and reports the kept taps.
            machine = ClientMachine(confirmed: kept.confirmed, retry: retry)
            machine.restore(kept.queue)
            deliver(machine.handle(reply, to: .reload))
            note("started again: the kept session is gone")
        default:
            machine = ClientMachine.restoredOffline(confirmed: kept.confirmed, bundle: options.usesBundle ? kept.bundle : nil,
                                                    queue: kept.queue, retry: retry)
            note("started again offline from the store, showing v\(machine.shown.version)")
        }
        keep()
    }

    // MARK: settling and checking

    /// The faults stop: the network is up, the answers come back, until nothing is left to do.
    private mutating func settle() {
        let saved = options
        options.lostRequest = 0
        options.lostAnswer = 0
        options.serverErrorBefore = 0
        options.serverErrorAfter = 0
        options.garbageAfter = 0
        networkDown = false
        note("faults stop")
        var steps = 0
        while steps < 5_000 {
            steps += 1
            if !advance() {
                streamEvent()
                if !advance() { break }
            }
        }
        if steps >= 5_000 { report.failures.append("the client did not settle in 5,000 steps") }
        options = saved
    }

    private mutating func check() {
        let counts = server.keyCounts()
        for key in madeOrder {
            // A tap stored on a session that was later deleted went with it: it is not lost, and
            // reporting it with the restart is right too. It must still be stored at most once.
            let everywhere = counts.all[key] ?? 0
            if everywhere > 1 { report.failures.append("tap \(key) (\(made[key]?.type ?? "")) is in the server's log \(everywhere) times") }
            if everywhere > (counts.live[key] ?? 0) { report.stored += 1; continue }
            let stored = counts.live[key] ?? 0
            let reported = reportedKeys[key]
            if stored == 0 && reported == nil { report.failures.append("tap \(key) (\(made[key]?.type ?? "")) was lost: not in the log, never reported") }
            if stored == 1, let reported { report.failures.append("tap \(key) (\(made[key]?.type ?? "")) is in the log but was reported \(reported)") }
            if stored == 1 { report.stored += 1 } else if let reported {
                report.reported += 1
                report.reasons[reported, default: 0] += 1
            }
        }
        for state in confirmedStates {
            guard let document = server.document(session: state.sessionId, version: state.version),
                  let stored = try? NavigationState(json: try JSONParser.parse(document)) else {
                report.failures.append("v\(state.version) of \(state.sessionId) was reported confirmed but the server never stored it")
                continue
            }
            if stored.document != state.document, (try? NavigationState(json: state.document)) != stored {
                report.failures.append("v\(state.version) was reported confirmed with a state the server did not store")
            }
        }
        if options.otherDevice == 0 && options.deleteSession == 0 {
            // Nobody else acts on the session: the only taps not taken are those the server's
            // engine refused (made blind, before the bundle loaded); none is dropped because the
            // client mistook its own answers for someone else's.
            for (reason, count) in report.reasons where reason != "corrected (refused)" {
                report.failures.append("\(count) tap(s) \(reason) with nobody else on the session")
            }
        }
        if !machine.queue.isEmpty { report.failures.append("\(machine.queue.count) tap(s) still queued after settling") }
        if machine.gone != nil { report.failures.append("the client still waits to replace a gone session") }
        if let session = server.session(sessionId), session.alive {
            if let state = try? NavigationState(session.state), machine.confirmed != state || machine.shown != state {
                report.failures.append("the client shows v\(machine.shown.version) (confirmed v\(machine.confirmed.version)) but the server is at v\(session.state.version)")
            }
        }
        if kept.queue.map(\.key) != machine.queue.map(\.key) { report.failures.append("the store's queue differs from the client's") }
    }
}

// flowstack-tap faults: the real client through scripts/harness/faultproxy.py, one scenario a run, one JSON line out.
import FlowStackClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `flowstack-tap faults --server URL [--proxy-control URL] --scenario NAME [--store FILE]`
///
/// Drives a `FlowSession` through the fault proxy of scripts/client_faults.py and prints one JSON
/// line: the taps made (type and params, in order), the taps the client reported not taken
/// (`.corrected` events' `taps`, `.restarted`'s `dropped`), the session id(s) and token(s), and for
/// the taps that time it, send → returned state. The check (the server's action log against the
/// taps made) is the script's: this only acts as an app would. Every tap is `home.selectTab`
/// alternating index 1 and 0 after onboarding (`onboarding.showSecond`, `onboarding.completed`),
/// without `from`, so a tap never depends on what the previous one showed.
///
/// Scenarios:
/// - `tab-switches`: 30 tab switches 120 ms apart (behind 100 ms each way: taps made while a
///   request or a batch is on the wire);
/// - `back-to-back`: 200 tab switches on the local engine with no wait between them, timed;
/// - `offline-1000`: offline, 1,000 tab switches on the local engine, online, settled;
/// - `500-before`, `drop-before`, `500-after`, `garbage-after`, `drop-after`: the proxy breaks
///   the next `--faults` (4) committing requests that way while 10 tab switches are made 50 ms apart;
/// - `kill`: onboarding, then 30 tab switches each made by a child process (this command,
///   `kill-child`) that SIGKILLs itself 0–400 ms after its tap, each child starting again from
///   the same `--store` file; a last child only settles.
struct TapFaults {
    enum Scenario: String, CaseIterable {
        case tabSwitches = "tab-switches"
        case backToBack = "back-to-back"
        case offline = "offline-1000"
        case fault500Before = "500-before"
        case faultDropBefore = "drop-before"
        case fault500After = "500-after"
        case faultGarbageAfter = "garbage-after"
        case faultDropAfter = "drop-after"
        case kill
        /// One step of `kill`, run by `kill` itself in a child process.
        case killChild = "kill-child"
    }

    var server: URL
    var proxyControl: URL?
    var scenario: Scenario
    var store: String?
    var user = "faults-\(UUID().uuidString.prefix(8).lowercased())"
    var faults = 4
    /// `kill-child`: the taps to make, by number (0: onboarding first); none when `from > to`.
    var tapsFrom = 1
    var tapsTo = 0
    /// `kill-child`: SIGKILL this long after the last tap; nil: settle and report instead.
    var killDelay: Int?
    /// Seconds before a run that has not settled gives up (and fails).
    var deadline = 90
    /// Seconds before a request counts as unanswered. Short, because on Linux a connection cut
    /// after a request on a reused connection is only seen at the timeout (libcurl sends the
    /// request again on a new connection, without its body; BENCHMARKS.md).
    var timeout = 3

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        var server: URL?
        var scenario: Scenario?
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
            func number() throws -> Int {
                guard let number = Int(value), number >= 0 else { throw UsageError(message: "\(flag) is a whole number; found \(value)") }
                return number
            }
            switch flag {
            case "--server": server = URL(string: value)
            case "--proxy-control": proxyControl = URL(string: value)
            case "--scenario":
                guard let parsed = Scenario(rawValue: value) else {
                    throw UsageError(message: "--scenario is one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")); found \(value)")
                }
                scenario = parsed
            case "--store": store = value
            case "--user": user = value
            case "--faults": faults = try number()
            case "--taps-from": tapsFrom = try number()
            case "--taps-to": tapsTo = try number()
            case "--kill-delay-ms": killDelay = try number()
            case "--deadline": deadline = try number()
            case "--timeout": timeout = max(1, try number())
            default: throw UsageError(message: "unknown faults option \(flag)")
            }
        }
        guard let server else { throw UsageError(message: "faults needs --server URL (the fault proxy)") }
        guard let scenario else { throw UsageError(message: "faults needs --scenario NAME") }
        self.server = server
        self.scenario = scenario
    }

    // MARK: what a run reports

    /// What a run saw, printed as its one JSON line.
    final class Report: @unchecked Sendable {
        let scenario: String
        var made: [FlowAction] = []
        var notTaken: [QueuedAction] = []
        var corrections = 0
        var restarts = 0
        var sessions: [String] = []
        var tokens: [String] = []
        var latencies: [Duration] = []
        /// Per timed tap: whether the kernel took the CPU from the process while it ran (an
        /// involuntary context switch: other work on the shared cores), so its time is not the client's.
        var preempted: [Bool] = []
        var sendErrors: [String] = []
        var extra: [JSONObject.Member] = []
        var error: String?

        init(_ scenario: String) { self.scenario = scenario }

        func saw(_ session: FlowSession) async {
            let id = session.sessionId
            let token = await session.token
            if !sessions.contains(id) {
                sessions.append(id)
                tokens.append(token)
            }
        }

        func count(_ events: [ClientEvent]) {
            for event in events {
                switch event {
                case .corrected(let correction):
                    corrections += 1
                    notTaken += correction.taps
                case .restarted(let restart):
                    restarts += 1
                    notTaken += restart.dropped
                default: break
                }
            }
        }

        static func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }

        var json: JSONValue {
            var members: [JSONObject.Member] = [
                .init(key: "scenario", value: .string(scenario)),
                .init(key: "made", value: .integer(made.count)),
                .init(key: "notTaken", value: .integer(notTaken.count)),
                .init(key: "corrections", value: .integer(corrections)),
                .init(key: "restarts", value: .integer(restarts)),
                .init(key: "sessions", value: .array(sessions.map(JSONValue.string))),
                .init(key: "tokens", value: .array(tokens.map(JSONValue.string))),
                .init(key: "actions", value: .array(made.map { .object(["type": .string($0.type), "params": .object($0.params)]) })),
                .init(key: "notTakenTypes", value: .array(notTaken.map { .string($0.action.type) })),
                .init(key: "sendErrors", value: .array(sendErrors.map(JSONValue.string))),
            ]
            if !latencies.isEmpty {
                func percentile(_ values: [Duration], _ p: Double) -> JSONValue {
                    guard !values.isEmpty else { return .null }
                    let sorted = values.sorted()
                    return .number((Self.milliseconds(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]) * 1000).rounded() / 1000)
                }
                // The slowest taps by their number in the run, and whether the process was
                // preempted during each, to tell a pause of the machine from a cost of the client.
                let slowest = latencies.indices.sorted { latencies[$0] > latencies[$1] }.prefix(5).map { index -> JSONValue in
                    .array([.integer(index + 1), .number((Self.milliseconds(latencies[index]) * 1000).rounded() / 1000), .bool(preempted[index])])
                }
                let running = latencies.indices.filter { !preempted[$0] }.map { latencies[$0] }
                members.append(.init(key: "sendToState", value: .object([
                    "taps": .integer(latencies.count), "p50Ms": percentile(latencies, 0.5), "p99Ms": percentile(latencies, 0.99),
                    "maxMs": percentile(latencies, 1.0), "slowest": .array(Array(slowest)),
                    "preempted": .integer(latencies.count - running.count), "p99NotPreemptedMs": percentile(running, 0.99),
                ])))
            }
            members += extra
            members.append(.init(key: "error", value: error.map(JSONValue.string) ?? .null))
            return .object(JSONObject(members))
        }

        func print() {
            var writer = JSONWriter(capacity: 4096)
            writer.writeValue(json)
            FileHandle.standardOutput.write(Data(writer.takeBytes() + [UInt8(ascii: "\n")]))
        }
    }

    // MARK: running

    func run() async -> Int32 {
        let report = Report(scenario.rawValue)
        // A run that does not settle fails with what it saw, instead of hanging the check.
        let deadline = self.deadline
        Task {
            try? await Task.sleep(for: .seconds(deadline))
            report.error = report.error ?? "did not finish within \(deadline) s"
            report.print()
            exit(1)
        }
        do {
            switch scenario {
            case .tabSwitches: try await tabSwitches(report)
            case .backToBack: try await backToBack(report)
            case .offline: try await offline(report)
            case .fault500Before, .faultDropBefore, .fault500After, .faultGarbageAfter, .faultDropAfter: try await fault(report)
            case .kill: try await kill(report)
            case .killChild: try await killChild(report)
            }
        } catch {
            report.error = "\(error)"
        }
        report.print()
        return report.error == nil ? 0 : 1
    }

    private var configuration: FlowSession.Configuration {
        FlowSession.Configuration(server: server, userId: user, attributes: ["country": "US"],
                                  store: store.map { FileSessionStore(path: $0) } ?? MemorySessionStore(), timeout: TimeInterval(timeout))
    }

    /// The session of this run: started (or resumed from the store), its events counted.
    private func start(_ report: Report) async throws -> FlowSession {
        let session = try await FlowSession.start(configuration)
        await report.saw(session)
        return session
    }

    /// Waits (at most 5 s) for the session's bundle: taps then run on the local engine.
    private func waitForEngine(_ session: FlowSession) async throws {
        let clock = ContinuousClock()
        let until = clock.now + .seconds(5)
        while await !session.hasLocalEngine {
            guard clock.now < until else { throw Failure("the local engine did not load within 5 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Tap `number` of a run: tab 1 for odd numbers, tab 0 for even ones.
    static func tab(_ number: Int) -> FlowAction {
        FlowAction(type: "home.selectTab", params: ["index": .integer(number % 2)])
    }

    static let onboarding = [FlowAction(type: "onboarding.showSecond"), FlowAction(type: "onboarding.completed")]

    /// Sends `action` as an app does (the tap is made once `send` has queued it), timing it when asked.
    private func tap(_ session: FlowSession, _ action: FlowAction, _ report: Report, timed: Bool = false) async {
        report.made.append(action)
        let clock = ContinuousClock()
        let switches = Self.involuntarySwitches()
        let started = clock.now
        do {
            _ = try await session.send(action)
            if timed {
                report.latencies.append(clock.now - started)
                report.preempted.append(Self.involuntarySwitches() != switches)
            }
        } catch let error as FlowError {
            // The local engine refused it: nothing was queued, so it was not made.
            report.made.removeLast()
            report.sendErrors.append("\(action.type): refused by the local engine: \(error)")
        } catch {
            // Refused by the server (also reported as a correction) or waiting while offline (queued).
            report.sendErrors.append("\(action.type): \(error)")
        }
    }

    /// The process's involuntary context switches so far (getrusage): the kernel gave its CPU to
    /// other work.
    static func involuntarySwitches() -> Int {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage.ru_nivcsw
    }

    private func finish(_ session: FlowSession, _ report: Report) async {
        await session.settled()
        await report.saw(session)
        report.count(await session.history)
        report.extra.append(.init(key: "version", value: .integer(await session.confirmedState.version)))
        await session.close()
    }

    /// 30 tab switches 120 ms apart: behind 100 ms each way, each is made while the one before (or a batch) is on the wire.
    private func tabSwitches(_ report: Report) async throws {
        let session = try await start(report)
        try await waitForEngine(session)
        for action in Self.onboarding { await tap(session, action, report) }
        for number in 1...30 {
            await tap(session, Self.tab(number), report, timed: true)
            try await Task.sleep(for: .milliseconds(120))
        }
        await finish(session, report)
    }

    /// 200 tab switches on the local engine, none waiting for anything: send → state timed.
    private func backToBack(_ report: Report) async throws {
        let session = try await start(report)
        try await waitForEngine(session)
        for action in Self.onboarding { await tap(session, action, report) }
        for number in 1...200 { await tap(session, Self.tab(number), report, timed: true) }
        await finish(session, report)
    }

    /// 1,000 tab switches made offline on the local engine, then sent (in batches of at most 100).
    private func offline(_ report: Report) async throws {
        let session = try await start(report)
        try await waitForEngine(session)
        for action in Self.onboarding { await tap(session, action, report) }
        await session.settled()
        await session.setOffline(true)
        for number in 1...1000 { await tap(session, Self.tab(number), report, timed: true) }
        await session.setOffline(false)
        await finish(session, report)
    }

    /// The proxy breaks the next `faults` committing requests (the scenario names how) while 10
    /// tab switches are made 50 ms apart: the first goes alone, the rest queue and go as batches.
    private func fault(_ report: Report) async throws {
        guard let proxyControl else { throw Failure("\(scenario.rawValue) needs --proxy-control URL") }
        let session = try await start(report)
        try await waitForEngine(session)
        for action in Self.onboarding { await tap(session, action, report) }
        await session.settled()
        let before = try await Self.control(proxyControl, method: "GET")
        _ = try await Self.control(proxyControl, method: "POST", body: ["mode": .string(scenario.rawValue), "count": .integer(faults)])
        for number in 1...10 {
            await tap(session, Self.tab(number), report, timed: true)
            try await Task.sleep(for: .milliseconds(50))
        }
        await finish(session, report)
        let after = try await Self.control(proxyControl, method: "GET")
        let injected = (after["injected"]?[scenario.rawValue]?.integerValue ?? 0) - (before["injected"]?[scenario.rawValue]?.integerValue ?? 0)
        report.extra.append(.init(key: "faultsInjected", value: .integer(injected)))
        report.extra.append(.init(key: "faultsLeft", value: after["remaining"] ?? .null))
        report.extra.append(.init(key: "wentOffline", value: .bool(await session.history.contains(.offline))))
    }

    /// `POST` or `GET` `/__fault` on the proxy: its state.
    static func control(_ url: URL, method: String, body: JSONObject? = nil) async throws -> JSONValue {
        var request = URLRequest(url: url.appendingPathComponent("__fault"), timeoutInterval: 10)
        request.httpMethod = method
        if let body {
            var writer = JSONWriter()
            writer.writeValue(.object(body))
            request.httpBody = Data(writer.takeBytes())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw Failure("the proxy's \(method) /__fault answered \((response as? HTTPURLResponse)?.statusCode ?? 0): \(String(decoding: data, as: UTF8.self))")
        }
        return try JSONParser.parse(Array(data))
    }

    // MARK: kills

    /// When each step's child kills itself after its tap, in ms: before the request leaves, on
    /// its way (100 ms), at the server, with the answer on its way back, and after it came.
    static let killDelays = [0, 1, 5, 30, 90, 100, 110, 150, 190, 200, 210, 260, 320, 400, 60]

    /// Onboarding in a first child, then 30 steps: step k starts a child from the store that makes
    /// tap k and SIGKILLs itself after `killDelays[k % 15]` ms; a last child only settles. The
    /// children's lines (taps made, events, the final report) are summed here.
    private func kill(_ report: Report) async throws {
        guard let store else { throw Failure("kill needs --store FILE (the children resume from it)") }
        try? FileManager.default.removeItem(atPath: store)
        var killed = 0, steps: [JSONValue] = []
        var restartTaps: [(ms: Double, engine: Bool)] = []
        var plan: [(from: Int, to: Int, delay: Int?)] = [(0, 0, nil)]
        plan += (1...30).map { ($0, $0, Self.killDelays[$0 % Self.killDelays.count]) }
        plan.append((31, 30, nil))
        for step in plan {
            var arguments = ["faults", "--server", server.absoluteString, "--scenario", "kill-child", "--store", store, "--user", user,
                             "--taps-from", "\(step.from)", "--taps-to", "\(step.to)", "--deadline", "30", "--timeout", "\(timeout)"]
            if let delay = step.delay { arguments += ["--kill-delay-ms", "\(delay)"] }
            let (status, signalled, lines) = try Self.runChild(arguments)
            var made = 0
            for line in lines {
                guard let json = try? JSONParser.parse(Array(line.utf8)) else { continue }
                if let type = json["made"]?.stringValue {
                    report.made.append(FlowAction(type: type, params: json["params"]?.objectValue ?? [:]))
                    made += 1
                    if step.from > 0, let ms = json["sendMs"]?.doubleValue {
                        restartTaps.append((ms, json["engine"]?.boolValue ?? false))
                    }
                }
                if let id = json["session"]?.stringValue, let token = json["token"]?.stringValue, !report.sessions.contains(id) {
                    report.sessions.append(id)
                    report.tokens.append(token)
                }
                if json["event"]?.stringValue == "corrected" || json["event"]?.stringValue == "restarted" {
                    if json["event"]?.stringValue == "corrected" { report.corrections += 1 } else { report.restarts += 1 }
                    for type in json["taps"]?.arrayValue ?? [] {
                        report.notTaken.append(QueuedAction(key: "", version: 0, action: FlowAction(type: type.stringValue ?? "?")))
                    }
                }
                if let error = json["error"]?.stringValue { report.sendErrors.append("child \(step.from)…\(step.to): \(error)") }
                for error in json["sendErrors"]?.arrayValue ?? [] { report.sendErrors.append(error.stringValue ?? "") }
            }
            if signalled == SIGKILL { killed += 1 }
            let expectedMade = step.from == 0 ? 2 : max(0, step.to - step.from + 1)
            if made != expectedMade || (step.delay == nil && status != 0) || (step.delay != nil && signalled != SIGKILL) {
                report.error = "the child for taps \(step.from)…\(step.to) made \(made) tap(s) (expected \(expectedMade)) and ended with "
                    + (signalled != 0 ? "signal \(signalled)" : "status \(status)") + ": \(lines.suffix(3).joined(separator: " | "))"
                return
            }
            steps.append(.integer(step.delay ?? -1))
        }
        report.extra.append(.init(key: "killed", value: .integer(killed)))
        report.extra.append(.init(key: "killDelaysMs", value: .array(steps)))
        // The first tap after each restart: shown at once on the engine, or waiting for the server.
        let waited = restartTaps.filter { !$0.engine }.map(\.ms).sorted()
        let shown = restartTaps.filter(\.engine).map(\.ms).sorted()
        report.extra.append(.init(key: "afterRestart", value: .object([
            "onEngine": .integer(shown.count), "onEngineMaxMs": shown.last.map(JSONValue.number) ?? .null,
            "waited": .integer(waited.count), "waitedMedianMs": waited.isEmpty ? .null : .number(waited[waited.count / 2]),
            "waitedMaxMs": waited.last.map(JSONValue.number) ?? .null,
        ])))
    }

    /// Runs this executable with `arguments`: its exit status, the signal that ended it (0 if
    /// none), and its stdout's lines.
    static func runChild(_ arguments: [String]) throws -> (status: Int32, signal: Int32, lines: [String]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let signalled = process.terminationReason == .uncaughtSignal ? process.terminationStatus : 0
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        return (signalled == 0 ? process.terminationStatus : 0, signalled, lines)
    }

    /// One step of `kill`: resumes from the store, makes its taps (printing each once `send` has
    /// queued it), then SIGKILLs itself after `--kill-delay-ms`, or settles and reports.
    private func killChild(_ report: Report) async throws {
        let session = try await start(report)
        emitLine(["session": .string(session.sessionId), "token": .string(await session.token)])
        let events = await session.events()
        Task {
            for await event in events { Self.emit(event) }
        }
        // A restart found at start was reported before anyone listened.
        if let restart = await session.lastRestart { Self.emit(.restarted(restart)) }
        var actions: [FlowAction] = []
        if tapsFrom == 0 { actions = Self.onboarding }
        if max(1, tapsFrom) <= tapsTo { actions += (max(1, tapsFrom)...tapsTo).map(Self.tab) }
        let clock = ContinuousClock()
        for action in actions {
            let started = clock.now
            let engine = await session.hasLocalEngine
            do {
                _ = try await session.send(action)
            } catch let error as FlowError {
                emitLine(["error": .string("\(action.type) refused by the local engine: \(error)")])
                continue
            } catch {
                // Refused by the server (a correction reports it) or queued while offline: made either way.
                emitLine(["sendError": .string("\(action.type): \(error)")])
            }
            // How long the tap took to show, and whether the local engine was there for it (after a
            // restart it is not until the kept taps are answered: the tap waits for the server).
            emitLine(["made": .string(action.type), "params": .object(action.params),
                      "sendMs": .number((Report.milliseconds(clock.now - started) * 1000).rounded() / 1000), "engine": .bool(engine)])
        }
        if let killDelay {
            if killDelay > 0 { try await Task.sleep(for: .milliseconds(killDelay)) }
            Glibc.kill(getpid(), SIGKILL)
        }
        await session.settled()
        // Let the events of the last answer reach the stream's reader before the final line.
        try await Task.sleep(for: .milliseconds(50))
        await report.saw(session)
        report.extra.append(.init(key: "version", value: .integer(await session.confirmedState.version)))
        await session.close()
    }

    private func emitLine(_ object: JSONObject) { Self.emitLine(object) }

    /// One line on stdout, written at once (a kill may follow).
    static func emitLine(_ object: JSONObject) {
        var writer = JSONWriter()
        writer.writeValue(.object(object))
        FileHandle.standardOutput.write(Data(writer.takeBytes() + [UInt8(ascii: "\n")]))
    }

    static func emit(_ event: ClientEvent) {
        switch event {
        case .corrected(let correction):
            emitLine(["event": "corrected", "reason": .string(correction.reason.rawValue),
                      "taps": .array(correction.taps.map { .string($0.action.type) })])
        case .restarted(let restart):
            emitLine(["event": "restarted", "reason": .string(restart.reason), "taps": .array(restart.dropped.map { .string($0.action.type) })])
        default:
            break
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

// TapFaults+kills: the `kill` scenario — children that tap and SIGKILL themselves, resumed from the store — and the lines they print.

import FlowStackClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

extension TapFaults {
    /// When each step's child kills itself after its tap, in ms: before the request leaves, on
    /// its way (100 ms), at the server, with the answer on its way back, and after it came.
    static let killDelays = [0, 1, 5, 30, 90, 100, 110, 150, 190, 200, 210, 260, 320, 400, 60]

    /// Onboarding in a first child, then 30 steps: step k starts a child from the store that makes
    /// tap k and SIGKILLs itself after `killDelays[k % 15]` ms; a last child only settles. The
    /// children's lines (taps made, events, the final report) are summed here.
    func kill(_ report: Report) async throws {
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
    func killChild(_ report: Report) async throws {
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

    func emitLine(_ object: JSONObject) { Self.emitLine(object) }

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
}

// TapFaults+scenarios: running a scenario — tab switches, back to back, offline, the proxy's faults — and the taps they make.

import FlowStackClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

extension TapFaults {
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

    var configuration: FlowSession.Configuration {
        FlowSession.Configuration(server: server, userId: user, attributes: ["country": "US"],
                                  store: store.map { FileSessionStore(path: $0) } ?? MemorySessionStore(), timeout: TimeInterval(timeout))
    }

    /// The session of this run: started (or resumed from the store), its events counted.
    func start(_ report: Report) async throws -> FlowSession {
        let session = try await FlowSession.start(configuration)
        await report.saw(session)
        return session
    }

    /// Waits (at most 5 s) for the session's bundle: taps then run on the local engine.
    func waitForEngine(_ session: FlowSession) async throws {
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
    func tap(_ session: FlowSession, _ action: FlowAction, _ report: Report, timed: Bool = false) async {
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

    func finish(_ session: FlowSession, _ report: Report) async {
        await session.settled()
        await report.saw(session)
        report.count(await session.history)
        report.extra.append(.init(key: "version", value: .integer(await session.confirmedState.version)))
        await session.close()
    }

    /// 30 tab switches 120 ms apart: behind 100 ms each way, each is made while the one before (or a batch) is on the wire.
    func tabSwitches(_ report: Report) async throws {
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
    func backToBack(_ report: Report) async throws {
        let session = try await start(report)
        try await waitForEngine(session)
        for action in Self.onboarding { await tap(session, action, report) }
        for number in 1...200 { await tap(session, Self.tab(number), report, timed: true) }
        await finish(session, report)
    }

    /// 1,000 tab switches made offline on the local engine, then sent (in batches of at most 100).
    func offline(_ report: Report) async throws {
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
    func fault(_ report: Report) async throws {
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
}

// flowstack-tap bench: the time from send to the new stack, over random walks of the sample app.
import FlowStackClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `flowstack-tap bench --server URL [--taps N] [--mode engine|predictions|none] [--second-device]`
///
/// Walks the sample app (new US users, 50 taps a session, each tap chosen at random among what
/// the screen on top offers) through a `FlowSession`, and measures each `send` from the call to
/// the returned stack: with the local engine (the bundle), with the server's predictions only,
/// or with neither (every tap waits for its answer). A tap waits for the previous one to be
/// answered (`settled()`), as a person taps no faster than an answer comes back. With
/// `--second-device`, another client posts a tab switch or a modal on the same session before
/// every fifth tap, so some taps are shown on a state the server has left: the client corrects
/// them. Prints one line of figures; exits 1 when a tap failed.
struct TapBench {
    enum Mode: String, CaseIterable { case engine, predictions, none }

    var server: URL
    var taps = 1000
    var mode = Mode.engine
    var secondDevice = false

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        var server: URL?
        while let flag = rest.popFirst() {
            if flag == "--second-device" {
                secondDevice = true
                continue
            }
            guard let value = rest.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
            switch flag {
            case "--server": server = URL(string: value)
            case "--taps":
                guard let number = Int(value), number > 0 else { throw UsageError(message: "--taps is a count, such as 1000") }
                taps = number
            case "--mode":
                guard let parsed = Mode(rawValue: value) else { throw UsageError(message: "--mode is engine, predictions or none") }
                mode = parsed
            default: throw UsageError(message: "unknown bench option \(flag)")
            }
        }
        guard let server else { throw UsageError(message: "bench needs --server URL") }
        self.server = server
    }

    /// The actions the sample app offers on `feature`, with sample params.
    static func offered(on feature: String, top: String, random: inout SplitMix) -> [FlowAction] {
        switch feature {
        case "onboarding.first": return [FlowAction(type: "onboarding.showSecond", from: top)]
        case "onboarding.second":
            return [FlowAction(type: "onboarding.returnToFirst", from: top), FlowAction(type: "onboarding.completed", from: top),
                    FlowAction(type: "back", from: top)]
        case "home.first", "home.second":
            return [FlowAction(type: "home.selectTab", from: top, params: ["index": .integer(feature == "home.first" ? 1 : 0)]),
                    FlowAction(type: "home.presentModal", from: top, params: ["content": .string("c\(random.next() % 10)")])]
        case "modal": return [FlowAction(type: "modal.dismiss", from: top), FlowAction(type: "back", from: top)]
        default: return [FlowAction(type: "back", from: top)]
        }
    }

    func run() async -> Int32 {
        var random = SplitMix(seed: 2026)
        var latencies: [Duration] = []
        var confirmed = 0, corrected = 0, failed = 0, remote = 0
        let clock = ContinuousClock()
        var walk = 0
        while latencies.count + failed < taps {
            walk += 1
            let store = MemorySessionStore()
            let session: FlowSession
            do {
                session = try await FlowSession.start(FlowSession.Configuration(
                    server: server, userId: "bench-\(mode.rawValue)-\(walk)-\(random.next() % 1_000_000)", attributes: ["country": "US"],
                    store: store, usesBundle: mode == .engine, usesPredictions: mode != .none))
            } catch {
                FileHandle.standardError.write(Data("bench: cannot start a session: \(error)\n".utf8))
                return 1
            }
            for step in 0..<min(50, taps - latencies.count - failed) {
                if secondDevice, step % 5 == 4, let kept = store.all.first {
                    await Self.actAsAnotherDevice(server: server, session: kept, random: &random)
                }
                let state = await session.state
                guard let top = state.top else { break }
                let actions = Self.offered(on: top.feature, top: top.id, random: &random)
                let action = actions[Int(random.next() % UInt64(actions.count))]
                let started = clock.now
                do {
                    _ = try await session.send(action)
                    latencies.append(clock.now - started)
                } catch {
                    failed += 1  // a tap refused (e.g. made on a state another device had left)
                }
                await session.settled()
            }
            await session.settled()
            for event in await session.history {
                switch event {
                case .confirmed: confirmed += 1
                case .corrected: corrected += 1
                case .remote: remote += 1
                default: break
                }
            }
            await session.close()
        }
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            let value = sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
            return String(format: "%.3f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
        }
        let answered = confirmed + corrected
        let atOnce = latencies.filter { $0 < .milliseconds(10) }.count
        print("bench: mode \(mode.rawValue)\(secondDevice ? " with a second device" : ""): \(latencies.count) taps shown (\(atOnce) within 10 ms), \(failed) refused; "
              + "send → stack p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1.0)); "
              + "\(confirmed) confirmed, \(corrected) corrected"
              + (answered > 0 ? String(format: " (%.1f%% confirmed unchanged)", Double(confirmed) * 100 / Double(answered)) : "")
              + (remote > 0 ? ", \(remote) versions of the other device adopted" : ""))
        return 0
    }

    /// Another device posts a tab switch, or opens or closes the modal, on the same session,
    /// directly and without If-Match (the server applies it if the screen on top accepts it).
    static func actAsAnotherDevice(server: URL, session: StoredSession, random: inout SplitMix) async {
        let bodies = [#"{"type":"home.selectTab","params":{"index":1}}"#, #"{"type":"home.presentModal","params":{"content":"other"}}"#,
                      #"{"type":"modal.dismiss"}"#, #"{"type":"back"}"#]
        var request = URLRequest(url: server.appendingPathComponent("v1/sessions/\(session.sessionId)/actions"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(session.token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(bodies[Int(random.next() % UInt64(bodies.count))].utf8)
        _ = try? await URLSession.shared.data(for: request)
    }
}

/// SplitMix64: a small deterministic generator, so a bench run's walks repeat.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

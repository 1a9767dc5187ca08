// TapFaults+Report: what a faults run saw (taps made, taps not taken, sessions, timings), printed as its one JSON line.

import FlowStackClient
import Foundation

extension TapFaults {
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
}

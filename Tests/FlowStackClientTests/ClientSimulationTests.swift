// The client simulation: thousands of seeded schedules of taps and faults on ClientMachine and
// the real engine, each checked against the client's contract (Simulation/ClientSimulation.swift).
import FlowStackClient
import Foundation
import Testing

struct ClientSimulationTests {
    /// Runs `count` schedules from `firstSeed`; every failure names its seed, which replays exactly.
    static func run(_ count: Int, from firstSeed: UInt64, _ options: SimulationOptions = .standard) -> (reports: [SimulationReport], seconds: Double) {
        let started = ContinuousClock.now
        var reports: [SimulationReport] = []
        for seed in firstSeed..<(firstSeed + UInt64(count)) {
            var simulation = ClientSimulation(seed: seed, options: options)
            reports.append(simulation.run())
        }
        let elapsed = ContinuousClock.now - started
        return (reports, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func summary(_ name: String, _ result: (reports: [SimulationReport], seconds: Double)) -> String {
        let taps = result.reports.reduce(0) { $0 + $1.taps }
        let faults = result.reports.reduce(0) { $0 + $1.faults }
        let kills = result.reports.reduce(0) { $0 + $1.kills }
        let reported = result.reports.reduce(0) { $0 + $1.reported }
        let failed = result.reports.filter { !$0.failures.isEmpty }
        var reasons: [String: Int] = [:]
        for report in result.reports { reasons.merge(report.reasons, uniquingKeysWith: +) }
        let why = reasons.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return String(format: "simulation %@: %d schedules, %d taps (%d reported not taken), %d faults, %d kills in %.2f s (%.0f schedules/s); %d failed; not taken: %@",
                      name, result.reports.count, taps, reported, faults, kills, result.seconds, Double(result.reports.count) / max(result.seconds, 0.001), failed.count, why)
    }

    static func expectNoFailures(_ name: String, _ result: (reports: [SimulationReport], seconds: Double)) {
        print(summary(name, result))
        for report in result.reports.filter({ !$0.failures.isEmpty }).prefix(3) {
            Issue.record("\(report)")
        }
    }

    @Test func engineClientsUnderFaults() {
        Self.expectNoFailures("engine", Self.run(300, from: 1))
    }

    @Test func predictionClientsUnderFaults() {
        var options = SimulationOptions.standard
        options.usesBundle = false
        Self.expectNoFailures("predictions", Self.run(300, from: 1, options))
    }

    @Test func waitingClientsUnderFaults() {
        var options = SimulationOptions.standard
        options.usesBundle = false
        options.usesPredictions = false
        Self.expectNoFailures("waiting", Self.run(300, from: 1, options))
    }

    @Test func longOfflineQueues() {
        var options = SimulationOptions.standard
        options.taps = 1_000...1_500
        options.offlineTaps = 1_000
        options.tapRate = 900
        Self.expectNoFailures("offline queues", Self.run(3, from: 1, options))
    }

    @Test func tapsFasterThanAnswers() {
        var options = SimulationOptions.standard
        options.tapRate = 850
        Self.expectNoFailures("fast taps", Self.run(300, from: 1, options))
    }
}

extension ClientSimulationTests {
    /// `FLOWSTACK_SIM_SEED=76 swift test --filter replaysOneSeed`: one schedule, its whole trace printed.
    @Test func replaysOneSeed() {
        guard let text = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_SEED"], var seed = UInt64(text) else { return }
        // FLOWSTACK_SIM_FIND="corrected (differentAnswer)": the first seed from there whose report has it.
        let find = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_FIND"]
        var options = SimulationOptions.standard
        if ProcessInfo.processInfo.environment["FLOWSTACK_SIM_MODE"] == "predictions" { options.usesBundle = false }
        if ProcessInfo.processInfo.environment["FLOWSTACK_SIM_MODE"] == "waiting" { options.usesBundle = false; options.usesPredictions = false }
        if ProcessInfo.processInfo.environment["FLOWSTACK_SIM_MODE"] == "offline" {
            options.taps = 1_000...1_500
            options.offlineTaps = 1_000
            options.tapRate = 900
        }
        var simulation = ClientSimulation(seed: seed, options: options)
        var report = simulation.run()
        while let find, report.reasons[find] == nil, seed < 100_000 {
            seed += 1
            simulation = ClientSimulation(seed: seed, options: options)
            report = simulation.run()
        }
        print(report.trace.joined(separator: "\n"))
        print(report)
    }
}

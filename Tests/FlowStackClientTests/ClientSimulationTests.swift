// The client simulation: thousands of seeded schedules of taps and faults on ClientMachine and
// the real engine, each checked against the client's contract (Simulation/ClientSimulation.swift).
import FlowStackClient
import Foundation
import Testing

/// Run once per CI run: the simulation uses no database, so the run of the client's tests on
/// PostgreSQL (FLOWSTACK_TEST_DB_KIND=postgresql) skips it.
let simulationRuns = ProcessInfo.processInfo.environment["FLOWSTACK_TEST_DB_KIND"] != "postgresql"

@Suite(.enabled(if: simulationRuns))
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

    /// The kinds of schedule, and how many of each CI runs (10,020 in all, on two cores).
    enum Kind: String, CaseIterable, Sendable {
        /// The local engine (the bundle), every fault.
        case engine
        /// Server predictions only.
        case predictions
        /// Neither: every tap waits for its answer.
        case waiting
        /// Taps far faster than the network answers.
        case fastTaps
        /// Nobody else on the session: network faults and kills only; nothing may be dropped.
        case soleClient
        /// 1,000 taps offline, then more, on a network that comes back.
        case offlineQueue

        var options: SimulationOptions {
            var options = SimulationOptions.standard
            switch self {
            case .engine: break
            case .predictions: options.usesBundle = false
            case .waiting:
                options.usesBundle = false
                options.usesPredictions = false
            case .fastTaps: options.tapRate = 850
            case .soleClient:
                options.otherDevice = 0
                options.deleteSession = 0
            case .offlineQueue:
                options.taps = 1_000...1_200
                options.offlineTaps = 1_000
                options.tapRate = 900
                options.kill = 2
                options.otherDevice = 0
                options.deleteSession = 0
            }
            return options
        }

        var schedules: Int {
            switch self {
            case .engine: 3_000
            case .predictions: 1_500
            case .waiting: 1_500
            case .fastTaps: 1_500
            case .soleClient: 2_518
            case .offlineQueue: 2
            }
        }
    }

    /// Each kind in slices, so Swift Testing runs them on both cores; a slice's seeds are
    /// `kind.offset + slice * size …`. Set FLOWSTACK_SIM_SCALE=0.1 for a tenth of the schedules.
    static let slices = 12
    static var scale: Double { ProcessInfo.processInfo.environment["FLOWSTACK_SIM_SCALE"].flatMap(Double.init) ?? 1 }

    @Test(arguments: Kind.allCases, 0..<slices)
    func schedulesHoldTheContract(kind: Kind, slice: Int) {
        let total = max(1, Int((Double(kind.schedules) * Self.scale).rounded()))
        let size = (total + Self.slices - 1) / Self.slices
        let first = slice * size
        guard first < total else { return }
        let count = min(size, total - first)
        let offset = UInt64(Kind.allCases.firstIndex(of: kind) ?? 0) * 1_000_000
        Self.expectNoFailures("\(kind.rawValue) \(slice + 1)/\(Self.slices)", Self.run(count, from: offset + UInt64(first) + 1, kind.options))
    }
}

extension ClientSimulationTests {
    /// `FLOWSTACK_SIM_SEED=76 swift test --filter replaysOneSeed`: one schedule, its whole trace
    /// printed (a failure prints the seed; a slice's seeds start at its kind's index × 1,000,000).
    @Test func replaysOneSeed() {
        guard let text = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_SEED"], var seed = UInt64(text) else { return }
        // FLOWSTACK_SIM_FIND="corrected (differentAnswer)": the first seed from there whose report has it.
        let find = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_FIND"]
        // FLOWSTACK_SIM_KIND: engine (the default), predictions, waiting, fastTaps, soleClient, offlineQueue.
        let kind = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_KIND"].flatMap(Kind.init(rawValue:)) ?? .engine
        let options = kind.options
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

// The guardrails' sequential test against gbstats 0.8.0's numbers, and its false-alarm rate when looked at after every session.
import ExperimentStats
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SequentialProportionTestTests {
    /// gbstats 0.8.0 `SequentialTwoSidedTTest(ProportionStatistic(n, sum) ×2,
    /// SequentialConfig(alpha, difference_type="absolute", sequential_tuning_parameter))`, printed
    /// by scripts/sequential_reference.py: (baseline n, sum), (treatment n, sum), alpha, tuning,
    /// point estimate, confidence sequence, p-value.
    @Test(arguments: [
        ((1000, 100), (1000, 130), 0.05, 5000.0, 0.03, -0.014517962102267787, 0.07451796210226778, 0.37893150758579747),
        ((200, 0), (50, 12), 0.05, 5000.0, 0.24, -0.04500887504617501, 0.525008875046175, 0.1254739939590443),
        ((5000, 2500), (5000, 2400), 0.05, 5000.0, -0.020000000000000018, -0.05060252382963677, 0.01060252382963674, 0.624919729314937),
        ((90, 2), (10, 5), 0.05, 200.0, 0.4777777777777778, -0.012125763993053429, 0.967681319548609, 0.06019989524938218),
        ((400, 40), (100, 31), 0.01, 1000.0, 0.21, 0.03435070320340414, 0.3856492967965959, 0.0009182891825854367),
        ((12345, 617), (1234, 80), 0.05, 5000.0, 0.014850072831801536, -0.0076190487149150575, 0.037319194378518133, 0.6497821940130576),
    ] as [((Int, Int), (Int, Int), Double, Double, Double, Double, Double, Double)])
    func agreesWithGbstats(_ c: ((Int, Int), (Int, Int), Double, Double, Double, Double, Double, Double)) {
        let test = SequentialProportionTest(baseline: .init(units: c.0.0, conversions: c.0.1),
                                            treatment: .init(units: c.1.0, conversions: c.1.1), alpha: c.2, tuning: c.3)
        #expect(!test.usesPooledVariance)
        #expect(Self.close(test.difference, c.4))
        #expect(Self.close(test.confidenceSequence.lower, c.5))
        #expect(Self.close(test.confidenceSequence.upper, c.6))
        #expect(Self.close(test.pValue, c.7))
    }

    /// The direction decides: a significant rise is worse for a bad outcome, not for a conversion.
    @Test func directionDecidesWhatIsWorse() {
        let rise = SequentialProportionTest(baseline: .init(units: 400, conversions: 40),
                                            treatment: .init(units: 100, conversions: 31), alpha: 0.01, tuning: 1000)
        #expect(rise.isWorse(.higherIsWorse))
        #expect(!rise.isWorse(.lowerIsWorse))
        let noise = SequentialProportionTest(baseline: .init(units: 1000, conversions: 100),
                                             treatment: .init(units: 1000, conversions: 130))
        #expect(!noise.isWorse(.higherIsWorse) && !noise.isWorse(.lowerIsWorse))
    }

    /// Every new session refused, none of the old: gbstats' variance is zero, the pooled one
    /// catches it; with no sessions or no difference there is no verdict.
    @Test func everySessionRefusedIsCaughtWithThePooledVariance() {
        let all = SequentialProportionTest(baseline: .init(units: 50, conversions: 0),
                                           treatment: .init(units: 50, conversions: 50), tuning: 5000)
        #expect(all.usesPooledVariance)
        #expect(Self.close(all.variance, 0.25 * (2.0 / 50)))
        #expect(all.isWorse(.higherIsWorse))
        #expect(SequentialProportionTest(baseline: .init(units: 50, conversions: 0), treatment: .init(units: 50, conversions: 0)).pValue == 1)
        #expect(SequentialProportionTest(baseline: .init(units: 0, conversions: 0), treatment: .init(units: 5, conversions: 5)).pValue == 1)
    }

    /// The bound the README states for a planted regression (every new session refused, none of
    /// the old, half the sessions on each side, alpha 0.05): with gbstats' tuning of 5000 the first
    /// look with 33 sessions per side calls it, with a tuning of 200, 9 per side.
    @Test(arguments: [(5000.0, 33), (200.0, 9)])
    func plantedRegressionBound(tuning: Double, perSide: Int) {
        func worse(_ m: Int) -> Bool {
            SequentialProportionTest(baseline: .init(units: m, conversions: 0), treatment: .init(units: m, conversions: m),
                                     alpha: 0.05, tuning: tuning).isWorse(.higherIsWorse)
        }
        #expect(worse(perSide))
        #expect(!worse(perSide - 1))
    }

    /// Under no difference, looked at after every session (2,000 sessions, half per side, from 20
    /// per side on), the sequential test raises a false alarm in at most alpha of the runs, while
    /// a fixed-horizon one-sided z-test looked at as often raises one far more often: the
    /// simulation can tell a test that looking often inflates from one it does not.
    @Test(arguments: [(0.05, GuardrailDirection.higherIsWorse), (0.3, GuardrailDirection.lowerIsWorse)])
    func lookingAfterEverySessionKeepsFalseAlarmsBelowAlpha(rate: Double, direction: GuardrailDirection) {
        let runs = 400, sessions = 2000, alpha = 0.05, minimum = 20
        var random = SplitMix64(seed: 24)
        var sequentialAlarms = 0, naiveAlarms = 0
        for _ in 0..<runs {
            var a = ProportionSample(units: 0, conversions: 0), b = ProportionSample(units: 0, conversions: 0)
            var sequentialRaised = false, naiveRaised = false
            for session in 0..<sessions {
                let hit = random.nextUnit() < rate
                if session % 2 == 0 {
                    a.units += 1
                    if hit { a.conversions += 1 }
                } else {
                    b.units += 1
                    if hit { b.conversions += 1 }
                }
                guard a.units >= minimum, b.units >= minimum else { continue }
                let test = SequentialProportionTest(baseline: a, treatment: b, alpha: alpha)
                if !sequentialRaised, test.isWorse(direction) { sequentialRaised = true }
                if !naiveRaised, Self.naiveZTestIsWorse(a, b, alpha: alpha, direction) { naiveRaised = true }
                if sequentialRaised && naiveRaised { break }
            }
            if sequentialRaised { sequentialAlarms += 1 }
            if naiveRaised { naiveAlarms += 1 }
        }
        let sequentialRate = Double(sequentialAlarms) / Double(runs), naiveRate = Double(naiveAlarms) / Double(runs)
        #expect(sequentialRate <= alpha, "sequential false alarms \(sequentialRate)")
        #expect(naiveRate > 3 * alpha, "naive z-test false alarms \(naiveRate)")
    }

    /// The fixed-horizon one-sided z-test (unpooled), valid only when looked at once.
    static func naiveZTestIsWorse(_ a: ProportionSample, _ b: ProportionSample, alpha: Double,
                                  _ direction: GuardrailDirection) -> Bool {
        let variance = a.variance / Double(a.units) + b.variance / Double(b.units)
        guard variance > 0 else { return false }
        let z = (b.mean - a.mean) / variance.squareRoot()
        let critical = NormalDistribution.quantile(1 - alpha)
        return direction == .higherIsWorse ? z > critical : z < -critical
    }

    static func close(_ a: Double, _ b: Double) -> Bool {
        abs(a - b) <= 1e-9 * max(1, abs(b))
    }
}

/// A seeded generator: the simulation is the same at every run.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A uniform double in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

// The tests and the analysis against gbstats 0.8.0's own numbers, its refusals, and the JSON in and out.
import ExperimentStats
import JSON
import Testing

extension JSONValue {
    /// A member, or null: lets a test walk a document without unwrapping at each step.
    subscript(member key: String) -> JSONValue { objectValue?[key] ?? .null }
    subscript(element index: Int) -> JSONValue {
        guard let elements = arrayValue, elements.indices.contains(index) else { return .null }
        return elements[index]
    }
}

struct ExperimentAnalysisTests {
    static let refusalCases: [((Int, Int), (Int, Int), ComparisonProblem.Code, String)] = [
        ((10, 0), (10, 5), .baselineZero, "the baseline a has no conversions in 10 sessions"),
        ((0, 0), (10, 5), .baselineZero, "the baseline a has no sessions yet"),
        ((10, 5), (0, 0), .noUnits, "b has no sessions yet"),
        ((10, 5), (10, 0), .zeroVariance, "b converted in none of its 10 sessions"),
        ((10, 10), (10, 5), .zeroVariance, "a converted in all of its 10 sessions"),
        ((1, 1), (1, 0), .zeroVariance, "a has a single session and b has a single session"),
    ]

    static let sampleRatioCases: [([Int], [Double], Double)] = [
        ([5000, 5200], [0.5, 0.5], 0.0476703806561615),
        ([100, 120, 90], [1.0 / 3, 1.0 / 3, 1.0 / 3], 0.10455264901465708),
        ([820, 180], [0.9, 0.1], 3.3766311878873994e-17),
        ([100, 300], [0.5, 0.5], 1.5239706048320995e-23),
        ([10, 20, 5], [0.5, 0.5, 0], 0.16767724875179704),
        ([10, 20], [0, 1], 0.06788915486182893),
        ([0, 0], [0.5, 0.5], 1),
    ]

    /// TwoSidedTTest and EffectBayesianABTest on ProportionStatistics, default configurations:
    /// (baseline n, conversions), (treatment n, conversions), uplift, CI, p-value, chance to win.
    @Test(arguments: [
        ((100, 10), (100, 15), 0.4999999999999999, -0.6330449044193515, 1.6330449044193514, 0.3851735464223509, 0.807955875263074),
        ((1000, 100), (1010, 130), 0.2871287128712871, -0.029182727519160956, 0.6034401532617352, 0.07519223760722471, 0.962480218517753),
        ((2, 1), (2, 1), 0.0, -4.302652729749462, 4.302652729749462, 1.0, 0.5),
        ((5, 2), (3, 1), -0.16666666666666677, -2.346963036106698, 2.0136297027733643, 0.847701327717846, 0.41940375523806933),
        ((50000, 2500), (49000, 2600), 0.06122448979591827, 0.004482100801839299, 0.11796687878999723, 0.0344488014715405, 0.9827768481308722),
        ((10_000_000, 100_000), (10_000_000, 100_500), 0.00499999999999997, -0.0037538774830211553, 0.013753877483021095, 0.2629339828508348, 0.8685330152967633),
        ((7, 6), (9, 1), -0.8703703703703705, -1.1395459643486223, -0.6011947763921187, 1.2249498442473694e-05, 1.0470380523258475e-12),
    ])
    func equalsGBStats(baseline: (Int, Int), treatment: (Int, Int), uplift: Double, lower: Double, upper: Double,
                       pValue: Double, chanceToWin: Double) throws {
        let analysis = ExperimentAnalysis(variants: [
            .init(key: "a", units: baseline.0, conversions: baseline.1, weight: 0.5),
            .init(key: "b", units: treatment.0, conversions: treatment.1, weight: 0.5),
        ])
        #expect(analysis.comparisons[0] == nil)
        guard case .estimated(let estimate)? = analysis.comparisons[1] else {
            Issue.record("no estimate: \(String(describing: analysis.comparisons[1]))")
            return
        }
        #expect(abs(estimate.uplift - uplift) <= 1e-12 * max(1, abs(uplift)))
        #expect(close(estimate.lower, lower, 1e-10) && close(estimate.upper, upper, 1e-10), "\(estimate)")
        #expect(close(estimate.pValue, pValue, 1e-10), "\(estimate.pValue)")
        #expect(close(estimate.chanceToWin, chanceToWin, 1e-10), "\(estimate.chanceToWin)")
    }

    /// Where gbstats refuses (zero conversions in the baseline, no sessions, everyone or nobody
    /// converting, one session), the analysis gives its code and a reason instead of numbers.
    @Test(arguments: refusalCases)
    func refusals(baseline: (Int, Int), treatment: (Int, Int), code: ComparisonProblem.Code, reason: String) {
        let analysis = ExperimentAnalysis(variants: [
            .init(key: "a", units: baseline.0, conversions: baseline.1), .init(key: "b", units: treatment.0, conversions: treatment.1),
        ])
        guard case .unavailable(let problem)? = analysis.comparisons[1] else {
            Issue.record("expected \(code), got \(String(describing: analysis.comparisons[1]))")
            return
        }
        #expect(problem.code == code)
        #expect(problem.reason.hasPrefix(reason), "\(problem.reason)")
    }

    /// check_srm: chi-square against the weights; variants of weight 0 are skipped but keep their
    /// degree of freedom; no sessions is 1; one variant has no split.
    @Test(arguments: sampleRatioCases)
    func sampleRatio(units: [Int], weights: [Double], expected: Double) throws {
        let pValue = try #require(SampleRatioCheck(units: units, weights: weights).pValue)
        #expect(close(pValue, expected, 1e-10), "\(pValue)")
        #expect(SampleRatioCheck(units: [10], weights: [1]).pValue == nil)
    }

    /// A mismatch below 0.001 carries a warning with the observed and configured split; variants
    /// no longer configured (no weight) are left out of the check.
    @Test func sampleRatioWarning() {
        let analysis = ExperimentAnalysis(variants: [
            .init(key: "control", units: 100, conversions: 10, weight: 0.5),
            .init(key: "short", units: 300, conversions: 30, weight: 0.5),
            .init(key: "retired", units: 5000, conversions: 1),
        ])
        #expect(close(analysis.sampleRatio.pValue ?? 0, 1.5239706048320995e-23, 1e-10))
        #expect(analysis.sampleRatio.warning == "sample ratio mismatch: sessions split 25%/75% where the weights ask for 50%/50% "
            + "(p = 1.5e-23, below 0.001); assignment or counting is broken, so do not trust the comparisons")
        let fine = ExperimentAnalysis(variants: [.init(key: "a", units: 100, conversions: 1, weight: 0.5), .init(key: "b", units: 104, conversions: 1, weight: 0.5)])
        #expect(fine.sampleRatio.warning == nil && fine.sampleRatio.pValue != nil)
        let alone = ExperimentAnalysis(variants: [.init(key: "a", units: 100, conversions: 1, weight: 1)])
        #expect(alone.sampleRatio.pValue == nil && alone.sampleRatio.reason != nil)
    }

    /// The baseline can be any variant; the others are compared with it.
    @Test func anotherBaseline() {
        let analysis = ExperimentAnalysis(variants: [
            .init(key: "a", units: 100, conversions: 15), .init(key: "b", units: 100, conversions: 10), .init(key: "c", units: 100, conversions: 12),
        ], baseline: 1)
        #expect(analysis.comparisons[1] == nil)
        guard case .estimated(let a)? = analysis.comparisons[0], case .estimated(let c)? = analysis.comparisons[2] else {
            Issue.record("\(analysis.comparisons)")
            return
        }
        #expect(close(a.uplift, 0.5, 1e-12) && close(c.uplift, 0.2, 1e-12))
        #expect(close(a.pValue, 0.3851735464223509, 1e-10))
    }

    /// Counts read from JSON are checked, every problem with its pointer; what reads is written back.
    @Test func readAndWrite() throws {
        let bad = try JSONParser.parse(Array(#"{"variants":[{"key":"a","sessions":-1,"conversions":2},{"key":"a","sessions":3,"conversions":4,"weight":"x"}],"baseline":"z","extra":1}"#.utf8))
        #expect(throws: InvalidAnalysisInput.self) { try ExperimentAnalysis.read(bad) }
        do throws(InvalidAnalysisInput) {
            _ = try ExperimentAnalysis.read(bad)
        } catch {
            #expect(error.problems.map(\.pointer) == ["/extra", "/variants/0/sessions", "/variants/1/key", "/variants/1/conversions", "/variants/1/weight", "/baseline"])
        }
        let good = try JSONParser.parse(Array(#"{"variants":[{"key":"a","sessions":100,"conversions":10,"weight":0.5},{"key":"b","sessions":0,"conversions":0,"weight":0.5}]}"#.utf8))
        let analysis = try ExperimentAnalysis.read(good)
        var writer = JSONWriter()
        analysis.write(to: &writer)
        let written = try JSONParser.parse(writer.takeBytes())
        #expect(written[member: "baseline"] == "a")
        #expect(written[member: "variants"][element: 0] == ["key": "a", "sessions": 100, "weight": 0.5, "conversions": 10, "rate": 0.1])
        #expect(written[member: "variants"][element: 1][member: "rate"] == .null)
        #expect(written[member: "variants"][element: 1][member: "comparison"][member: "error"] == "NO_UNITS_IN_VARIATION")
        #expect(written[member: "srm"][member: "pValue"].doubleValue.map { $0 < 1e-20 } == true)
        #expect(written[member: "srm"][member: "warning"].stringValue != nil)
    }
}

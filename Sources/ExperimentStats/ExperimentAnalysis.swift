// ExperimentAnalysis: an experiment's variants compared with a baseline, and its sample-ratio check.

/// What a product team decides on: each variant's conversion rate, each variant against the
/// baseline (relative uplift, its 95% confidence interval and two-sided p-value from Welch's
/// t-test; the chance to beat the baseline from the Bayesian test), and a sample-ratio check of
/// the whole experiment. The numbers are gbstats 0.8.0's for the same counts.
///
/// ```swift
/// let analysis = ExperimentAnalysis(variants: [
///     .init(key: "control", units: 1_000, conversions: 100, weight: 0.5),
///     .init(key: "short", units: 1_010, conversions: 130, weight: 0.5),
/// ])
/// analysis.comparisons[1]       // .estimated(uplift 0.2871…, CI −0.0292…0.6034, pValue 0.0752…, chanceToWin 0.9625…)
/// analysis.sampleRatio.pValue   // 0.8234…
/// ```
public struct ExperimentAnalysis: Sendable, Equatable {
    /// One variant's counts for the metric.
    public struct Variant: Sendable, Equatable {
        public var key: String
        /// Units (sessions) in the variant.
        public var units: Int
        /// Units that converted (reached the metric).
        public var conversions: Int
        /// The configured share of the experiment's traffic; nil for a variant no longer
        /// configured (seen under an earlier revision), which the sample-ratio check leaves out.
        public var weight: Double?

        public init(key: String, units: Int, conversions: Int, weight: Double? = nil) {
            self.key = key
            self.units = units
            self.conversions = conversions
            self.weight = weight
        }

        public var sample: ProportionSample { ProportionSample(units: units, conversions: conversions) }

        /// The conversion rate, nil without units.
        public var rate: Double? { units == 0 ? nil : Double(conversions) / Double(units) }
    }

    /// A variant against the baseline.
    public enum Comparison: Sendable, Equatable {
        case estimated(Estimate)
        case unavailable(ComparisonProblem)
    }

    /// The numbers of a comparison that both tests could run.
    public struct Estimate: Sendable, Equatable {
        /// The relative uplift over the baseline's rate: 0.1 is 10% more conversions.
        public var uplift: Double
        /// The 95% confidence interval of the uplift (Welch's t).
        public var lower: Double
        public var upper: Double
        /// The two-sided p-value of "no difference".
        public var pValue: Double
        /// The posterior probability that the variant beats the baseline.
        public var chanceToWin: Double
    }

    /// The sample-ratio check: a p-value, with a warning below 0.001; or why there is none.
    public struct SampleRatio: Sendable, Equatable {
        public var pValue: Double?
        public var warning: String?
        public var reason: String?
    }

    public var variants: [Variant]
    /// The index of the baseline in ``variants``.
    public var baseline: Int
    /// One per variant, in order; nil at the baseline.
    public var comparisons: [Comparison?]
    public var sampleRatio: SampleRatio

    /// Analyses `variants` against `variants[baseline]`. Counts must be whole and consistent
    /// (`0 ≤ conversions ≤ units`); `ExperimentAnalysis.read(_:)` checks input from outside.
    public init(variants: [Variant], baseline: Int = 0) {
        precondition(variants.indices.contains(baseline), "the baseline \(baseline) is not one of \(variants.count) variants")
        self.variants = variants
        self.baseline = baseline
        let reference = variants[baseline]
        comparisons = variants.enumerated().map { index, variant -> Comparison? in
            guard index != baseline else { return nil }
            let effect = RelativeEffect(baseline: reference.sample, treatment: variant.sample)
            if let code = effect.problem {
                return .unavailable(ComparisonProblem(
                    code, baseline: (reference.key, reference.units, reference.conversions),
                    treatment: (variant.key, variant.units, variant.conversions)))
            }
            let frequentist = TwoSidedTTest(effect)
            let interval = frequentist.confidenceInterval
            return .estimated(Estimate(uplift: effect.estimate, lower: interval.lower, upper: interval.upper,
                                       pValue: frequentist.pValue, chanceToWin: BayesianEffectTest(effect).chanceToWin))
        }
        sampleRatio = Self.sampleRatio(variants.filter { $0.weight != nil })
    }

    static func sampleRatio(_ weighted: [Variant]) -> SampleRatio {
        guard weighted.count >= 2 else {
            return SampleRatio(reason: "fewer than two configured variants: there is no split to check")
        }
        let check = SampleRatioCheck(units: weighted.map(\.units), weights: weighted.map { $0.weight ?? 0 })
        guard let pValue = check.pValue else { return SampleRatio(reason: "there is no split to check") }
        var ratio = SampleRatio(pValue: pValue)
        if check.isMismatch {
            let total = Double(weighted.reduce(0) { $0 + $1.units })
            let totalWeight = weighted.reduce(0) { $0 + ($1.weight ?? 0) }
            let observed = weighted.map { percent(Double($0.units) / total) }.joined(separator: "/")
            let expected = weighted.map { percent(($0.weight ?? 0) / totalWeight) }.joined(separator: "/")
            ratio.warning = "sample ratio mismatch: sessions split \(observed) where the weights ask for \(expected) "
                + "(\(pClause(pValue)), below \(SampleRatioCheck.warningThreshold)); assignment or counting is broken, "
                + "so do not trust the comparisons"
        }
        return ratio
    }

    /// A share as a whole percentage, or with one decimal below 10%.
    static func percent(_ share: Double) -> String {
        let value = share * 100
        if value >= 10 || value == 0 { return String(Int((value).rounded())) + "%" }
        return String(Double(Int((value * 10).rounded())) / 10) + "%"
    }

    /// `p = 4.2e-4`: a small p-value in a sentence, to two significant digits.
    static func pClause(_ value: Double) -> String {
        guard value >= 1e-300 else { return "p < 1e-300" }
        var exponent = 0
        var mantissa = value
        while mantissa < 1 { mantissa *= 10; exponent -= 1 }
        while mantissa >= 10 { mantissa /= 10; exponent += 1 }
        var rounded = (mantissa * 10).rounded() / 10
        if rounded >= 10 { rounded /= 10; exponent += 1 }
        return "p = \(rounded)e\(exponent)"
    }
}

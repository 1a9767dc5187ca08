// ComparisonProblem: why two variants cannot be compared yet, in gbstats' words and in a sentence.

/// Why a variant cannot be compared with the baseline: gbstats' error code and a sentence that
/// names the variant and what is missing.
///
/// ```swift
/// ComparisonProblem(.zeroVariance, baseline: ("control", 10, 3), treatment: ("short", 10, 10)).reason
/// // "short converted in all of its 10 sessions: with no variance …"
/// ```
public struct ComparisonProblem: Sendable, Equatable, Error {
    /// gbstats 0.8.0's error messages, which are codes.
    public enum Code: String, Sendable, CaseIterable {
        /// The baseline's conversion rate is zero (or it has no units): a relative uplift over
        /// zero is undefined.
        case baselineZero = "ZERO_NEGATIVE_BASELINE_VARIATION"
        /// The treatment has no units.
        case noUnits = "NO_UNITS_IN_VARIATION"
        /// Either variant converted in none or all of its units: its variance is zero.
        case zeroVariance = "ZERO_NEGATIVE_VARIANCE"
    }

    public var code: Code
    public var reason: String

    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The problem `code` of this baseline and treatment, explained.
    public init(_ code: Code, baseline: (key: String, units: Int, conversions: Int),
                treatment: (key: String, units: Int, conversions: Int)) {
        self.code = code
        switch code {
        case .baselineZero:
            reason = baseline.units == 0
                ? "the baseline \(baseline.key) has no sessions yet: there is nothing to compare \(treatment.key) with"
                : "the baseline \(baseline.key) has no conversions in \(baseline.units) session\(baseline.units == 1 ? "" : "s"): an uplift relative to zero is undefined"
        case .noUnits:
            reason = "\(treatment.key) has no sessions yet"
        case .zeroVariance:
            let flat = [baseline, treatment].filter { $0.conversions == 0 || $0.conversions == $0.units }
            let described = flat.map { sample in
                sample.units == 1 ? "\(sample.key) has a single session"
                    : sample.conversions == 0 ? "\(sample.key) converted in none of its \(sample.units) sessions"
                    : "\(sample.key) converted in all of its \(sample.units) sessions"
            }
            reason = described.joined(separator: " and ") + ": with no variance there is no interval or p-value yet; more sessions are needed"
        }
    }
}

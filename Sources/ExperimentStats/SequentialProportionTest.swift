// SequentialProportionTest: an anytime-valid comparison of two rates, for guardrails watched continuously.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which way a guardrail metric gets worse.
public enum GuardrailDirection: String, Sendable, Equatable {
    /// A rate of a bad outcome (refused actions, dead ends): worse when it is higher.
    case higherIsWorse
    /// A conversion rate: worse when it is lower.
    case lowerIsWorse
}

/// A sequential test of the absolute difference of two rates (treatment − baseline) that stays
/// valid when it is looked at after every session: the chance that it *ever* calls a difference
/// that is not there stays at or below `alpha`, however often it is checked.
///
/// The method is gbstats' sequential testing (GrowthBook 0.8.0's `SequentialTwoSidedTTest`):
/// Howard, Ramdas, McAuliffe and Sekhon's asymptotic confidence sequences (Waudby-Smith et al.,
/// "Time-uniform central limit theory and asymptotic confidence sequences", arXiv:2103.06476v7,
/// eq. 9 for the sequence, eq. 155 for the p-value, eq. 161 for `rho`), with gbstats'
/// `sequential_tuning_parameter` (the total sessions at which the sequence is tightest) and
/// `difference_type="absolute"`: a guardrail's baseline rate is often zero (no refused action
/// on the old release), where a relative difference is undefined.
///
/// ```swift
/// let test = SequentialProportionTest(baseline: .init(units: 400, conversions: 40),
///                                     treatment: .init(units: 100, conversions: 31),
///                                     alpha: 0.01, tuning: 1000)
/// test.pValue                            // 0.000918289182585…
/// test.isWorse(.higherIsWorse)           // true: 31% against 10%
/// ```
///
/// The variance is gbstats' unpooled `p_b(1−p_b)/n_b + p_a(1−p_a)/n_a`. Where that is zero but
/// the rates differ (0% against 100%: every new session refused, none of the old), gbstats
/// has no answer; this test then takes the pooled variance `p̄(1−p̄)(1/n_a + 1/n_b)`, the one of
/// the null hypothesis, so a regression that hits every session is still caught.
public struct SequentialProportionTest: Sendable, Equatable {
    public var baseline: ProportionSample
    public var treatment: ProportionSample
    /// The chance of a false alarm over the whole (unbounded) run.
    public var alpha: Double
    /// gbstats' `sequential_tuning_parameter`: the number of sessions (both arms) around which
    /// the sequence is narrowest; 5000 in gbstats.
    public var tuning: Double

    public init(baseline: ProportionSample, treatment: ProportionSample, alpha: Double = 0.05, tuning: Double = 5000) {
        self.baseline = baseline
        self.treatment = treatment
        self.alpha = alpha
        self.tuning = tuning
    }

    /// Treatment's rate minus baseline's.
    public var difference: Double { treatment.mean - baseline.mean }

    /// Sessions in both arms.
    public var sessions: Int { baseline.units + treatment.units }

    /// Whether the variance is the pooled one (see the type's documentation).
    public var usesPooledVariance: Bool {
        unpooledVariance <= 0 && difference != 0
    }

    /// The variance of `difference`.
    public var variance: Double {
        guard baseline.units > 0, treatment.units > 0 else { return 0 }
        if !usesPooledVariance { return unpooledVariance }
        let pooled = Double(baseline.conversions + treatment.conversions) / Double(sessions)
        return pooled * (1 - pooled) * (1 / Double(baseline.units) + 1 / Double(treatment.units))
    }

    private var unpooledVariance: Double {
        guard baseline.units > 0, treatment.units > 0 else { return 0 }
        return treatment.variance / Double(treatment.units) + baseline.variance / Double(baseline.units)
    }

    /// eq. 161: the mixing parameter that makes the sequence tightest at `tuning` sessions.
    public var rho: Double {
        ((-2 * log(alpha) + log(-2 * log(alpha) + 1)) / tuning).squareRoot()
    }

    /// The `1 − alpha` confidence sequence of `difference` at this many sessions (eq. 9): it
    /// holds the true difference at every look at once, with probability `1 − alpha`.
    public var confidenceSequence: (lower: Double, upper: Double) {
        let n = Double(sessions)
        guard n > 0, variance > 0 else { return (-.infinity, .infinity) }
        let s2 = variance * n
        let r2 = rho * rho
        let width = s2.squareRoot() * ((2 * (n * r2 + 1)) * log((n * r2 + 1).squareRoot() / alpha) / pow(n * rho, 2)).squareRoot()
        return (difference - width, difference + width)
    }

    /// The anytime-valid p-value (eq. 155): one over the e-value, at most 1. Below `alpha` at
    /// any look, the difference is significant.
    public var pValue: Double {
        let n = Double(sessions)
        guard n > 0, variance > 0 else { return 1 }
        let st2 = difference * difference * n / variance
        let tr2p1 = n * rho * rho + 1
        // In logs: far-out evidence overflows exp() long before the p-value stops mattering.
        let logEvidence = rho * rho * st2 / (2 * tr2p1) - 0.5 * log(tr2p1)
        return min(exp(-logEvidence), 1)
    }

    /// Whether the treatment is significantly worse than the baseline, in `direction`.
    public func isWorse(_ direction: GuardrailDirection) -> Bool {
        guard pValue < alpha else { return false }
        switch direction {
        case .higherIsWorse: return difference > 0
        case .lowerIsWorse: return difference < 0
        }
    }
}

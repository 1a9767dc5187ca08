// RelativeEffect: a treatment's relative difference from the baseline and its variance (delta method).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The relative effect of a treatment over a baseline, `(m_b − m_a) / m_a`, and the variance of
/// that estimate by the delta method, as gbstats computes both for `difference_type="relative"`.
///
/// ```swift
/// let effect = RelativeEffect(baseline: .init(units: 100, conversions: 10), treatment: .init(units: 100, conversions: 15))
/// effect.estimate   // 0.5 (15% over 10%)
/// ```
public struct RelativeEffect: Sendable, Equatable {
    public var baseline: ProportionSample
    public var treatment: ProportionSample

    public init(baseline: ProportionSample, treatment: ProportionSample) {
        self.baseline = baseline
        self.treatment = treatment
    }

    /// `(m_b − m_a) / m_a`.
    public var estimate: Double {
        (treatment.mean - baseline.mean) / baseline.mean
    }

    /// `v_b / (m_a² n_b) + v_a m_b² / (m_a⁴ n_a)`, in gbstats' order of operations.
    public var variance: Double {
        let a = baseline, b = treatment
        return b.variance / (pow(a.mean, 2) * Double(b.units))
            + a.variance * pow(b.mean, 2) / (pow(a.mean, 4) * Double(a.units))
    }

    /// Why no test can compare these samples, or nil when both can run: the checks of gbstats'
    /// `TwoSidedTTest` and `EffectBayesianABTest`, which refuse the same inputs. When the
    /// treatment has no units the t-test calls it `ZERO_NEGATIVE_VARIANCE` and the Bayesian test
    /// `NO_UNITS_IN_VARIATION`; this says the latter, which tells a reader more.
    public var problem: ComparisonProblem.Code? {
        if baseline.mean == 0 { return .baselineZero }
        if treatment.units == 0 { return .noUnits }
        if baseline.hasZeroVariance || treatment.hasZeroVariance { return .zeroVariance }
        return nil
    }
}

// TwoSidedTTest: Welch's two-sided t-test of a relative effect, as gbstats' TwoSidedTTest.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The frequentist comparison: Welch's t-test of the relative effect with gbstats' defaults
/// (`alpha = 0.05`, `test_value = 0`, relative difference), so the numbers equal gbstats 0.8.0's
/// `TwoSidedTTest(...).compute_result()`.
///
/// ```swift
/// let test = TwoSidedTTest(RelativeEffect(baseline: .init(units: 100, conversions: 10),
///                                         treatment: .init(units: 100, conversions: 15)))
/// test.pValue               // 0.3851735464…
/// test.confidenceInterval   // (-0.6330449…, 1.6330449…)
/// ```
///
/// Only meaningful when ``RelativeEffect/problem`` is nil.
public struct TwoSidedTTest: Sendable, Equatable {
    public var effect: RelativeEffect
    /// One minus the confidence level: 0.05 for a 95% interval.
    public var alpha: Double

    public init(_ effect: RelativeEffect, alpha: Double = 0.05) {
        self.effect = effect
        self.alpha = alpha
    }

    /// The Welch–Satterthwaite degrees of freedom of the two samples' variances.
    public var degreesOfFreedom: Double {
        let a = effect.baseline, b = effect.treatment
        let na = Double(a.units), nb = Double(b.units)
        return pow(b.variance / nb + a.variance / na, 2)
            / (pow(b.variance, 2) / (pow(nb, 2) * (nb - 1)) + pow(a.variance, 2) / (pow(na, 2) * (na - 1)))
    }

    /// The t statistic: the estimate over its standard error.
    public var statistic: Double {
        effect.estimate / effect.variance.squareRoot()
    }

    /// The two-sided p-value, `P(|T| ≥ |t|)`. gbstats writes it `2 (1 − F(|t|))`; this takes the
    /// tail directly, which agrees to 1e-16 and keeps p-values far below that.
    public var pValue: Double {
        StudentTDistribution(degreesOfFreedom: degreesOfFreedom).twoSidedTail(statistic)
    }

    /// The `1 − alpha` confidence interval of the relative effect.
    public var confidenceInterval: (lower: Double, upper: Double) {
        let quantile = StudentTDistribution(degreesOfFreedom: degreesOfFreedom).quantile(1 - alpha / 2)
        let width = quantile * effect.variance.squareRoot()
        return (effect.estimate - width, effect.estimate + width)
    }
}

// SpecialFunctions: log-gamma and log-beta, accurate for the large arguments big experiments give.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The special functions the distributions are built on: `ln Γ`, `ln B`, and (in extensions)
/// the regularized incomplete beta and gamma functions.
///
/// Experiments with millions of sessions give a Student-t with millions of degrees of freedom,
/// whose CDF needs `ln B(ν/2, ½)`: computed as `ln Γ(ν/2) + ln Γ(½) − ln Γ(ν/2 + ½)` it would lose
/// eight digits to cancellation, so differences of large log-gammas come from Stirling's series
/// instead.
///
/// ```swift
/// SpecialFunctions.logGamma(0.5)            // 0.5723649429247001 (ln √π)
/// SpecialFunctions.logBeta(5e6, 0.5)        // −7.140109267274488, to about 1e-15
/// ```
public enum SpecialFunctions {
    /// `ln |Γ(x)|`, from the C library's reentrant `lgamma_r` (plain `lgamma` writes a global).
    public static func logGamma(_ x: Double) -> Double {
        var sign: Int32 = 0
        return lgamma_r(x, &sign)
    }

    /// `ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b)` for `a, b > 0`, without cancellation when
    /// either is large.
    public static func logBeta(_ a: Double, _ b: Double) -> Double {
        let small = min(a, b), large = max(a, b)
        if large < stirlingThreshold {
            return logGamma(a) + logGamma(b) - logGamma(a + b)
        }
        if small < stirlingThreshold {
            return logGamma(small) + logGammaDifference(large, small)
        }
        // Both large: Stirling for all three terms, the big logarithms folded into ratios.
        let sum = a + b
        return (large - 0.5) * -log1p(small / large) + (small - 0.5) * log(small / sum) - 0.5 * log(sum)
            + 0.5 * log(2 * Double.pi) + stirlingCorrection(a) + stirlingCorrection(b) - stirlingCorrection(sum)
    }

    /// `ln Γ(x) − ln Γ(x + d)` for `x ≥ 10`, `d ≥ 0`, from Stirling's series: the two large
    /// log-gammas never meet, only their difference, which is of the size of `d ln x`.
    static func logGammaDifference(_ x: Double, _ d: Double) -> Double {
        -(x - 0.5) * log1p(d / x) - d * log(x + d) + d + stirlingCorrection(x) - stirlingCorrection(x + d)
    }

    /// Where Stirling's series (seven terms) is good to a few units in the last place.
    static let stirlingThreshold = 10.0

    /// `ln Γ(x) − [(x − ½) ln x − x + ½ ln 2π]` for `x ≥ 10`: the tail of Stirling's series,
    /// `Σ B₂ₖ / (2k (2k − 1) x^(2k−1))`.
    static func stirlingCorrection(_ x: Double) -> Double {
        let inverse = 1 / x, square = inverse * inverse
        var series = 1.0 / 156
        series = series * square - 691.0 / 360_360
        series = series * square + 1.0 / 1188
        series = series * square - 1.0 / 1680
        series = series * square + 1.0 / 1260
        series = series * square - 1.0 / 360
        series = series * square + 1.0 / 12
        return series * inverse
    }

    /// Smallest magnitude the continued fractions let a denominator take (Lentz's method).
    static let tiny = 1e-300
}

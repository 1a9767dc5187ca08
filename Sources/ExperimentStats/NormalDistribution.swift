// NormalDistribution: the standard normal's CDF, survival function and quantile.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The standard normal distribution (mean 0, standard deviation 1).
///
/// ```swift
/// NormalDistribution.cdf(1.959963984540054)   // 0.975
/// NormalDistribution.quantile(0.975)          // 1.959963984540054
/// ```
public enum NormalDistribution {
    /// `P(Z ≤ z)`, through `erfc`, so the lower tail keeps its digits far out.
    public static func cdf(_ z: Double) -> Double {
        0.5 * erfc(-z / 2.0.squareRoot())
    }

    /// `P(Z > z)`, through `erfc`, so the upper tail keeps its digits far out.
    public static func sf(_ z: Double) -> Double {
        0.5 * erfc(z / 2.0.squareRoot())
    }

    /// The density at `z`.
    public static func pdf(_ z: Double) -> Double {
        exp(-0.5 * z * z) / (2 * Double.pi).squareRoot()
    }

    /// The `z` with `cdf(z) == p`, for `0 < p < 1` (−∞ and +∞ at 0 and 1): Acklam's rational
    /// approximation (relative error below 1.2e-9), then two Halley steps on `erfc`, which take it
    /// to the last digits.
    public static func quantile(_ p: Double) -> Double {
        if p <= 0 { return -.infinity }
        if p >= 1 { return .infinity }
        if p > 0.5 { return -quantile(1 - p) }
        var z: Double
        if p < lowTail {
            let q = (-2 * log(p)).squareRoot()
            z = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else {
            let q = p - 0.5, r = q * q
            z = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        }
        for _ in 0..<2 {
            let error = cdf(z) - p
            let step = error * (2 * Double.pi).squareRoot() * exp(0.5 * z * z)
            z -= step / (1 + 0.5 * z * step)
        }
        return z
    }

    /// Acklam's coefficients: the central region, then the tails below `lowTail`.
    private static let a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                            1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
    private static let b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                            6.680131188771972e+01, -1.328068155288572e+01]
    private static let c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                            -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
    private static let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                            3.754408661907416e+00]
    private static let lowTail = 0.02425
}

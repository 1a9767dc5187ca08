// StudentTDistribution: Student's t with any positive (not only whole) degrees of freedom.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Student's t distribution with `degreesOfFreedom` ν > 0, not necessarily whole (Welch's test
/// gives fractional ones).
///
/// Its tails are `½ I_{ν/(ν+t²)}(ν/2, ½)`, the regularized incomplete beta function, computed
/// without cancellation for ν in the billions; the quantile refines a Cornish–Fisher start by
/// safeguarded Newton steps on that tail.
///
/// ```swift
/// let t = StudentTDistribution(degreesOfFreedom: 2)
/// t.quantile(0.975)   // 4.302652729749462
/// t.sf(4.302652729749462)   // 0.025
/// ```
public struct StudentTDistribution: Sendable, Equatable {
    public var degreesOfFreedom: Double

    public init(degreesOfFreedom: Double) {
        precondition(degreesOfFreedom > 0, "a Student-t needs degrees of freedom > 0; got \(degreesOfFreedom)")
        self.degreesOfFreedom = degreesOfFreedom
    }

    /// `P(T > t)`.
    public func sf(_ t: Double) -> Double {
        if t.isNaN { return .nan }
        let tail = 0.5 * tails(t).beyond
        return t >= 0 ? tail : 1 - tail
    }

    /// `P(T ≤ t)`.
    public func cdf(_ t: Double) -> Double {
        if t.isNaN { return .nan }
        let tail = 0.5 * tails(t).beyond
        return t <= 0 ? tail : 1 - tail
    }

    /// `P(|T| ≥ |t|)`: the two-sided p-value of a statistic `t`.
    public func twoSidedTail(_ t: Double) -> Double {
        t.isNaN ? .nan : tails(t).beyond
    }

    /// `P(|T| ≥ |t|)` and `P(|T| < |t|)`, each computed directly.
    private func tails(_ t: Double) -> (beyond: Double, within: Double) {
        if t.isInfinite { return (0, 1) }
        let ν = degreesOfFreedom, square = t * t
        // x = ν/(ν + t²) and y = t²/(ν + t²), each from a ratio that cannot overflow.
        let x: Double, y: Double
        if square > ν {
            let r = ν / square
            (x, y) = (r / (1 + r), 1 / (1 + r))
        } else {
            let r = square / ν
            (x, y) = (1 / (1 + r), r / (1 + r))
        }
        let beta = SpecialFunctions.incompleteBeta(a: 0.5 * ν, b: 0.5, x: x, y: y)
        return (beta.lower, beta.upper)
    }

    /// The density at `t`.
    public func pdf(_ t: Double) -> Double {
        let ν = degreesOfFreedom
        // ln Γ((ν+1)/2) − ln Γ(ν/2) − ½ ln(νπ), as a difference of log-gammas that keeps its digits for large ν.
        let logNormalizer = -SpecialFunctions.logBeta(0.5 * ν, 0.5) - 0.5 * log(ν)
        return exp(logNormalizer - 0.5 * (ν + 1) * log1p(t * t / ν))
    }

    /// The `t` with `cdf(t) == p`, for `0 < p < 1` (−∞ and +∞ at 0 and 1).
    public func quantile(_ p: Double) -> Double {
        if p.isNaN { return .nan }
        if p <= 0 { return -.infinity }
        if p >= 1 { return .infinity }
        if p == 0.5 { return 0 }
        if p < 0.5 { return -upperQuantile(p) }
        return upperQuantile(1 - p)
    }

    /// The `t > 0` with `sf(t) == q`, for `0 < q < ½`.
    private func upperQuantile(_ q: Double) -> Double {
        let ν = degreesOfFreedom
        // Cornish–Fisher: the normal quantile corrected in powers of 1/ν; close for ν ≥ 3, a
        // start on the right side of the mode for smaller ν.
        let z = NormalDistribution.quantile(1 - q)
        let z2 = z * z
        var t = z + z * (z2 + 1) / (4 * ν)
            + z * ((5 * z2 + 16) * z2 + 3) / (96 * ν * ν)
            + z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * ν * ν * ν)
        if !(t > 0) || !t.isFinite { t = z }
        // Newton on sf(t) − q (decreasing in t), kept inside a bracket that each step narrows.
        var low = 0.0, high = Double.infinity
        for _ in 0..<200 {
            let error = sf(t) - q
            if error == 0 { return t }
            if error > 0 { low = t } else { high = t }
            var next = t + error / pdf(t)
            if !(next > low && next < high) {
                next = high.isFinite ? 0.5 * (low + high) : 2 * t
            }
            if abs(next - t) <= 1e-15 * t { return next }
            t = next
        }
        return t
    }
}

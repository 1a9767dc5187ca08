// SpecialFunctions+beta: the regularized incomplete beta function, the Student-t's CDF.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SpecialFunctions {
    /// The regularized incomplete beta function `I_x(a, b)` and its complement `1 − I_x(a, b)`,
    /// each computed directly (never as one minus the other when it is the small one).
    ///
    /// `x` and `y = 1 − x` are both passed so a caller that knows `y` precisely (the Student-t
    /// does: `t²/(ν + t²)`) does not lose it to rounding near `x = 1`.
    ///
    /// ```swift
    /// SpecialFunctions.incompleteBeta(a: 2, b: 3, x: 0.4, y: 0.6).lower   // 0.5248
    /// ```
    public static func incompleteBeta(a: Double, b: Double, x: Double, y: Double) -> (lower: Double, upper: Double) {
        precondition(a > 0 && b > 0, "incompleteBeta needs a > 0 and b > 0; got a = \(a), b = \(b)")
        if x <= 0 { return (0, 1) }
        if y <= 0 { return (1, 0) }
        // One parameter large, the other small, and the variable of the large one near 1 (a
        // Student-t with many degrees of freedom): the continued fraction would cancel there.
        if a >= largeParameter && b <= 1 && x >= exp(-1) {
            return incompleteBetaLargeA(a: a, b: b, x: x, y: y)
        }
        if b >= largeParameter && a <= 1 && y >= exp(-1) {
            let swapped = incompleteBetaLargeA(a: b, b: a, x: y, y: x)
            return (swapped.upper, swapped.lower)
        }
        let logX = x > 0.5 ? log1p(-y) : log(x)
        let logY = y > 0.5 ? log1p(-x) : log(y)
        let front = exp(a * logX + b * logY - logBeta(a, b))
        // The continued fraction converges fast below (a + 1)/(a + b + 2); above, use the symmetry
        // I_x(a, b) = 1 − I_y(b, a).
        if x < (a + 1) / (a + b + 2) {
            let lower = front * betaContinuedFraction(a: a, b: b, x: x) / a
            return (lower, 1 - lower)
        }
        let upper = front * betaContinuedFraction(a: b, b: a, x: y) / b
        return (1 - upper, upper)
    }

    /// From where a parameter counts as large for ``incompleteBetaLargeA(a:b:x:y:)``.
    static let largeParameter = 100.0

    /// `I_x(a, b)` and its complement for large `a`, `b ≤ 1` and `x ≥ 1/e`, as series of
    /// incomplete gammas.
    ///
    /// With `s = e^(−w)`, `B(a, b) I_x(a, b) = ∫_{w₀}^∞ e^(−aw) (1 − e^(−w))^(b−1) dw` where
    /// `w₀ = −ln x ≤ 1`. Writing `(1 − e^(−w))^(b−1) = w^(b−1) Σ cₙ wⁿ` (the Taylor series of
    /// `((1 − e^(−w))/w)^(b−1)`, radius 2π) and integrating term by term:
    /// `I_x(a, b) = Γ(a+b)/(Γ(a) a^b) · Σ cₙ (b)ₙ Q(b+n, a w₀) / aⁿ`, and the complement is the
    /// same sum with `P` for `Q` (an integral over `[0, w₀]`, inside the radius, so it converges).
    /// Every term is small next to the first when `a` is large: no cancellation anywhere.
    static func incompleteBetaLargeA(a: Double, b: Double, x: Double, y: Double) -> (lower: Double, upper: Double) {
        let u = -a * log1p(-y)
        let prefactor = exp(-logGammaDifference(a, b) - b * log(a))
        // g(w) = (1 − e^(−w))/w = Σ (−1)ᵏ wᵏ/(k+1)!, and c = g^(b−1) by J. C. P. Miller's
        // recurrence for a power of a series: n cₙ = Σₖ ((β + 1)k − n) gₖ cₙ₋ₖ, β = b − 1.
        let terms = 60
        var g = [Double](repeating: 0, count: terms)
        var factorial = 1.0
        for k in 0..<terms {
            factorial *= Double(k + 1)
            g[k] = (k % 2 == 0 ? 1 : -1) / factorial
        }
        var c = [Double](repeating: 0, count: terms)
        c[0] = 1
        var lower = 0.0, upper = 0.0
        var rising = 1.0, power = 1.0  // (b)ₙ and aⁿ
        var quiet = 0
        for n in 0..<terms {
            if n > 0 {
                var sum = 0.0
                for k in 1...n { sum += (b * Double(k) - Double(n)) * g[k] * c[n - k] }
                c[n] = sum / Double(n)
                rising *= b + Double(n - 1)
                power *= a
            }
            let gamma = incompleteGamma(a: b + Double(n), x: u)
            let weight = c[n] * rising / power
            let (lowerTerm, upperTerm) = (weight * gamma.upper, weight * gamma.lower)
            lower += lowerTerm
            upper += upperTerm
            let small = abs(lowerTerm) <= 1e-17 * abs(lower) && abs(upperTerm) <= 1e-17 * abs(upper)
            quiet = small ? quiet + 1 : 0
            if quiet == 2 { break }
        }
        return (prefactor * lower, prefactor * upper)
    }

    /// The continued fraction of `I_x(a, b)`, evaluated by the modified Lentz method. It takes
    /// about `√max(a, b)` terms at worst: a few thousand for ten million sessions.
    static func betaContinuedFraction(a: Double, b: Double, x: Double) -> Double {
        let sum = a + b, above = a + 1, below = a - 1
        var c = 1.0
        var d = 1 - sum * x / above
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var fraction = d
        var m = 1.0
        while m <= maxTerms {
            let twice = 2 * m
            // The even step.
            var term = m * (b - m) * x / ((below + twice) * (a + twice))
            d = 1 + term * d
            if abs(d) < tiny { d = tiny }
            c = 1 + term / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            fraction *= d * c
            // The odd step.
            term = -(a + m) * (sum + m) * x / ((a + twice) * (above + twice))
            d = 1 + term * d
            if abs(d) < tiny { d = tiny }
            c = 1 + term / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let change = d * c
            fraction *= change
            if abs(change - 1) < 1e-16 { break }
            m += 1
        }
        return fraction
    }

    /// Enough terms for `max(a, b)` up to about 10¹⁰ (its square root, times ten).
    static let maxTerms = 1_000_000.0
}

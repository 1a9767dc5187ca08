// SpecialFunctions+gamma: the regularized incomplete gamma function, the chi-square's CDF.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SpecialFunctions {
    /// The regularized incomplete gamma functions `P(a, x)` and `Q(a, x) = 1 − P(a, x)`, each
    /// computed directly when it is the small one (a series below `x = a + 1`, a continued
    /// fraction above).
    ///
    /// ```swift
    /// SpecialFunctions.incompleteGamma(a: 0.5, x: 1.92073).upper   // 0.05: chi-square (1 df) beyond 3.84146
    /// ```
    public static func incompleteGamma(a: Double, x: Double) -> (lower: Double, upper: Double) {
        precondition(a > 0, "incompleteGamma needs a > 0; got a = \(a)")
        if x <= 0 { return (0, 1) }
        if x.isInfinite { return (1, 0) }
        let front = exp(-x + a * log(x) - logGamma(a))
        if x < a + 1 {
            // P = e^(−x) x^a / Γ(a + 1) · Σₙ xⁿ / ((a + 1)…(a + n))
            var denominator = a, term = 1 / a, sum = term
            for _ in 0..<100_000 {
                denominator += 1
                term *= x / denominator
                sum += term
                if abs(term) < abs(sum) * 1e-17 { break }
            }
            let lower = sum * front
            return (lower, 1 - lower)
        }
        // Q = e^(−x) x^a / Γ(a) · 1/(x + 1 − a − 1·(1 − a)/(x + 3 − a − …)), by Lentz's method.
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var fraction = d
        var i = 1.0
        while i <= maxTerms {
            let term = -i * (i - a)
            b += 2
            d = term * d + b
            if abs(d) < tiny { d = tiny }
            c = b + term / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let change = d * c
            fraction *= change
            if abs(change - 1) < 1e-16 { break }
            i += 1
        }
        let upper = front * fraction
        return (1 - upper, upper)
    }
}

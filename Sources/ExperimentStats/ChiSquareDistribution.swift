// ChiSquareDistribution: the chi-square distribution, for the sample-ratio check.

/// The chi-square distribution with `degreesOfFreedom` k > 0.
///
/// ```swift
/// ChiSquareDistribution(degreesOfFreedom: 1).sf(3.841458820694124)   // 0.05
/// ```
public struct ChiSquareDistribution: Sendable, Equatable {
    public var degreesOfFreedom: Double

    public init(degreesOfFreedom: Double) {
        precondition(degreesOfFreedom > 0, "a chi-square needs degrees of freedom > 0; got \(degreesOfFreedom)")
        self.degreesOfFreedom = degreesOfFreedom
    }

    /// `P(X > x)`: the upper regularized incomplete gamma `Q(k/2, x/2)`.
    public func sf(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        return SpecialFunctions.incompleteGamma(a: 0.5 * degreesOfFreedom, x: 0.5 * x).upper
    }

    /// `P(X ≤ x)`: `P(k/2, x/2)`.
    public func cdf(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        return SpecialFunctions.incompleteGamma(a: 0.5 * degreesOfFreedom, x: 0.5 * x).lower
    }
}

// SampleRatioCheck: the chi-square test of observed units against configured weights (gbstats' check_srm).

/// A sample-ratio-mismatch check: do the units each variant got match the weights it was
/// configured with? A small p-value means assignment or counting is broken, and the
/// comparisons cannot be trusted.
///
/// As gbstats 0.8.0's `utils.check_srm(users, weights)`: Pearson's chi-square over the variants
/// whose weight is above zero, with `variants − 1` degrees of freedom (variants of weight zero
/// still count there); a p-value of 1 when there are no units at all.
///
/// ```swift
/// SampleRatioCheck(units: [5_000, 5_200], weights: [0.5, 0.5]).pValue   // 0.0477…
/// ```
public struct SampleRatioCheck: Sendable, Equatable {
    public var units: [Int]
    public var weights: [Double]

    /// The p-value below which a mismatch is reported.
    public static let warningThreshold = 0.001

    public init(units: [Int], weights: [Double]) {
        precondition(units.count == weights.count, "one weight per variant: \(units.count) units, \(weights.count) weights")
        self.units = units
        self.weights = weights
    }

    /// The chi-square statistic.
    public var statistic: Double {
        let total = Double(units.reduce(0, +))
        let totalWeight = weights.reduce(0, +)
        var sum = 0.0
        for (observed, weight) in zip(units, weights) where weight > 0 {
            let expected = weight / totalWeight * total
            sum += (Double(observed) - expected) * (Double(observed) - expected) / expected
        }
        return sum
    }

    /// The p-value, or nil with fewer than two variants (gbstats gives NaN: there is no split).
    public var pValue: Double? {
        guard units.count >= 2 else { return nil }
        if units.allSatisfy({ $0 == 0 }) { return 1 }
        return ChiSquareDistribution(degreesOfFreedom: Double(units.count - 1)).sf(statistic)
    }

    /// Whether the p-value is below ``warningThreshold``.
    public var isMismatch: Bool {
        (pValue ?? 1) < Self.warningThreshold
    }
}

// Bucketing+ranges: weights and coverage turned into bucket ranges, and a hash into a variation.

extension Bucketing {
    /// The weight sum outside which a weight list is ignored in favour of equal weights
    /// (GrowthBook's tolerance, which absorbs rounding such as three weights of 0.33).
    public static let weightSumTolerance: ClosedRange<Double> = 0.99...1.01

    /// `count` equal weights, or none when `count` is not positive.
    ///
    /// ```swift
    /// Bucketing.equalWeights(count: 4)   // [0.25, 0.25, 0.25, 0.25]
    /// ```
    public static func equalWeights(count: Int) -> [Double] {
        guard count > 0 else { return [] }
        return Array(repeating: 1 / Double(count), count: count)
    }

    /// Whether `weights` can bucket `count` variations: one finite, non-negative weight per
    /// variation, summing to 1 within ``weightSumTolerance``.
    ///
    /// Stricter than the JS SDK (which checks only the count and the sum) and the same as the
    /// Python SDK: a negative weight would make ranges overlap or run backwards.
    public static func areUsable(weights: [Double], count: Int) -> Bool {
        guard weights.count == count else { return false }
        var sum = 0.0
        for weight in weights {
            guard weight.isFinite, weight >= 0 else { return false }
            sum += weight
        }
        return weightSumTolerance.contains(sum)
    }

    /// GrowthBook's `getBucketRanges`: one range per variation, laid end to end by weight, each
    /// shortened to `coverage` of its weight.
    ///
    /// `coverage` is clamped to [0, 1]; `weights` that are `nil`, of the wrong count, negative
    /// or not summing to about 1 are replaced by equal weights. Shortening each range in place
    /// (rather than shrinking the whole span) keeps a user in the same variation when coverage
    /// later grows.
    ///
    /// ```swift
    /// Bucketing.bucketRanges(count: 2, coverage: 0.5, weights: [0.5, 0.5])
    /// // [[0, 0.25), [0.5, 0.75)]
    /// ```
    public static func bucketRanges(count: Int, coverage: Double = 1, weights: [Double]? = nil) -> [BucketRange] {
        // NaN compares false with everything: treat it as no coverage rather than let it through.
        let clamped = coverage.isNaN ? 0 : min(max(coverage, 0), 1)
        let usable: [Double]
        if let weights, areUsable(weights: weights, count: count) {
            usable = weights
        } else {
            usable = equalWeights(count: count)
        }
        var cumulative = 0.0
        var ranges: [BucketRange] = []
        ranges.reserveCapacity(usable.count)
        for weight in usable {
            let start = cumulative
            cumulative += weight
            ranges.append(BucketRange(start: start, end: start + clamped * weight))
        }
        return ranges
    }

    /// The index of the range that holds `n`, or `nil` when none does (the user is outside the
    /// experiment's coverage). GrowthBook's `chooseVariation`, with `nil` for its `-1`.
    ///
    /// ```swift
    /// let ranges = Bucketing.bucketRanges(count: 2, coverage: 0.5)
    /// Bucketing.chooseVariation(n: 0.6, ranges: ranges)   // 1
    /// Bucketing.chooseVariation(n: 0.4, ranges: ranges)   // nil
    /// ```
    public static func chooseVariation(n: Double, ranges: [BucketRange]) -> Int? {
        ranges.firstIndex { $0.contains(n) }
    }
}

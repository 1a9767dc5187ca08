// ExperimentDefinition+assign: which variant, if any, a context lands in, bucketed as GrowthBook does.

extension ExperimentDefinition {
    /// The hash version experiments use: GrowthBook's unbiased version 2.
    public static let hashVersion = 2

    /// Buckets `context` into a variant exactly as a GrowthBook SDK does for an experiment with
    /// `hashVersion: 2`: `n = hash(seed, value, 2)`, `ranges = bucketRanges(count, coverage,
    /// weights)`, `chooseVariation(n, ranges)`.
    ///
    /// `nil` (the session is not in the experiment) when the experiment is disabled, not
    /// running (a draft, stopped or concluded experiment assigns nobody) or has no variants, when `when` does not hold, when the hash attribute is missing, empty or not a
    /// string or number, or when `n` falls outside every range (coverage below 1).
    ///
    /// `key` is the experiment's key (it lives in the URL, not in the definition) and is the
    /// seed unless the definition names one.
    ///
    /// ```swift
    /// experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "u-2"))?.variantKey
    /// // "short"
    /// ```
    public func assign(key: String, context: EvaluationContext) -> ExperimentAssignment? {
        guard assignsSessions else { return nil }
        if let when, !when.matches(context) { return nil }
        guard case .value(let hashValue) = context.hashInput(for: hashAttribute) else { return nil }
        guard let n = Bucketing.hash(seed: seed ?? key, value: hashValue, version: Self.hashVersion) else { return nil }
        let ranges = Bucketing.bucketRanges(count: variants.count, coverage: coverage, weights: weights)
        guard let index = Bucketing.chooseVariation(n: n, ranges: ranges), variants.indices.contains(index) else { return nil }
        let variant = variants[index]
        return ExperimentAssignment(
            experimentKey: key, variantKey: variant.key, variantIndex: index, pinnedFlows: variant.pinnedFlows,
            hashAttribute: hashAttribute, hashValue: hashValue, bucket: n)
    }
}

// FlagDefinition+evaluate: a flag's value for one context, with OpenFeature's reason.

import JSON

extension FlagDefinition {
    /// The hash version splits use: GrowthBook's unbiased version 2.
    public static let hashVersion = 2

    /// Evaluates the flag for `context`, in this order:
    ///
    /// 1. disabled → the default variant, `DISABLED`;
    /// 2. the rules, in order → the first whose condition holds, `TARGETING_MATCH`;
    /// 3. the split → the variant whose bucket holds GrowthBook's hash v2 of
    ///    (`seed` or the flag's `key`, the `hashAttribute`'s value), `SPLIT`;
    /// 4. the default variant: `STATIC` when the flag has neither rules nor split, else `DEFAULT`.
    ///
    /// A context without the hash attribute (or with it empty) skips the split and gets the
    /// default variant with `DEFAULT`, as GrowthBook skips a rule whose hash attribute is
    /// missing and as flagd's fractional evaluation falls back to the default: an anonymous
    /// user is ordinary, not an error, and OpenFeature's `TARGETING_KEY_MISSING` would make
    /// every such session report one. A hash attribute of a type that cannot be hashed (a
    /// boolean, an array, an object) is a client mistake worth seeing: `ERROR` with
    /// `INVALID_CONTEXT`, still serving the default variant's value.
    ///
    /// A flag built in code that names a variant it does not define answers `ERROR` with
    /// `GENERAL` rather than trapping.
    ///
    /// `requiringTargetingKey` is for callers whose protocol makes the targeting key mandatory
    /// (OFREP): a split that hashes on the targeting key (`userId` or `targetingKey`) of a context
    /// without one then answers `ERROR` with `TARGETING_KEY_MISSING` instead of the default
    /// variant. Every other path, and every other hash attribute, is evaluated as without it.
    ///
    /// ```swift
    /// let flag = try FlagDefinition(json: ["variants": ["on": true, "off": false], "defaultVariant": "off",
    ///     "split": [["variant": "on", "weight": 0.5], ["variant": "off", "weight": 0.5]]])
    /// flag.evaluate(key: "new-home", context: EvaluationContext(targetingKey: "u-1")).reason   // .split
    /// flag.evaluate(key: "new-home", context: EvaluationContext()).reason                      // .default
    /// ```
    public func evaluate(key: String, context: EvaluationContext, requiringTargetingKey: Bool = false) -> EvaluationDetails {
        guard let defaultValue = variants[defaultVariant] else {
            return .failure(.general, message: "flag \(DefinitionReader.quoted(key)) has default variant \(DefinitionReader.quoted(defaultVariant)), which it does not define")
        }
        func serve(_ name: String, _ reason: EvaluationReason) -> EvaluationDetails {
            guard let value = variants[name] else {
                return .failure(
                    .general, message: "flag \(DefinitionReader.quoted(key)) serves variant \(DefinitionReader.quoted(name)), which it does not define",
                    value: defaultValue, variant: defaultVariant)
            }
            return EvaluationDetails(value: value, variant: name, reason: reason)
        }

        guard enabled else { return serve(defaultVariant, .disabled) }

        for rule in rules where rule.when.matches(context) {
            return serve(rule.variant, .targetingMatch)
        }

        if let split, !split.isEmpty {
            switch context.hashInput(for: hashAttribute) {
            case .value(let hashValue):
                if let variant = bucket(split, key: key, hashValue: hashValue) {
                    return serve(variant, .split)
                }
            case .missing:
                if requiringTargetingKey, EvaluationContext.targetingKeyNames.contains(hashAttribute) {
                    return .failure(
                        .targetingKeyMissing,
                        message: "flag \(DefinitionReader.quoted(key)) splits on the targeting key, which the context does not have",
                        value: defaultValue, variant: defaultVariant)
                }
            case .unusable(let typeName):
                return .failure(
                    .invalidContext,
                    message: "flag \(DefinitionReader.quoted(key)) splits on attribute \(DefinitionReader.quoted(hashAttribute)), which is \(typeName == "array" || typeName == "object" ? "an" : "a") \(typeName); expected a string or a number",
                    value: defaultValue, variant: defaultVariant)
            }
        }

        return serve(defaultVariant, rules.isEmpty && split == nil ? .static : .default)
    }

    /// The split's variant for `hashValue`, or `nil` when the hash falls in no bucket (weights
    /// adding up to a little under 1 leave a gap at the top).
    func bucket(_ split: [Allocation], key: String, hashValue: String) -> String? {
        guard let n = Bucketing.hash(seed: seed ?? key, value: hashValue, version: Self.hashVersion) else { return nil }
        let ranges = Bucketing.bucketRanges(count: split.count, coverage: 1, weights: split.map(\.weight))
        return Bucketing.chooseVariation(n: n, ranges: ranges).map { split[$0].variant }
    }
}

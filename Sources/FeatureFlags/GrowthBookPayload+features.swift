// GrowthBookPayload+features: one flag or experiment as a GrowthBook feature: default value and rules.

import JSON

extension GrowthBookPayload {
    /// The GrowthBook feature that gives every user the value ``FlagDefinition/evaluate(key:context:)``
    /// gives, or throws for a flag that has none.
    ///
    /// - disabled: only the default value;
    /// - each rule, in order: `{"condition": …, "force": value}`;
    /// - the split: an experiment rule over the split's values (`variations`), its weights,
    ///   `coverage: 1`, the flag's seed (default: its key), its hash attribute and `hashVersion:
    ///   2`, with the variant names in `meta`; the rule's condition admits only users whose hash
    ///   attribute is a string or a number (FlowStack does not bucket a boolean, the JS SDK
    ///   would); a one-variant split, which SDKs do not run as an experiment (they need two
    ///   variations), becomes a force rule over the same bucket `range`;
    /// - the default variant's value as `defaultValue`.
    ///
    /// ```swift
    /// try GrowthBookPayload.feature(flag: flag, key: "new-home")
    /// // {"defaultValue":false,"rules":[{"key":"new-home","variations":[true,false],"weights":[0.1,0.9],"coverage":1,…}]}
    /// ```
    public static func feature(flag: FlagDefinition, key: String) throws(Untranslatable) -> JSONValue {
        let root = JSONPointer()
        guard let defaultValue = flag.variants[flag.defaultVariant] else {
            throw Untranslatable(path: root.appending("defaultVariant"), reason: "\(JSONValue.string(flag.defaultVariant).jsonText) is not a variant")
        }
        guard flag.enabled else { return ["defaultValue": defaultValue, "rules": []] }
        var rules: [JSONValue] = []
        for (index, rule) in flag.rules.enumerated() {
            let path = root.appending("rules").appending(index)
            let value = try forcedValue(flag, rule.variant, at: path.appending("variant"))
            rules.append(["condition": try condition(rule.when, at: path.appending("when")), "force": value])
        }
        if let split = flag.split, !split.isEmpty {
            let path = root.appending("split")
            let hashAttribute = try attributeName(flag.hashAttribute, at: root.appending("hashAttribute"))
            let bucketing = BucketingRules(
                key: key, seed: flag.seed ?? key, hashAttribute: hashAttribute, coverage: 1,
                weights: split.map(\.weight), names: split.map(\.variant), condition: nil)
            if split.count == 1 {
                let value = try forcedValue(flag, split[0].variant, at: path.appending(0).appending("variant"))
                rules.append(bucketing.rolloutRule(force: value))
            } else {
                var values: [JSONValue] = []
                for (index, allocation) in split.enumerated() {
                    guard let value = flag.variants[allocation.variant] else {
                        throw Untranslatable(path: path.appending(index).appending("variant"), reason: "\(JSONValue.string(allocation.variant).jsonText) is not a variant")
                    }
                    values.append(value)
                }
                rules.append(bucketing.experimentRule(variations: values))
            }
        }
        return ["defaultValue": defaultValue, "rules": .array(rules)]
    }

    /// The GrowthBook feature whose value is the key of the variant
    /// ``ExperimentDefinition/assign(key:context:)`` puts the user in, `null` when it puts them
    /// in none; throws for an experiment that has none.
    ///
    /// One experiment rule: `key` is the experiment's key (what a GrowthBook tracking callback
    /// reports), `variations` and `meta` the variant keys, then the weights, coverage, seed,
    /// hash attribute and `hashVersion: 2` that FlowStack buckets with; its condition is the
    /// experiment's `when` and a string or number hash attribute. A one-variant experiment
    /// becomes a force rule over its bucket `range` (SDKs run no experiment of one variation).
    ///
    /// ```swift
    /// try GrowthBookPayload.feature(experiment: experiment, key: "onboarding-length")
    /// // {"defaultValue":null,"rules":[{"key":"onboarding-length","variations":["control","short"],…}]}
    /// ```
    public static func feature(experiment: ExperimentDefinition, key: String) throws(Untranslatable) -> JSONValue {
        let root = JSONPointer()
        guard experiment.assignsSessions else { return ["defaultValue": nil, "rules": []] }
        let hashAttribute = try attributeName(experiment.hashAttribute, at: root.appending("hashAttribute"))
        let when = try experiment.when.map { (when) throws(Untranslatable) in try condition(when, at: root.appending("when")) }
        let keys = experiment.variants.map(\.key)
        let bucketing = BucketingRules(
            key: key, seed: experiment.seed ?? key, hashAttribute: hashAttribute, coverage: experiment.coverage,
            weights: experiment.weights, names: keys, condition: when)
        let rule = keys.count == 1
            ? bucketing.rolloutRule(force: .string(keys[0]))
            : bucketing.experimentRule(variations: keys.map(JSONValue.string))
        return ["defaultValue": nil, "rules": [rule]]
    }

    /// The value of `variant` for a force rule. GrowthBook's Python SDK takes `"force": null` for
    /// no force at all (and runs the rule as an experiment without variations, which it skips).
    private static func forcedValue(_ flag: FlagDefinition, _ variant: String, at path: JSONPointer) throws(Untranslatable) -> JSONValue {
        guard let value = flag.variants[variant] else {
            throw Untranslatable(path: path, reason: "\(JSONValue.string(variant).jsonText) is not a variant")
        }
        guard !value.isNull else {
            throw Untranslatable(path: path, reason: "serves the variant \(JSONValue.string(variant).jsonText), whose value is null: GrowthBook's Python SDK reads \"force\": null as no force and skips the rule; give the variant a value")
        }
        return value
    }

    /// What a split or an experiment buckets with, written as GrowthBook rules.
    struct BucketingRules {
        let key: String
        let seed: String
        /// The name the SDKs read (``attributeName(_:at:)``).
        let hashAttribute: String
        let coverage: Double
        /// As written; `nil` (or unusable) means equal weights, as in ``Bucketing/bucketRanges(count:coverage:weights:)``.
        let weights: [Double]?
        let names: [String]
        /// The definition's own condition, already translated.
        let condition: JSONValue?

        /// The weights FlowStack buckets with, written out so no SDK has to agree on a default.
        var effectiveWeights: [Double] {
            if let weights, Bucketing.areUsable(weights: weights, count: names.count) { return weights }
            return Bucketing.equalWeights(count: names.count)
        }

        /// The rule's condition: the definition's, and a hash attribute FlowStack can hash (a
        /// string or a number). The SDKs skip empty strings and zero themselves, as FlowStack does.
        var ruleCondition: JSONValue {
            let hashable: JSONValue = ["$or": [
                .object(JSONObject(uniqueMembers: [.init(key: hashAttribute, value: ["$type": "string"])])),
                .object(JSONObject(uniqueMembers: [.init(key: hashAttribute, value: ["$type": "number"])])),
            ]]
            guard let condition else { return hashable }
            return ["$and": [condition, hashable]]
        }

        func experimentRule(variations: [JSONValue]) -> JSONValue {
            .object(JSONObject(uniqueMembers: [
                .init(key: "key", value: .string(key)),
                .init(key: "condition", value: ruleCondition),
                .init(key: "variations", value: .array(variations)),
                .init(key: "weights", value: .array(effectiveWeights.map(JSONValue.number))),
                .init(key: "coverage", value: .number(coverage)),
                .init(key: "hashAttribute", value: .string(hashAttribute)),
                .init(key: "hashVersion", value: .integer(FlagDefinition.hashVersion)),
                .init(key: "seed", value: .string(seed)),
                .init(key: "meta", value: .array(names.map { ["key": .string($0)] })),
            ]))
        }

        /// A force rule for the users whose hash falls in the one variant's bucket range,
        /// computed as FlowStack computes it (so the SDK compares `n` with the same number).
        func rolloutRule(force value: JSONValue) -> JSONValue {
            let range = Bucketing.bucketRanges(count: 1, coverage: coverage, weights: weights)[0]
            return .object(JSONObject(uniqueMembers: [
                .init(key: "condition", value: ruleCondition),
                .init(key: "force", value: value),
                .init(key: "range", value: [.number(range.start), .number(range.end)]),
                .init(key: "hashAttribute", value: .string(hashAttribute)),
                .init(key: "hashVersion", value: .integer(FlagDefinition.hashVersion)),
                .init(key: "seed", value: .string(seed)),
            ]))
        }
    }
}

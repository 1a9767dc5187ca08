// FlagDefinition: a feature flag as users write it: variants, targeting rules, a split, a default.

import JSON

/// A feature flag: named variants with JSON values, rules tried in order, an optional
/// percentage split, and a default variant.
///
/// The JSON users write (`PUT /v1/flags/{key}`):
///
/// ```json
/// {"variants": {"on": true, "off": false}, "defaultVariant": "off",
///  "rules": [{"when": {"attribute": "country", "in": ["DE", "FR"]}, "variant": "on"}],
///  "split": [{"variant": "on", "weight": 0.1}, {"variant": "off", "weight": 0.9}]}
/// ```
///
/// ```swift
/// let flag = try FlagDefinition(json: JSONParser.parse(body))
/// flag.evaluate(key: "eu-face-scan", context: EvaluationContext(targetingKey: "u-1", attributes: ["country": "DE"]))
/// // value true, variant "on", reason TARGETING_MATCH
/// ```
public struct FlagDefinition: Sendable, Equatable {
    /// A rule: when the condition holds, the flag takes the variant.
    public struct Rule: Sendable, Equatable {
        public var when: TargetingCondition
        public var variant: String

        public init(when: TargetingCondition, variant: String) {
            self.when = when
            self.variant = variant
        }
    }

    /// One slice of the split: the share of users (0…1) who get the variant.
    public struct Allocation: Sendable, Equatable {
        public var variant: String
        public var weight: Double

        public init(variant: String, weight: Double) {
            self.variant = variant
            self.weight = weight
        }
    }

    /// The variants by name, in the order written; values are any JSON.
    public var variants: JSONObject
    /// The variant served when no rule or split applies, and when the flag is disabled.
    public var defaultVariant: String
    /// Tried in order; the first whose condition holds decides.
    public var rules: [Rule]
    /// The percentage split applied after the rules; `nil` when the flag has none.
    public var split: [Allocation]?
    /// A disabled flag serves its default variant to everyone (reason `DISABLED`).
    public var enabled: Bool
    /// The hash seed; `nil` means the flag's key, so two flags split the same users differently.
    public var seed: String?
    /// The attribute whose value is hashed for the split; `userId` means the targeting key.
    public var hashAttribute: String
    /// Free text for the people who maintain the flag.
    public var description: String?

    /// The attribute hashed when the definition names none.
    public static let defaultHashAttribute = "userId"

    /// A flag built in code. Nothing is checked here: ``problems`` lists what is wrong, and
    /// evaluation answers an `ERROR` for a variant the flag does not define.
    public init(
        variants: JSONObject, defaultVariant: String, rules: [Rule] = [], split: [Allocation]? = nil,
        enabled: Bool = true, seed: String? = nil, hashAttribute: String = FlagDefinition.defaultHashAttribute,
        description: String? = nil
    ) {
        self.variants = variants
        self.defaultVariant = defaultVariant
        self.rules = rules
        self.split = split
        self.enabled = enabled
        self.seed = seed
        self.hashAttribute = hashAttribute
        self.description = description
    }

    /// What is wrong with the flag's content, with paths into its JSON form: no variants, a
    /// default, rule or split naming a variant that does not exist, weights outside [0, 1] or
    /// not adding up to 1 (±0.01).
    ///
    /// ```swift
    /// FlagDefinition(variants: ["on": true], defaultVariant: "off").problems
    /// // [/defaultVariant: "off" is not a variant; expected one of "on"]
    /// ```
    public var problems: [FlagProblem] {
        var reader = DefinitionReader()
        let root = JSONPointer()
        let names = VariantNames(variants.keys)
        Self.checkVariants(variants, at: root.appending("variants"), reader: &reader)
        reader.checkReference(defaultVariant, among: names, at: root.appending("defaultVariant"))
        for (index, rule) in rules.enumerated() {
            reader.checkReference(rule.variant, among: names, at: root.appending("rules").appending(index).appending("variant"))
        }
        if let split {
            Self.checkSplit(split.map { ($0.variant, $0.weight) }, among: names, at: root.appending("split"), reader: &reader)
        }
        if let seed, seed.isEmpty {
            reader.report(root.appending("seed"), "\"seed\" must not be empty; omit it to use the flag's key")
        }
        if hashAttribute.isEmpty {
            reader.report(root.appending("hashAttribute"), "\"hashAttribute\" must not be empty; omit it to use \"userId\"")
        }
        return reader.problems
    }

    /// At least one variant, none with an empty name.
    static func checkVariants(_ variants: JSONObject, at path: JSONPointer, reader: inout DefinitionReader) {
        if variants.isEmpty {
            reader.report(path, "a flag needs at least one variant, such as {\"on\": true, \"off\": false}")
        }
        for name in variants.keys where name.isEmpty {
            reader.report(path.appending(name), "a variant name must not be empty")
        }
    }

    /// A split's variants exist and appear once; its weights are in [0, 1] and add up to 1.
    /// A weight of `nil` was already reported as unreadable.
    static func checkSplit(_ split: [(variant: String?, weight: Double?)], among names: VariantNames?, at path: JSONPointer, reader: inout DefinitionReader) {
        if split.isEmpty {
            reader.report(path, "a split needs at least one variant; remove \"split\" to serve the default")
            return
        }
        var seen: Set<String> = []
        var weights: [Double] = []
        for (index, allocation) in split.enumerated() {
            let allocationPath = path.appending(index)
            if let variant = allocation.variant {
                if let names { reader.checkReference(variant, among: names, at: allocationPath.appending("variant")) }
                if !seen.insert(variant).inserted {
                    reader.report(allocationPath.appending("variant"), "\(DefinitionReader.quoted(variant)) appears twice in the split; give it one weight")
                }
            }
            if let weight = allocation.weight,
                reader.fraction(.number(weight), at: allocationPath.appending("weight"), what: "\"weight\"") != nil
            {
                weights.append(weight)
            }
        }
        // The sum is only meaningful when every weight could be read.
        if weights.count == split.count {
            reader.checkWeightSum(weights, at: path)
        }
    }
}

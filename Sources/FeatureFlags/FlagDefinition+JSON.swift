// FlagDefinition+JSON: flags read from the JSON users write (every problem with its path) and written back.

import JSON

extension FlagDefinition {
    /// The members a flag may have; anything else is refused so a typo (`"defualtVariant"`)
    /// is caught at PUT time instead of silently ignored.
    static let members = ["variants", "defaultVariant", "rules", "split", "enabled", "seed", "hashAttribute", "description"]

    /// Reads and validates a flag, throwing every problem found, each with its path.
    ///
    /// ```swift
    /// try FlagDefinition(json: ["variants": ["on": true, "off": false], "defaultVariant": "of"])
    /// // throws: /defaultVariant: "of" is not a variant; expected one of "on", "off"
    /// ```
    public init(json: JSONValue) throws(InvalidDefinition) {
        var reader = DefinitionReader()
        let definition = Self.parse(json, reader: &reader)
        guard let definition, reader.problems.isEmpty else { throw InvalidDefinition(problems: reader.problems) }
        self = definition
    }

    static func parse(_ json: JSONValue, reader: inout DefinitionReader) -> FlagDefinition? {
        let root = JSONPointer()
        guard let object = reader.object(json, at: root, what: "a flag") else { return nil }
        reader.refuseUnknownKeys(object, at: root, allowed: members)

        var variants: JSONObject?
        if let value = object["variants"] {
            variants = reader.object(value, at: root.appending("variants"), mustBe: "\"variants\" must be an object from variant name to value, such as {\"on\": true, \"off\": false}")
            if let variants { checkVariants(variants, at: root.appending("variants"), reader: &reader) }
        } else {
            reader.report(root.appending("variants"), "missing \"variants\": expected a map from variant name to value, such as {\"on\": true, \"off\": false}")
        }
        // nil when the variants could not be read: references are then not checked, since
        // every one would be reported.
        let names = variants.map { VariantNames($0.keys) }

        let defaultVariant = reader.requiredString(object, "defaultVariant", at: root)
        if let defaultVariant, let names {
            reader.checkReference(defaultVariant, among: names, at: root.appending("defaultVariant"))
        }

        let rules = parseRules(object["rules"], names: names, at: root.appending("rules"), reader: &reader)
        let split = parseSplit(object["split"], names: names, at: root.appending("split"), reader: &reader)

        let enabled = reader.optionalBool(object, "enabled", at: root)
        let seed = reader.optionalString(object, "seed", at: root)
        let hashAttribute = reader.optionalString(object, "hashAttribute", at: root)
        let description = reader.optionalString(object, "description", at: root, allowEmpty: true)

        guard reader.problems.isEmpty, let variants, let defaultVariant, let rules else { return nil }
        return FlagDefinition(
            variants: variants, defaultVariant: defaultVariant, rules: rules, split: split,
            enabled: enabled ?? true, seed: seed, hashAttribute: hashAttribute ?? defaultHashAttribute,
            description: description)
    }

    static func parseRules(_ json: JSONValue?, names: VariantNames?, at path: JSONPointer, reader: inout DefinitionReader) -> [Rule]? {
        guard let json else { return [] }
        guard case .array(let elements) = json else {
            reader.report(path, "\"rules\" must be an array of {\"when\": CONDITION, \"variant\": NAME}, found \(DefinitionReader.describe(json))")
            return nil
        }
        var rules: [Rule] = []
        for (index, element) in elements.enumerated() {
            let rulePath = path.appending(index)
            guard let object = reader.object(element, at: rulePath, what: "a rule {\"when\": CONDITION, \"variant\": NAME}") else { continue }
            reader.refuseUnknownKeys(object, at: rulePath, allowed: ["when", "variant"])
            var condition: TargetingCondition?
            if let when = object["when"] {
                condition = TargetingCondition.parse(when, at: rulePath.appending("when"), reader: &reader)
            } else {
                reader.report(rulePath.appending("when"), "missing \"when\": a rule needs a condition; to serve a variant to everyone make it the \"defaultVariant\"")
            }
            let variant = reader.requiredString(object, "variant", at: rulePath)
            if let variant, let names {
                reader.checkReference(variant, among: names, at: rulePath.appending("variant"))
            }
            if let condition, let variant { rules.append(Rule(when: condition, variant: variant)) }
        }
        return rules.count == elements.count ? rules : nil
    }

    static func parseSplit(_ json: JSONValue?, names: VariantNames?, at path: JSONPointer, reader: inout DefinitionReader) -> [Allocation]? {
        guard let json else { return nil }
        guard case .array(let elements) = json else {
            reader.report(path, "\"split\" must be an array of {\"variant\": NAME, \"weight\": 0…1}, found \(DefinitionReader.describe(json))")
            return nil
        }
        var read: [(variant: String?, weight: Double?)] = []
        for (index, element) in elements.enumerated() {
            let allocationPath = path.appending(index)
            guard let object = reader.object(element, at: allocationPath, what: "a split entry {\"variant\": NAME, \"weight\": 0…1}") else {
                read.append((nil, nil))
                continue
            }
            reader.refuseUnknownKeys(object, at: allocationPath, allowed: ["variant", "weight"])
            let variant = reader.requiredString(object, "variant", at: allocationPath)
            var weight: Double?
            if let value = object["weight"] {
                weight = value.doubleValue
                if weight == nil {
                    reader.report(allocationPath.appending("weight"), "\"weight\" must be a number from 0 to 1, found \(DefinitionReader.describe(value))")
                }
            } else {
                reader.report(allocationPath.appending("weight"), "missing \"weight\": expected the share of users from 0 to 1")
            }
            read.append((variant, weight))
        }
        checkSplit(read, among: names, at: path, reader: &reader)
        var split: [Allocation] = []
        for entry in read {
            guard let variant = entry.variant, let weight = entry.weight else { return nil }
            split.append(Allocation(variant: variant, weight: weight))
        }
        return split
    }

    /// The flag in the JSON form it is read from; members at their defaults (`enabled: true`,
    /// `hashAttribute: "userId"`, no rules) are left out.
    ///
    /// ```swift
    /// FlagDefinition(variants: ["on": true, "off": false], defaultVariant: "off").jsonValue
    /// // {"variants":{"on":true,"off":false},"defaultVariant":"off"}
    /// ```
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object["variants"] = .object(variants)
        object["defaultVariant"] = .string(defaultVariant)
        if !rules.isEmpty {
            object["rules"] = .array(rules.map { ["when": $0.when.jsonValue, "variant": .string($0.variant)] })
        }
        if let split {
            object["split"] = .array(split.map { ["variant": .string($0.variant), "weight": .number($0.weight)] })
        }
        if !enabled { object["enabled"] = false }
        if let seed { object["seed"] = .string(seed) }
        if hashAttribute != Self.defaultHashAttribute { object["hashAttribute"] = .string(hashAttribute) }
        if let description { object["description"] = .string(description) }
        return .object(object)
    }
}

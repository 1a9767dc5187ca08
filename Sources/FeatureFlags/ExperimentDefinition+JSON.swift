// ExperimentDefinition+JSON: experiments read from the JSON users write (every problem with its path) and written back.

import JSON

extension ExperimentDefinition {
    /// The members an experiment may have; anything else is refused.
    static let members = ["variants", "coverage", "seed", "hashAttribute", "when", "enabled", "status", "winner", "description"]
    /// The members a variant may have.
    static let variantMembers = ["key", "weight", "flows"]

    /// Reads and validates an experiment, throwing every problem found, each with its path.
    ///
    /// ```swift
    /// try ExperimentDefinition(json: ["variants": [["key": "control", "weight": 0.6], ["key": "short", "weight": 0.6]]])
    /// // throws: /variants: weights must add up to 1 (±0.01), they add up to 1.2
    /// ```
    public init(json: JSONValue) throws(InvalidDefinition) {
        var reader = DefinitionReader()
        let definition = Self.parse(json, reader: &reader)
        guard let definition, reader.problems.isEmpty else { throw InvalidDefinition(problems: reader.problems) }
        self = definition
    }

    static func parse(_ json: JSONValue, reader: inout DefinitionReader) -> ExperimentDefinition? {
        let root = JSONPointer()
        guard let object = reader.object(json, at: root, what: "an experiment") else { return nil }
        reader.refuseUnknownKeys(object, at: root, allowed: members)

        let variants = parseVariants(object["variants"], at: root.appending("variants"), reader: &reader)

        var coverage = 1.0
        if let value = object["coverage"] {
            coverage = reader.fraction(value, at: root.appending("coverage"), what: "\"coverage\"") ?? coverage
        }
        let seed = reader.optionalString(object, "seed", at: root)
        let hashAttribute = reader.optionalString(object, "hashAttribute", at: root)
        var when: TargetingCondition?
        if let value = object["when"] {
            when = TargetingCondition.parse(value, at: root.appending("when"), reader: &reader)
        }
        let enabled = reader.optionalBool(object, "enabled", at: root)
        let status = parseStatus(object["status"], at: root.appending("status"), reader: &reader)
        let winner = reader.optionalString(object, "winner", at: root)
        if let variants, let status, winner != nil || object["winner"] == nil {
            checkWinner(winner, status: status, variantKeys: variants.map(\.key), at: root.appending("winner"), reader: &reader)
        }
        let description = reader.optionalString(object, "description", at: root, allowEmpty: true)

        guard reader.problems.isEmpty, let variants, let status else { return nil }
        return ExperimentDefinition(
            variants: variants, coverage: coverage, seed: seed, hashAttribute: hashAttribute ?? defaultHashAttribute,
            when: when, enabled: enabled ?? true, status: status, winner: winner, description: description)
    }

    /// `status`: one of the lifecycle's names; absent is `running`.
    static func parseStatus(_ json: JSONValue?, at path: JSONPointer, reader: inout DefinitionReader) -> Status? {
        guard let json else { return .running }
        guard case .string(let name) = json, let status = Status(rawValue: name) else {
            reader.report(path, "\"status\" must be one of \(DefinitionReader.list(Status.names)), found \(DefinitionReader.describe(json))")
            return nil
        }
        return status
    }

    static func parseVariants(_ json: JSONValue?, at path: JSONPointer, reader: inout DefinitionReader) -> [Variant]? {
        guard let json else {
            reader.report(path, "missing \"variants\": expected an array such as [{\"key\": \"control\", \"weight\": 0.5}, {\"key\": \"short\", \"weight\": 0.5}]")
            return nil
        }
        guard case .array(let elements) = json else {
            reader.report(path, "\"variants\" must be an array of {\"key\": NAME, \"weight\": 0…1, \"flows\"?: {FLOW: VERSION}}, found \(DefinitionReader.describe(json))")
            return nil
        }
        var read: [(key: String?, weight: Double?, weightReadable: Bool)] = []
        var variants: [Variant] = []
        for (index, element) in elements.enumerated() {
            let variantPath = path.appending(index)
            guard let object = reader.object(element, at: variantPath, what: "a variant {\"key\": NAME, \"weight\": 0…1}") else {
                read.append((nil, nil, false))
                continue
            }
            reader.refuseUnknownKeys(object, at: variantPath, allowed: variantMembers)
            // Empty keys are reported with the uniqueness check, so read them as they are.
            var key: String?
            if let value = object["key"] {
                key = value.stringValue
                if key == nil { reader.report(variantPath.appending("key"), "\"key\" must be a string, found \(DefinitionReader.describe(value))") }
            } else {
                reader.report(variantPath.appending("key"), "missing \"key\": expected the variant's name, such as \"control\"")
            }
            var weight: Double?
            var weightReadable = true
            if let value = object["weight"] {
                weight = value.doubleValue
                if weight == nil {
                    weightReadable = false
                    reader.report(variantPath.appending("weight"), "\"weight\" must be a number from 0 to 1, found \(DefinitionReader.describe(value))")
                }
            }
            read.append((key, weight, weightReadable))
            let flows = parseFlows(object["flows"], at: variantPath.appending("flows"), reader: &reader)
            if let key, let flows { variants.append(Variant(key: key, weight: weight, flows: flows)) }
        }
        checkVariants(read, at: path, reader: &reader)
        return variants.count == elements.count ? variants : nil
    }

    static func parseFlows(_ json: JSONValue?, at path: JSONPointer, reader: inout DefinitionReader) -> [FlowPin]? {
        guard let json else { return [] }
        guard let object = reader.object(json, at: path, mustBe: "\"flows\" must be an object from flow name to version, such as {\"onboarding\": 2}") else { return nil }
        var pins: [FlowPin] = []
        var valid = true
        for member in object.members {
            let pinPath = path.appending(member.key)
            guard let version = member.value.integerValue else {
                reader.report(pinPath, "a flow version is a positive integer, found \(DefinitionReader.describe(member.value))")
                valid = false
                continue
            }
            let pin = FlowPin(flow: member.key, version: version)
            let before = reader.problems.count
            checkPin(pin, at: pinPath, reader: &reader)
            if reader.problems.count > before { valid = false }
            pins.append(pin)
        }
        return valid ? pins : nil
    }

    /// The experiment in the JSON form it is read from; members at their defaults
    /// (`coverage: 1`, `enabled: true`, `hashAttribute: "userId"`, `status: "running"`) are left out.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object["variants"] = .array(variants.map { variant in
            var member = JSONObject()
            member["key"] = .string(variant.key)
            if let weight = variant.weight { member["weight"] = .number(weight) }
            if !variant.flows.isEmpty {
                member["flows"] = .object(JSONObject(variant.flows.map { JSONObject.Member(key: $0.flow, value: .integer($0.version)) }))
            }
            return .object(member)
        })
        if coverage != 1 { object["coverage"] = .number(coverage) }
        if let seed { object["seed"] = .string(seed) }
        if hashAttribute != Self.defaultHashAttribute { object["hashAttribute"] = .string(hashAttribute) }
        if let when { object["when"] = when.jsonValue }
        if !enabled { object["enabled"] = false }
        if status != .running { object["status"] = .string(status.rawValue) }
        if let winner { object["winner"] = .string(winner) }
        if let description { object["description"] = .string(description) }
        return .object(object)
    }
}

// DefinitionReader: reads the members of hand-written JSON definitions and collects every problem.

import JSON

/// Reads hand-written definitions member by member, recording a problem (with its path) for
/// each thing wrong and carrying on, so an author sees all problems at once.
struct DefinitionReader {
    private(set) var problems: [FlagProblem] = []

    mutating func report(_ path: JSONPointer, _ message: String) {
        problems.append(FlagProblem(path: path, message: message))
    }

    /// `value` as an object, or a problem naming `what` was expected (or saying `mustBe`,
    /// for a member whose own name reads better first).
    mutating func object(_ value: JSONValue, at path: JSONPointer, what: String = "", mustBe: String? = nil) -> JSONObject? {
        if case .object(let object) = value { return object }
        let expected = mustBe ?? "expected \(what) (a JSON object)"
        report(path, "\(expected), found \(Self.describe(value))")
        return nil
    }

    /// Reports every member of `object` whose key is not in `allowed`.
    mutating func refuseUnknownKeys(_ object: JSONObject, at path: JSONPointer, allowed: [String]) {
        for member in object.members where !allowed.contains(member.key) {
            report(
                path.appending(member.key),
                "unknown member \(Self.quoted(member.key)); expected one of \(Self.list(allowed))")
        }
    }

    /// A required non-empty string member.
    mutating func requiredString(_ object: JSONObject, _ key: String, at path: JSONPointer) -> String? {
        guard let value = object[key] else {
            report(path.appending(key), "missing \(Self.quoted(key)): expected a non-empty string")
            return nil
        }
        return nonEmptyString(value, at: path.appending(key), what: Self.quoted(key))
    }

    /// An optional non-empty string member; absent gives `nil` with no problem.
    mutating func optionalString(_ object: JSONObject, _ key: String, at path: JSONPointer, allowEmpty: Bool = false) -> String? {
        guard let value = object[key] else { return nil }
        if allowEmpty, case .string(let text) = value { return text }
        return nonEmptyString(value, at: path.appending(key), what: Self.quoted(key))
    }

    mutating func nonEmptyString(_ value: JSONValue, at path: JSONPointer, what: String) -> String? {
        guard case .string(let text) = value else {
            report(path, "\(what) must be a string, found \(Self.describe(value))")
            return nil
        }
        guard !text.isEmpty else {
            report(path, "\(what) must not be empty")
            return nil
        }
        return text
    }

    /// An optional boolean member.
    mutating func optionalBool(_ object: JSONObject, _ key: String, at path: JSONPointer) -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let flag) = value else {
            report(path.appending(key), "\(Self.quoted(key)) must be true or false, found \(Self.describe(value))")
            return nil
        }
        return flag
    }

    /// A number in [0, 1] (a weight or a coverage).
    mutating func fraction(_ value: JSONValue, at path: JSONPointer, what: String) -> Double? {
        guard let number = value.doubleValue else {
            report(path, "\(what) must be a number from 0 to 1, found \(Self.describe(value))")
            return nil
        }
        guard number >= 0 && number <= 1 else {
            report(path, "\(what) must be from 0 to 1, found \(value.jsonText)")
            return nil
        }
        return number
    }

    /// Reports weights that do not add up to 1 within GrowthBook's tolerance.
    mutating func checkWeightSum(_ weights: [Double], at path: JSONPointer) {
        let sum = weights.reduce(0, +)
        guard !Bucketing.weightSumTolerance.contains(sum) else { return }
        report(path, "weights must add up to 1 (±0.01), they add up to \(JavaScriptNumber.text(sum))")
    }

    // MARK: message text

    static func quoted(_ text: String) -> String {
        JSONValue.string(text).jsonText
    }

    static func list(_ names: [String]) -> String {
        names.map(quoted).joined(separator: ", ")
    }

    /// ``list(_:)`` of the first few names only, when there are many: the message is repeated
    /// for every reference, and a flag with thousands of variants and thousands of references
    /// would otherwise make problems that grow with the square of the body.
    static func abbreviatedList(_ names: [String], limit: Int = 10) -> String {
        guard names.count > limit else { return list(names) }
        return list(Array(names.prefix(limit))) + " and \(names.count - limit) more"
    }

    /// A value for a message: its type and, when short, the value itself.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .object, .array: return "\(value.typeName) \(value.abbreviatedJSON(limit: 40))"
        default: return value.abbreviatedJSON(limit: 40)
        }
    }
}

extension DefinitionReader {
    /// Reports `name` when it is not one of `names` (a variant reference).
    mutating func checkReference(_ name: String, among names: VariantNames, at path: JSONPointer) {
        guard !names.set.contains(name) else { return }
        let expected = names.ordered.isEmpty ? "define it first" : "expected one of \(Self.abbreviatedList(names.ordered))"
        report(path, "\(Self.quoted(name)) is not a variant; \(expected)")
    }
}

/// A flag's variant names in their written order (for messages) and as a set (for lookups, so
/// checking every reference of a flag with thousands of variants stays linear).
struct VariantNames {
    let ordered: [String]
    let set: Set<String>

    init(_ names: [String]) {
        ordered = names
        set = Set(names)
    }
}

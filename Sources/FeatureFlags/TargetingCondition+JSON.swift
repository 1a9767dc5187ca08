// TargetingCondition+JSON: conditions read from and written to the JSON users author.

import JSON

extension TargetingCondition {
    /// The keys that make a condition a combinator rather than attribute tests.
    static let combinators = ["all", "any", "not"]

    /// Reads a condition, throwing every problem found with its path.
    ///
    /// ```swift
    /// try TargetingCondition(json: ["attribute": "platform", "is": "ios"])
    /// try TargetingCondition(json: ["attribute": "platform", "equals": "ios"])
    /// // throws: /equals: unknown operator "equals"; expected one of "is", "isNot", …
    /// ```
    public init(json: JSONValue) throws(InvalidDefinition) {
        var problems: [FlagProblem] = []
        let condition = Self.parse(json, at: JSONPointer(), problems: &problems)
        guard let condition, problems.isEmpty else { throw InvalidDefinition(problems: problems) }
        self = condition
    }

    /// Reads a condition found at `path` inside a larger document (a flag rule, an experiment,
    /// a flow definition's `when`), appending any problems to `problems`. Returns `nil` when
    /// the condition is unusable.
    public static func parse(_ json: JSONValue, at path: JSONPointer, problems: inout [FlagProblem]) -> TargetingCondition? {
        var reader = DefinitionReader()
        let condition = parse(json, at: path, reader: &reader)
        problems += reader.problems
        return reader.problems.isEmpty ? condition : nil
    }

    static func parse(_ json: JSONValue, at path: JSONPointer, reader: inout DefinitionReader) -> TargetingCondition? {
        guard let object = reader.object(json, at: path, what: "a condition") else { return nil }
        let kinds = (combinators + ["attribute"]).filter { object.contains(key: $0) }
        // Operators without "attribute" are an attribute condition missing its name, and are
        // reported as such rather than as no condition at all.
        let hasOperators = object.keys.contains { AttributeOperator(rawValue: $0) != nil }
        guard let kind = kinds.first ?? (hasOperators ? "attribute" : nil) else {
            reader.report(path, """
                expected a condition: {"attribute": NAME, OPERATOR: VALUE}, {"all": [CONDITIONS]}, \
                {"any": [CONDITIONS]} or {"not": CONDITION}
                """)
            return nil
        }
        guard kinds.count <= 1 else {
            reader.report(path, "a condition has exactly one of \(DefinitionReader.list(kinds)); split it into {\"all\": [...]}")
            return nil
        }
        switch kind {
        case "all", "any":
            reader.refuseUnknownKeys(object, at: path, allowed: [kind])
            let listPath = path.appending(kind)
            guard case .array(let elements) = object[kind] ?? .null else {
                reader.report(listPath, "\"\(kind)\" must be an array of conditions, found \(DefinitionReader.describe(object[kind] ?? .null))")
                return nil
            }
            guard !elements.isEmpty else {
                reader.report(listPath, "\"\(kind)\" needs at least one condition")
                return nil
            }
            var conditions: [TargetingCondition] = []
            for (index, element) in elements.enumerated() {
                if let condition = parse(element, at: listPath.appending(index), reader: &reader) {
                    conditions.append(condition)
                }
            }
            guard conditions.count == elements.count else { return nil }
            return kind == "all" ? .all(conditions) : .any(conditions)
        case "not":
            reader.refuseUnknownKeys(object, at: path, allowed: ["not"])
            guard let inner = object["not"], let condition = parse(inner, at: path.appending("not"), reader: &reader) else {
                return nil
            }
            return .not(condition)
        default:
            return AttributeCondition.parse(object, at: path, reader: &reader).map(TargetingCondition.attribute)
        }
    }

    /// The condition in the JSON form it is read from.
    ///
    /// ```swift
    /// TargetingCondition.not(.attribute(AttributeCondition(attribute: "beta", tests: [AttributeTest(operation: .exists, operand: true)]))).jsonValue
    /// // {"not":{"attribute":"beta","exists":true}}
    /// ```
    public var jsonValue: JSONValue {
        switch self {
        case .attribute(let condition): return condition.jsonValue
        case .all(let conditions): return ["all": .array(conditions.map(\.jsonValue))]
        case .any(let conditions): return ["any": .array(conditions.map(\.jsonValue))]
        case .not(let condition): return ["not": condition.jsonValue]
        }
    }
}

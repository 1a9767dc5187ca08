// AttributeCondition: the tests written on one attribute, read from and written to JSON.

import JSON

/// Tests on one attribute, written `{"attribute": NAME, OPERATOR: VALUE, …}`; with several
/// operators (`{"attribute": "age", "gte": 18, "lt": 65}`) every one must hold.
///
/// ```swift
/// let adult = AttributeCondition(attribute: "age", tests: [AttributeTest(operation: .atLeast, operand: 18)])
/// adult.matches(EvaluationContext(attributes: ["age": 30]))   // true
/// ```
public struct AttributeCondition: Sendable, Equatable {
    /// The attribute's name; `userId` and `targetingKey` mean the targeting key.
    public var attribute: String
    /// The tests, in the order written.
    public var tests: [AttributeTest]

    public init(attribute: String, tests: [AttributeTest]) {
        self.attribute = attribute
        self.tests = tests
    }

    /// Whether every test holds for the attribute's value in `context`.
    public func matches(_ context: EvaluationContext) -> Bool {
        let value = context.attribute(attribute)
        return tests.allSatisfy { $0.holds(for: value) }
    }
}

extension AttributeCondition {
    static func parse(_ object: JSONObject, at path: JSONPointer, reader: inout DefinitionReader) -> AttributeCondition? {
        let name = reader.requiredString(object, "attribute", at: path)
        var tests: [AttributeTest] = []
        var valid = name != nil
        for member in object.members where member.key != "attribute" {
            let memberPath = path.appending(member.key)
            guard let operation = AttributeOperator(rawValue: member.key) else {
                reader.report(memberPath, "unknown operator \(DefinitionReader.quoted(member.key)); expected one of \(DefinitionReader.list(AttributeOperator.names))")
                valid = false
                continue
            }
            if let problem = operation.problem(with: member.value) {
                reader.report(memberPath, problem)
                valid = false
                continue
            }
            tests.append(AttributeTest(operation: operation, operand: member.value))
        }
        if tests.isEmpty && valid {
            reader.report(path, "a condition on \(DefinitionReader.quoted(name ?? "")) needs an operator: one of \(DefinitionReader.list(AttributeOperator.names))")
            return nil
        }
        guard valid, let name else { return nil }
        return AttributeCondition(attribute: name, tests: tests)
    }

    /// `{"attribute": NAME, OPERATOR: VALUE, …}`.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object["attribute"] = .string(attribute)
        for test in tests { object[test.operation.rawValue] = test.operand }
        return .object(object)
    }
}

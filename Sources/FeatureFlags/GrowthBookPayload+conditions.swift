// GrowthBookPayload+conditions: targeting conditions in GrowthBook's condition syntax, where it means the same.

import JSON

extension GrowthBookPayload {
    /// The GrowthBook condition that holds for exactly the users `condition` holds for, in both
    /// the JS and the Python SDK; throws for a condition that has none.
    ///
    /// `all`, `any` and `not` become `$and`, `$or` and `$not`; tests on one attribute become
    /// operators on it:
    ///
    /// | FlowStack | GrowthBook | why it is exact |
    /// | --- | --- | --- |
    /// | `is` / `isNot` a string, number or boolean | `$eq` / `$ne` | strict equality in both SDKs; `1` is `1.0` |
    /// | `in` / `notIn` strings, numbers, booleans | `$in` / `$nin` | an array attribute matches when one element is listed |
    /// | `exists` | `$exists` | null counts as missing in both |
    /// | `gt`, `gte`, `lt`, `lte` | `$type` and `$gt`… | `$type` refuses what FlowStack refuses (JS would compare `"10" > 9` or `null < 5`) |
    /// | `versionGt`… `versionIs` | `$type`, `$regex` and `$vgt`… under `$or` | see ``versionCondition(_:_:comparison:at:)`` |
    /// | `versionIsNot` | `$not` of `versionIs`'s | a missing or malformed version passes both |
    ///
    /// Not translated: version thresholds that are not `major.minor.patch` with an optional
    /// pre-release in canonical form (see ``versionCondition(_:_:comparison:at:)``), `is`/`in` with arrays
    /// or objects (the SDKs compare those by reference or by key order), and attribute names the
    /// SDKs read as something else (see ``attributeName(_:at:)``).
    ///
    /// ```swift
    /// try GrowthBookPayload.condition(.attribute(AttributeCondition(attribute: "age", tests: [AttributeTest(operation: .atLeast, operand: 18)])))
    /// // {"age":{"$type":"number","$gte":18}}
    /// ```
    public static func condition(_ condition: TargetingCondition, at path: JSONPointer = JSONPointer()) throws(Untranslatable) -> JSONValue {
        switch condition {
        case .attribute(let tests):
            return try attributeCondition(tests, at: path)
        case .all(let conditions):
            return ["$and": .array(try translated(conditions, at: path.appending("all")))]
        case .any(let conditions):
            return ["$or": .array(try translated(conditions, at: path.appending("any")))]
        case .not(let inner):
            return ["$not": try Self.condition(inner, at: path.appending("not"))]
        }
    }

    private static func translated(_ conditions: [TargetingCondition], at path: JSONPointer) throws(Untranslatable) -> [JSONValue] {
        var result: [JSONValue] = []
        for (index, condition) in conditions.enumerated() {
            result.append(try Self.condition(condition, at: path.appending(index)))
        }
        return result
    }

    /// One object per test, under `$and` when there are several (two tests could need the
    /// same GrowthBook operator).
    private static func attributeCondition(_ condition: AttributeCondition, at path: JSONPointer) throws(Untranslatable) -> JSONValue {
        let name = try attributeName(condition.attribute, at: path.appending("attribute"))
        var parts: [JSONValue] = []
        for test in condition.tests {
            let testPath = path.appending(test.operation.rawValue)
            if let version = VersionComparison(test.operation) {
                parts.append(try versionCondition(name, test, comparison: version, at: testPath))
                continue
            }
            let operators = try Self.operators(test, at: testPath)
            parts.append(.object(JSONObject(uniqueMembers: [.init(key: name, value: .object(operators))])))
        }
        return parts.count == 1 ? parts[0] : ["$and": .array(parts)]
    }

    /// The GrowthBook operators of one test.
    private static func operators(_ test: AttributeTest, at path: JSONPointer) throws(Untranslatable) -> JSONObject {
        let operand = test.operand
        switch test.operation {
        case .equals, .notEquals:
            guard isScalar(operand) else {
                throw Untranslatable(path: path, reason: "compares with \(operand.typeName == "array" ? "an array" : "an object"), which GrowthBook SDKs compare by reference (JS) or by key order; compare strings, numbers or booleans")
            }
            return [test.operation == .equals ? "$eq" : "$ne": operand]
        case .oneOf, .noneOf:
            guard case .array(let listed) = operand, listed.allSatisfy(isScalar) else {
                throw Untranslatable(path: path, reason: "lists arrays or objects, which GrowthBook SDKs match by reference; list strings, numbers or booleans")
            }
            return [test.operation == .oneOf ? "$in" : "$nin": operand]
        case .exists:
            return ["$exists": operand]
        case .greaterThan, .atLeast, .lessThan, .atMost:
            let type: String
            switch operand {
            case .integer, .number: type = "number"
            case .string: type = "string"
            default: throw Untranslatable(path: path, reason: "compares with \(operand.typeName); compare with a number or a string")
            }
            let name = ["gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte"][test.operation.rawValue] ?? "$gt"
            return JSONObject(uniqueMembers: [.init(key: "$type", value: .string(type)), .init(key: name, value: operand)])
        case .versionGreaterThan, .versionAtLeast, .versionLessThan, .versionAtMost, .versionEquals, .versionNotEquals:
            // Written by versionCondition (attributeCondition never asks for these).
            throw Untranslatable(path: path, reason: "a version test is translated as a whole condition")
        }
    }

    private static func isScalar(_ value: JSONValue) -> Bool {
        switch value {
        case .bool, .integer, .number, .string: return true
        case .null, .array, .object: return false
        }
    }

    /// The name GrowthBook SDKs must be given the attribute under: `userId` for the targeting
    /// key (FlowStack's `userId` and `targetingKey`), the name itself otherwise.
    ///
    /// Refused: a name with `.` (the SDKs read `a.b` as the member `b` of the attribute `a`),
    /// one starting with `$` (read as an operator), and the members every JavaScript object
    /// inherits (`constructor`, `toString`, …), which the JS SDK finds even when the app did not
    /// send them.
    public static func attributeName(_ name: String, at path: JSONPointer = JSONPointer()) throws(Untranslatable) -> String {
        if EvaluationContext.targetingKeyNames.contains(name) { return "userId" }
        if name.contains(".") {
            throw Untranslatable(path: path, reason: "the attribute \(JSONValue.string(name).jsonText) has a \".\", which GrowthBook SDKs read as a path into an object attribute; rename it")
        }
        if name.hasPrefix("$") {
            throw Untranslatable(path: path, reason: "the attribute \(JSONValue.string(name).jsonText) starts with \"$\", which GrowthBook reads as an operator; rename it")
        }
        if inheritedJavaScriptMembers.contains(name) {
            throw Untranslatable(path: path, reason: "the attribute \(JSONValue.string(name).jsonText) is a member of every JavaScript object, which the JS SDK finds even when the app did not send it; rename it")
        }
        return name
    }

    /// The members of `Object.prototype`: `name in attributes` is true for them in JavaScript.
    static let inheritedJavaScriptMembers: Set<String> = [
        "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "toString",
        "valueOf", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
    ]
}

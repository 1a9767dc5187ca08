// TargetingConditionTests: every operator, missing attributes, combinators, and parse problems with paths.

import FeatureFlags
import JSON
import Testing

struct TargetingConditionTests {
    struct OperatorCase: Sendable, CustomTestStringConvertible {
        let condition: String
        let attributes: [String: JSONValue]
        let expected: Bool
        init(_ condition: String, _ attributes: [String: JSONValue], _ expected: Bool) {
            (self.condition, self.attributes, self.expected) = (condition, attributes, expected)
        }
        var testDescription: String { "\(condition) with \(attributes.isEmpty ? "no attributes" : "\(attributes)") → \(expected)" }
    }

    static let operatorCases: [OperatorCase] = [
        // is / isNot
        OperatorCase(#"{"attribute": "platform", "is": "ios"}"#, ["platform": "ios"], true),
        OperatorCase(#"{"attribute": "platform", "is": "ios"}"#, ["platform": "iOS"], false),
        OperatorCase(#"{"attribute": "platform", "is": "ios"}"#, [:], false),
        OperatorCase(#"{"attribute": "age", "is": 30}"#, ["age": 30.0], true),
        OperatorCase(#"{"attribute": "age", "is": 30}"#, ["age": "30"], false),
        OperatorCase(#"{"attribute": "beta", "is": true}"#, ["beta": true], true),
        OperatorCase(#"{"attribute": "platform", "isNot": "ios"}"#, ["platform": "android"], true),
        OperatorCase(#"{"attribute": "platform", "isNot": "ios"}"#, ["platform": "ios"], false),
        OperatorCase(#"{"attribute": "platform", "isNot": "ios"}"#, [:], true),
        OperatorCase(#"{"attribute": "platform", "isNot": "ios"}"#, ["platform": nil], true),
        // in / notIn
        OperatorCase(#"{"attribute": "country", "in": ["DE", "FR"]}"#, ["country": "DE"], true),
        OperatorCase(#"{"attribute": "country", "in": ["DE", "FR"]}"#, ["country": "US"], false),
        OperatorCase(#"{"attribute": "country", "in": ["DE", "FR"]}"#, [:], false),
        OperatorCase(#"{"attribute": "tags", "in": ["vip", "staff"]}"#, ["tags": ["new", "staff"]], true),
        OperatorCase(#"{"attribute": "tags", "in": ["vip", "staff"]}"#, ["tags": ["new"]], false),
        OperatorCase(#"{"attribute": "build", "in": [1, 2, 3]}"#, ["build": 2], true),
        OperatorCase(#"{"attribute": "country", "notIn": ["DE", "FR"]}"#, ["country": "US"], true),
        OperatorCase(#"{"attribute": "country", "notIn": ["DE", "FR"]}"#, ["country": "FR"], false),
        OperatorCase(#"{"attribute": "country", "notIn": ["DE", "FR"]}"#, [:], true),
        // exists
        OperatorCase(#"{"attribute": "beta", "exists": true}"#, ["beta": false], true),
        OperatorCase(#"{"attribute": "beta", "exists": true}"#, [:], false),
        OperatorCase(#"{"attribute": "beta", "exists": true}"#, ["beta": nil], false),
        OperatorCase(#"{"attribute": "beta", "exists": false}"#, [:], true),
        OperatorCase(#"{"attribute": "beta", "exists": false}"#, ["beta": "yes"], false),
        // gt / gte / lt / lte: numbers numerically, strings by code units, mixed types fail
        OperatorCase(#"{"attribute": "age", "gt": 17}"#, ["age": 18], true),
        OperatorCase(#"{"attribute": "age", "gt": 18}"#, ["age": 18], false),
        OperatorCase(#"{"attribute": "age", "gte": 18}"#, ["age": 18], true),
        OperatorCase(#"{"attribute": "age", "gte": 18.5}"#, ["age": 18], false),
        OperatorCase(#"{"attribute": "age", "lt": 18}"#, ["age": 17.9], true),
        OperatorCase(#"{"attribute": "age", "lt": 18}"#, ["age": 18], false),
        OperatorCase(#"{"attribute": "age", "lte": 18}"#, ["age": 18], true),
        OperatorCase(#"{"attribute": "age", "lte": 18}"#, ["age": 19], false),
        OperatorCase(#"{"attribute": "age", "gt": 9}"#, ["age": 10], true),
        OperatorCase(#"{"attribute": "name", "gt": "9"}"#, ["name": "10"], false),
        OperatorCase(#"{"attribute": "name", "gte": "b"}"#, ["name": "banana"], true),
        OperatorCase(#"{"attribute": "name", "lt": "b"}"#, ["name": "apple"], true),
        OperatorCase(#"{"attribute": "name", "lt": "B"}"#, ["name": "a"], false),
        OperatorCase(#"{"attribute": "age", "gt": 17}"#, ["age": "18"], false),
        OperatorCase(#"{"attribute": "age", "gt": 17}"#, ["age": true], false),
        OperatorCase(#"{"attribute": "age", "gt": 17}"#, [:], false),
        OperatorCase(#"{"attribute": "age", "lt": 17}"#, [:], false),
        OperatorCase(#"{"attribute": "id", "gt": 9007199254740992}"#, ["id": 9_007_199_254_740_993], true),
        OperatorCase(#"{"attribute": "age", "gte": 18, "lt": 65}"#, ["age": 40], true),
        OperatorCase(#"{"attribute": "age", "gte": 18, "lt": 65}"#, ["age": 70], false),
        // versions
        OperatorCase(#"{"attribute": "appVersion", "versionGt": "5.9"}"#, ["appVersion": "5.10"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "5.2"}"#, ["appVersion": "5.2.0"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "5.2"}"#, ["appVersion": "v5.1.9"], false),
        OperatorCase(#"{"attribute": "appVersion", "versionLt": "1.0.0"}"#, ["appVersion": "1.0.0-beta"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionLte": "5.2.0"}"#, ["appVersion": "5.2"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionIs": "5.2"}"#, ["appVersion": "v5.2.0"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionIs": 5}"#, ["appVersion": "5.0.0"], true),
        // Only well-formed version strings are compared: a number, leading zeros, more than five
        // digits, the empty string fail every version test but versionIsNot, as a missing one does.
        OperatorCase(#"{"attribute": "appVersion", "versionGt": "5.1"}"#, ["appVersion": 5.2], false),
        OperatorCase(#"{"attribute": "appVersion", "versionIsNot": "5.1"}"#, ["appVersion": 5.2], true),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "1.0"}"#, ["appVersion": "05"], false),
        OperatorCase(#"{"attribute": "appVersion", "versionLt": "9.0"}"#, ["appVersion": "05"], false),
        OperatorCase(#"{"attribute": "appVersion", "versionIs": "5.0.0"}"#, ["appVersion": "05"], false),
        OperatorCase(#"{"attribute": "appVersion", "versionIsNot": "5.0.0"}"#, ["appVersion": "05"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionGt": "1.0"}"#, ["appVersion": "100000.0.0"], false),
        OperatorCase(#"{"attribute": "appVersion", "versionLt": "1.0"}"#, ["appVersion": ""], false),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "1.0.0-beta"}"#, ["appVersion": "1.0.0-beta.02"], false),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "1.0"}"#, ["appVersion": "5.2 "], false),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "05"}"#, ["appVersion": "5"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionIsNot": "5.2"}"#, ["appVersion": "5.3"], true),
        OperatorCase(#"{"attribute": "appVersion", "versionGte": "1.0"}"#, [:], false),
        OperatorCase(#"{"attribute": "appVersion", "versionLt": "1.0"}"#, [:], false),
        OperatorCase(#"{"attribute": "appVersion", "versionIsNot": "1.0"}"#, [:], true),
        OperatorCase(#"{"attribute": "appVersion", "versionGt": "1.0"}"#, ["appVersion": true], false),
        // userId and targetingKey read the targeting key (set to "u-1" below)
        OperatorCase(#"{"attribute": "userId", "is": "u-1"}"#, [:], true),
        OperatorCase(#"{"attribute": "targetingKey", "in": ["u-1", "u-2"]}"#, [:], true),
        OperatorCase(#"{"attribute": "userId", "is": "u-1"}"#, ["userId": "someone-else"], true),
        // combinators
        OperatorCase(#"{"all": [{"attribute": "platform", "is": "ios"}, {"attribute": "country", "in": ["DE"]}]}"#, ["platform": "ios", "country": "DE"], true),
        OperatorCase(#"{"all": [{"attribute": "platform", "is": "ios"}, {"attribute": "country", "in": ["DE"]}]}"#, ["platform": "ios", "country": "US"], false),
        OperatorCase(#"{"any": [{"attribute": "platform", "is": "ios"}, {"attribute": "country", "in": ["DE"]}]}"#, ["platform": "web", "country": "DE"], true),
        OperatorCase(#"{"any": [{"attribute": "platform", "is": "ios"}, {"attribute": "country", "in": ["DE"]}]}"#, ["platform": "web"], false),
        OperatorCase(#"{"not": {"attribute": "country", "in": ["DE", "FR"]}}"#, ["country": "US"], true),
        OperatorCase(#"{"not": {"attribute": "country", "in": ["DE", "FR"]}}"#, ["country": "DE"], false),
        OperatorCase(#"{"not": {"not": {"attribute": "beta", "exists": true}}}"#, ["beta": 1], true),
    ]

    /// Every operator, on present, missing, null and mistyped attributes, and every combinator.
    @Test(arguments: operatorCases)
    func operators(_ vector: OperatorCase) throws {
        let condition = try TargetingCondition(json: JSONParser.parse(vector.condition))
        let context = EvaluationContext(targetingKey: "u-1", attributes: vector.attributes)
        #expect(condition.matches(context) == vector.expected)
    }

    /// Every operator the format names is covered by the table above.
    @Test func everyOperatorIsTested() {
        let tested = Set(Self.operatorCases.flatMap { vector in
            AttributeOperator.allCases.filter { vector.condition.contains("\"\($0.rawValue)\"") }
        })
        #expect(tested == Set(AttributeOperator.allCases))
    }

    /// A condition written back to JSON reads back the same, in the order written.
    @Test(arguments: operatorCases.map(\.condition))
    func jsonRoundTrip(_ text: String) throws {
        let condition = try TargetingCondition(json: JSONParser.parse(text))
        #expect(try TargetingCondition(json: condition.jsonValue) == condition)
        #expect(condition.jsonValue == (try JSONParser.parse(text)))
    }

    struct ProblemCase: Sendable, CustomTestStringConvertible {
        let condition: String
        let paths: [String]
        let messageContains: String
        init(_ condition: String, _ paths: [String], _ messageContains: String) {
            (self.condition, self.paths, self.messageContains) = (condition, paths, messageContains)
        }
        var testDescription: String { condition }
    }

    /// Malformed conditions are refused with every problem's path and a message saying what was expected.
    @Test(arguments: [
        ProblemCase(#""country""#, [""], "expected a condition (a JSON object), found \"country\""),
        ProblemCase(#"{}"#, [""], "expected a condition: {\"attribute\""),
        ProblemCase(#"{"attribute": "country"}"#, [""], "needs an operator"),
        ProblemCase(#"{"attribute": "", "is": 1}"#, ["/attribute"], "must not be empty"),
        ProblemCase(#"{"attribute": 7, "is": 1}"#, ["/attribute"], "must be a string, found 7"),
        ProblemCase(#"{"is": "DE"}"#, ["/attribute"], "missing \"attribute\""),
        ProblemCase(#"{"attribute": "country", "equals": "DE"}"#, ["/equals"], "unknown operator \"equals\"; expected one of \"is\", \"isNot\""),
        ProblemCase(#"{"attribute": "country", "in": "DE"}"#, ["/in"], "needs an array of values, found \"DE\""),
        ProblemCase(#"{"attribute": "country", "in": []}"#, ["/in"], "needs at least one value"),
        ProblemCase(#"{"attribute": "country", "is": null}"#, ["/is"], "use \"exists\": false"),
        ProblemCase(#"{"attribute": "beta", "exists": "yes"}"#, ["/exists"], "must be true or false"),
        ProblemCase(#"{"attribute": "age", "gt": [1]}"#, ["/gt"], "needs a number or a string"),
        ProblemCase(#"{"attribute": "appVersion", "versionGte": ""}"#, ["/versionGte"], "needs a version such as \"5.2.0\""),
        ProblemCase(#"{"attribute": "a", "all": []}"#, [""], "exactly one of \"all\", \"attribute\""),
        ProblemCase(#"{"all": []}"#, ["/all"], "needs at least one condition"),
        ProblemCase(#"{"any": {"attribute": "a", "is": 1}}"#, ["/any"], "must be an array of conditions"),
        ProblemCase(#"{"not": {"attribute": "a", "is": 1}, "because": "x"}"#, ["/because"], "unknown member \"because\""),
        ProblemCase(#"{"all": [{"attribute": "a", "is": 1}, {"attribute": "b", "gte": true}, {"any": [{"attribute": "c", "xx": 1}]}]}"#, ["/all/1/gte", "/all/2/any/0/xx"], "needs a number or a string"),
        ProblemCase(#"{"attribute": "a/b~c", "nope": 1}"#, ["/nope"], "unknown operator"),
    ])
    func parseProblems(_ vector: ProblemCase) throws {
        let json = try JSONParser.parse(vector.condition)
        #expect(throws: InvalidDefinition.self) { try TargetingCondition(json: json) }
        do {
            _ = try TargetingCondition(json: json)
        } catch {
            #expect(error.problems.map(\.path.description) == vector.paths)
            #expect(error.problems.first?.message.contains(vector.messageContains) == true, "\(error.problems)")
        }
    }

    /// A condition embedded in a larger document reports problems under its own path.
    @Test func embeddedConditionReportsFullPaths() throws {
        var problems: [FlagProblem] = []
        let base = JSONPointer(["on", "onboarding.completed", "0", "when"])
        let condition = TargetingCondition.parse(
            try JSONParser.parse(#"{"any": [{"attribute": "country", "in": 5}]}"#), at: base, problems: &problems)
        #expect(condition == nil)
        #expect(problems.map(\.path.description) == ["/on/onboarding.completed/0/when/any/0/in"])
    }
}

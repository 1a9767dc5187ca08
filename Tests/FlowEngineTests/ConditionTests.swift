// ConditionTests: every condition source and operator, the combinators, and missing values.

import JSON
import Testing

import FlowEngine

struct ConditionTests {
    static let context = FlowContext(
        userId: "u-1",
        attributes: ["country": "DE", "appVersion": "1.2"],
        traits: ["horizontalSizeClass": "compact"],
        flags: ["beta": true, "level": 2],
        user: ["onboarded": true])
    static let params: JSONObject = ["index": 1]

    /// Reads a `when` by wrapping it in a rule, as users write it.
    static func condition(_ json: String) -> FlowCondition? {
        let document = #"{"name": "t", "kind": "stacked", "initial": ["a"], "on": {"x": [{"when": \#(json), "do": [{"pop": {}}]}]}}"#
        return (try? FlowDefinition.parse(Array(document.utf8)))?.rules(for: "x")?.first?.when
    }

    static let cases: [(String, Bool)] = [
        (#"{"flag": "beta", "is": true}"#, true),
        (#"{"flag": "beta", "is": false}"#, false),
        (#"{"flag": "beta", "isNot": false}"#, true),
        (#"{"flag": "missing", "is": true}"#, false),
        (#"{"flag": "missing", "is": null}"#, false),
        (#"{"flag": "missing", "isNot": true}"#, true),
        (#"{"flag": "level", "is": 2.0}"#, true),
        (#"{"flag": "level", "in": [1, 2]}"#, true),
        (#"{"flag": "level", "in": []}"#, false),
        (#"{"flag": "level", "notIn": [2]}"#, false),
        (#"{"flag": "missing", "in": [null]}"#, false),
        (#"{"flag": "missing", "notIn": [1]}"#, true),
        (#"{"flag": "beta", "exists": true}"#, true),
        (#"{"flag": "missing", "exists": true}"#, false),
        (#"{"flag": "missing", "exists": false}"#, true),
        (#"{"user": "onboarded", "is": true}"#, true),
        (#"{"user": "onboarded", "isNot": true}"#, false),
        (#"{"user": "onboarded", "in": [true]}"#, true),
        (#"{"user": "onboarded", "notIn": [false]}"#, true),
        (#"{"user": "name", "exists": false}"#, true),
        (#"{"attribute": "country", "is": "DE"}"#, true),
        (#"{"attribute": "country", "isNot": "DE"}"#, false),
        (#"{"attribute": "country", "in": ["DE", "FR"]}"#, true),
        (#"{"attribute": "country", "notIn": ["DE", "FR"]}"#, false),
        (#"{"attribute": "appVersion", "exists": true}"#, true),
        (#"{"trait": "horizontalSizeClass", "is": "compact"}"#, true),
        (#"{"trait": "horizontalSizeClass", "isNot": "regular"}"#, true),
        (#"{"trait": "horizontalSizeClass", "in": ["regular"]}"#, false),
        (#"{"trait": "horizontalSizeClass", "notIn": ["regular"]}"#, true),
        (#"{"trait": "displayScale", "exists": true}"#, false),
        (#"{"param": "index", "is": 1}"#, true),
        (#"{"param": "index", "isNot": 1}"#, false),
        (#"{"param": "index", "in": [0, 2]}"#, false),
        (#"{"param": "index", "notIn": [0, 2]}"#, true),
        (#"{"param": "other", "exists": false}"#, true),
        (#"{"all": [{"flag": "beta", "is": true}, {"user": "onboarded", "is": true}]}"#, true),
        (#"{"all": [{"flag": "beta", "is": true}, {"user": "onboarded", "is": false}]}"#, false),
        (#"{"any": [{"flag": "beta", "is": false}, {"attribute": "country", "is": "DE"}]}"#, true),
        (#"{"any": [{"flag": "beta", "is": false}, {"attribute": "country", "is": "FR"}]}"#, false),
        (#"{"not": {"flag": "beta", "is": true}}"#, false),
        (#"{"not": {"any": [{"flag": "beta", "is": false}, {"not": {"trait": "horizontalSizeClass", "exists": true}}]}}"#, true),
    ]

    /// Each source and operator evaluates as documented, missing values included.
    @Test(arguments: cases)
    func evaluates(json: String, expected: Bool) throws {
        let condition = try #require(Self.condition(json))
        #expect(condition.evaluate(in: Self.context, params: Self.params) == expected)
    }

    /// Empty combinators follow logic: `all` of nothing holds, `any` of nothing does not.
    @Test func emptyCombinators() {
        #expect(FlowCondition.all([]).evaluate(in: Self.context, params: [:]))
        #expect(!FlowCondition.any([]).evaluate(in: Self.context, params: [:]))
    }

    /// A rule's `when` decides between rules in the engine (flag on and off).
    @Test(arguments: [true, false])
    func ruleConditionSelectsRule(flag: Bool) throws {
        var session = try LabFlows.session(context: FlowContext(userId: "lab", flags: ["beta": .bool(flag)]))
        if flag {
            try session.send("t.flagged")
            #expect(session.topFeature == "a.beta")
        } else {
            #expect(session.failure("t.flagged")?.code == "refused")
        }
    }
}

// EvaluationContextTests: attribute look-up, the hash input derived from it, and inputs that must not trap.

import FeatureFlags
import JSON
import Testing

struct EvaluationContextTests {
    /// Numeric hash attributes become the text JavaScript's String(number) gives (values from Node), so they bucket as in the JS SDK.
    @Test(arguments: [
        (JSONValue.integer(42), "42"), (.integer(-7), "-7"), (.number(1.5), "1.5"), (.number(1e21), "1e+21"),
        (.number(1e-7), "1e-7"), (.number(0.000001), "0.000001"), (.number(123456789.123), "123456789.123"),
        (.number(0.1), "0.1"), (.number(100), "100"), (.number(1.5e300), "1.5e+300"),
        (.number(-2.5e-8), "-2.5e-8"), (.number(123e18), "123000000000000000000"), (.number(4.35), "4.35"),
        (.integer(9_007_199_254_740_993), "9007199254740992"),
    ])
    func numbersHashAsJavaScriptWritesThem(_ value: JSONValue, _ text: String) {
        let context = EvaluationContext(attributes: ["deviceId": value])
        #expect(context.hashInput(for: "deviceId") == .value(text))
    }

    /// userId and targetingKey read the targeting key, falling back to the attribute when there is none; null is missing.
    @Test func attributeLookup() {
        let withKey = EvaluationContext(targetingKey: "u-1", attributes: ["userId": "other", "country": nil])
        #expect(withKey.attribute("userId") == "u-1")
        #expect(withKey.attribute("targetingKey") == "u-1")
        #expect(withKey.attribute("country") == nil)
        #expect(withKey.hashInput(for: "country") == .missing)
        let withoutKey = EvaluationContext(attributes: ["userId": "u-5"])
        #expect(withoutKey.attribute("userId") == "u-5")
        #expect(withoutKey.hashInput(for: "userId") == .value("u-5"))
        #expect(EvaluationContext(attributes: ["tags": ["a"]]).hashInput(for: "tags") == .unusable(typeName: "array"))
    }

    /// Zero and the empty string bucket nobody, as in every GrowthBook SDK (which hash only truthy values).
    @Test(arguments: [JSONValue.integer(0), .number(0), .number(-0.0), .string("")])
    func zeroIsNotHashed(_ value: JSONValue) {
        #expect(EvaluationContext(attributes: ["deviceId": value]).hashInput(for: "deviceId") == .missing)
    }

    /// Odd documents are refused or read, never trapping: deep nesting, huge numbers, wrong types everywhere.
    @Test(arguments: [
        "null", "0", "[]", #""""#, "{}",
        #"{"variants": {"on": 1e308}, "defaultVariant": "on", "split": [{"variant": "on", "weight": 1e308}]}"#,
        #"{"variants": {"on": 1}, "defaultVariant": "on", "split": [{"variant": "on", "weight": -1e308}, {"variant": "on", "weight": 1e308}]}"#,
        #"{"variants": [{"key": "a", "weight": 1e308, "flows": {"f": 9223372036854775807}}, {"key": "b", "weight": -1e308}], "coverage": -0.0}"#,
        #"{"variants": [{"key": "a", "flows": {"f": 1e300}}], "coverage": 1e-320}"#,
        #"{"variants": {"on": 1}, "defaultVariant": "on", "rules": [{"when": {"attribute": "v", "versionGt": 1e300, "gt": -9223372036854775808}, "variant": "on"}]}"#,
        String(repeating: #"{"not":"#, count: 60) + #"{"attribute": "a", "is": 1}"# + String(repeating: "}", count: 60),
    ])
    func oddDocumentsDoNotTrap(_ text: String) throws {
        let json = try JSONParser.parse(text)
        let context = EvaluationContext(targetingKey: "u-1", attributes: ["v": .number(-1e300), "a": 1])
        if let flag = try? FlagDefinition(json: json) {
            _ = flag.evaluate(key: "k", context: context)
            _ = flag.problems
        }
        if let experiment = try? ExperimentDefinition(json: json) {
            _ = experiment.assign(key: "k", context: context)
            _ = experiment.problems
        }
        if let condition = try? TargetingCondition(json: json) {
            _ = condition.matches(context)
        }
    }
}

// FlagDefinitionTests: flags read from DESIGN's format, written back, and refused with exact paths.

import FeatureFlags
import JSON
import Testing

struct FlagDefinitionTests {
    /// DESIGN's example flag, verbatim.
    static let designExample = """
        {"variants": {"on": true, "off": false}, "defaultVariant": "off",
         "rules": [{"when": {"attribute": "country", "in": ["DE", "FR"]}, "variant": "on"}],
         "split": [{"variant": "on", "weight": 0.1}, {"variant": "off", "weight": 0.9}]}
        """

    /// DESIGN's example reads with every member, and the optional ones take their defaults.
    @Test func readsDesignExample() throws {
        let flag = try FlagDefinition(json: JSONParser.parse(Self.designExample))
        #expect(flag.variants.keys == ["on", "off"])
        #expect(flag.variants["on"] == true)
        #expect(flag.defaultVariant == "off")
        #expect(flag.rules == [FlagDefinition.Rule(
            when: .attribute(AttributeCondition(attribute: "country", tests: [AttributeTest(operation: .oneOf, operand: ["DE", "FR"])])),
            variant: "on")])
        #expect(flag.split == [.init(variant: "on", weight: 0.1), .init(variant: "off", weight: 0.9)])
        #expect(flag.enabled)
        #expect(flag.seed == nil)
        #expect(flag.hashAttribute == "userId")
        #expect(flag.description == nil)
        #expect(flag.problems.isEmpty)
    }

    /// Variant values may be any JSON, and every optional member is read.
    @Test func readsEveryMember() throws {
        let flag = try FlagDefinition(json: JSONParser.parse("""
            {"variants": {"compact": {"rows": 3, "tags": ["a"]}, "none": null, "count": 7, "label": "Hi"},
             "defaultVariant": "none", "enabled": false, "seed": "home-2026", "hashAttribute": "deviceId",
             "description": "Home layout"}
            """))
        #expect(flag.variants["compact"] == ["rows": 3, "tags": ["a"]])
        #expect(flag.variants["none"] == .null)
        #expect(!flag.enabled)
        #expect(flag.seed == "home-2026")
        #expect(flag.hashAttribute == "deviceId")
        #expect(flag.description == "Home layout")
        #expect(flag.split == nil)
        #expect(flag.rules.isEmpty)
    }

    /// A flag written back to JSON reads back equal, and defaults are left out.
    @Test func jsonRoundTrip() throws {
        let flag = try FlagDefinition(json: JSONParser.parse(Self.designExample))
        #expect(try FlagDefinition(json: flag.jsonValue) == flag)
        #expect(flag.jsonValue == (try JSONParser.parse(Self.designExample)))
        let minimal = FlagDefinition(variants: ["on": true, "off": false], defaultVariant: "off")
        #expect(minimal.jsonValue.jsonText == #"{"variants":{"on":true,"off":false},"defaultVariant":"off"}"#)
    }

    struct ProblemCase: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String
        let problems: [(path: String, message: String)]
        var testDescription: String { name }
    }

    /// Each invalid flag is refused with exactly these problems, paths and messages.
    @Test(arguments: [
        ProblemCase(name: "not an object", json: #"[1]"#, problems: [
            ("", "expected a flag (a JSON object), found array [1]"),
        ]),
        ProblemCase(name: "empty object", json: #"{}"#, problems: [
            ("/variants", "missing \"variants\": expected a map from variant name to value, such as {\"on\": true, \"off\": false}"),
            ("/defaultVariant", "missing \"defaultVariant\": expected a non-empty string"),
        ]),
        ProblemCase(name: "no variants", json: #"{"variants": {}, "defaultVariant": "off"}"#, problems: [
            ("/variants", "a flag needs at least one variant, such as {\"on\": true, \"off\": false}"),
            ("/defaultVariant", "\"off\" is not a variant; define it first"),
        ]),
        ProblemCase(name: "unknown default", json: #"{"variants": {"on": true, "off": false}, "defaultVariant": "of"}"#, problems: [
            ("/defaultVariant", "\"of\" is not a variant; expected one of \"on\", \"off\""),
        ]),
        ProblemCase(name: "variants not an object", json: #"{"variants": ["on", "off"], "defaultVariant": "off"}"#, problems: [
            ("/variants", "\"variants\" must be an object from variant name to value, such as {\"on\": true, \"off\": false}, found array [\"on\",\"off\"]"),
        ]),
        ProblemCase(name: "empty variant name", json: #"{"variants": {"": 1}, "defaultVariant": ""}"#, problems: [
            ("/variants/", "a variant name must not be empty"),
            ("/defaultVariant", "\"defaultVariant\" must not be empty"),
        ]),
        ProblemCase(name: "unknown members", json: #"{"variants": {"on": true}, "defaultVariant": "on", "defualtVariant": "on", "rollout": 5}"#, problems: [
            ("/defualtVariant", "unknown member \"defualtVariant\"; expected one of \"variants\", \"defaultVariant\", \"rules\", \"split\", \"enabled\", \"seed\", \"hashAttribute\", \"description\""),
            ("/rollout", "unknown member \"rollout\"; expected one of \"variants\", \"defaultVariant\", \"rules\", \"split\", \"enabled\", \"seed\", \"hashAttribute\", \"description\""),
        ]),
        ProblemCase(name: "bad rules", json: """
            {"variants": {"on": true, "off": false}, "defaultVariant": "off", "rules": [
              {"when": {"attribute": "country", "in": ["DE"]}, "variant": "onn"},
              {"variant": "on"},
              {"when": {"attribute": "country", "within": ["DE"]}, "variant": "on", "priority": 1},
              "on"]}
            """, problems: [
            ("/rules/0/variant", "\"onn\" is not a variant; expected one of \"on\", \"off\""),
            ("/rules/1/when", "missing \"when\": a rule needs a condition; to serve a variant to everyone make it the \"defaultVariant\""),
            ("/rules/2/priority", "unknown member \"priority\"; expected one of \"when\", \"variant\""),
            ("/rules/2/when/within", "unknown operator \"within\"; expected one of \"is\", \"isNot\", \"in\", \"notIn\", \"exists\", \"gt\", \"gte\", \"lt\", \"lte\", \"versionGt\", \"versionGte\", \"versionLt\", \"versionLte\", \"versionIs\", \"versionIsNot\""),
            ("/rules/3", "expected a rule {\"when\": CONDITION, \"variant\": NAME} (a JSON object), found \"on\""),
        ]),
        ProblemCase(name: "rules not an array", json: #"{"variants": {"on": true}, "defaultVariant": "on", "rules": {}}"#, problems: [
            ("/rules", "\"rules\" must be an array of {\"when\": CONDITION, \"variant\": NAME}, found object {}"),
        ]),
        ProblemCase(name: "weights out of range", json: """
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "split": [{"variant": "on", "weight": 1.5}, {"variant": "off", "weight": -0.5}]}
            """, problems: [
            ("/split/0/weight", "\"weight\" must be from 0 to 1, found 1.5"),
            ("/split/1/weight", "\"weight\" must be from 0 to 1, found -0.5"),
        ]),
        ProblemCase(name: "weights not adding up", json: """
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "split": [{"variant": "on", "weight": 0.2}, {"variant": "off", "weight": 0.9}]}
            """, problems: [
            ("/split", "weights must add up to 1 (±0.01), they add up to 1.1"),
        ]),
        ProblemCase(name: "bad split entries", json: """
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "split": [{"variant": "on"}, {"variant": "on", "weight": "half"}, {"variant": "gone", "weight": 0.5, "sticky": true}]}
            """, problems: [
            ("/split/0/weight", "missing \"weight\": expected the share of users from 0 to 1"),
            ("/split/1/weight", "\"weight\" must be a number from 0 to 1, found \"half\""),
            ("/split/2/sticky", "unknown member \"sticky\"; expected one of \"variant\", \"weight\""),
            ("/split/1/variant", "\"on\" appears twice in the split; give it one weight"),
            ("/split/2/variant", "\"gone\" is not a variant; expected one of \"on\", \"off\""),
        ]),
        ProblemCase(name: "empty split", json: #"{"variants": {"on": true}, "defaultVariant": "on", "split": []}"#, problems: [
            ("/split", "a split needs at least one variant; remove \"split\" to serve the default"),
        ]),
        ProblemCase(name: "bad optional members", json: """
            {"variants": {"on": true}, "defaultVariant": "on", "enabled": "yes", "seed": "", "hashAttribute": 3, "description": 4}
            """, problems: [
            ("/enabled", "\"enabled\" must be true or false, found \"yes\""),
            ("/seed", "\"seed\" must not be empty"),
            ("/hashAttribute", "\"hashAttribute\" must be a string, found 3"),
            ("/description", "\"description\" must be a string, found 4"),
        ]),
    ])
    func refusesWithPaths(_ vector: ProblemCase) throws {
        let json = try JSONParser.parse(vector.json)
        do {
            _ = try FlagDefinition(json: json)
            Issue.record("accepted an invalid flag")
        } catch {
            #expect(error.problems.map(\.path.description) == vector.problems.map(\.path))
            #expect(error.problems.map(\.message) == vector.problems.map(\.message))
        }
    }

    /// A flag built in code reports the same problems as its JSON would.
    @Test func problemsOfACodeBuiltFlag() {
        let flag = FlagDefinition(
            variants: ["on": true], defaultVariant: "off",
            rules: [.init(when: .all([]), variant: "maybe")],
            split: [.init(variant: "on", weight: 0.5)], seed: "", hashAttribute: "")
        #expect(flag.problems.map(\.path.description) == ["/defaultVariant", "/rules/0/variant", "/split", "/seed", "/hashAttribute"])
    }

    /// Problems encode as RFC 9457 `errors` entries.
    @Test func problemsEncodeForTheAPI() {
        let problem = FlagProblem(path: JSONPointer(["split", "0", "weight"]), message: "too big")
        #expect(problem.jsonValue.jsonText == #"{"path":"/split/0/weight","message":"too big"}"#)
        #expect(problem.description == "/split/0/weight: too big")
    }

    /// A reference to an unknown variant names the first ten variants only: naming all of them
    /// for each of many references made problems grow with the square of the body (a 537 KB flag
    /// made 1.5 GB of them). Found while fuzzing (scripts/fuzz.sh).
    @Test func unknownVariantMessagesStayShort() throws {
        let variants = (0..<1_000).map { #""v\#($0)": \#($0)"# }.joined(separator: ", ")
        let split = Array(repeating: #"{"variant": "x", "weight": 0.001}"#, count: 500).joined(separator: ", ")
        let json = try JSONParser.parse(#"{"variants": {\#(variants)}, "defaultVariant": "v0", "split": [\#(split)]}"#)
        do {
            _ = try FlagDefinition(json: json)
            Issue.record("accepted an invalid flag")
        } catch {
            let unknown = error.problems.filter { $0.message.hasPrefix("\"x\" is not a variant") }
            #expect(unknown.count == 500)
            #expect(unknown.first?.message == #""x" is not a variant; expected one of "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9" and 990 more"#)
            #expect(error.problems.reduce(0) { $0 + $1.message.utf8.count } < 100_000)
        }
    }
}

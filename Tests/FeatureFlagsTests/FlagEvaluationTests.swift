// FlagEvaluationTests: each OpenFeature reason, the split's bucketing, FlagSet and the JSON answers.

import FeatureFlags
import JSON
import Testing

struct FlagEvaluationTests {
    static func flag(_ text: String) throws -> FlagDefinition {
        try FlagDefinition(json: JSONParser.parse(text))
    }

    static func context(_ user: String? = "u-1", _ attributes: [String: JSONValue] = [:]) -> EvaluationContext {
        EvaluationContext(targetingKey: user, attributes: attributes)
    }

    /// A flag with neither rules nor split serves its default to everyone with STATIC.
    @Test func staticFlag() throws {
        let flag = try Self.flag(#"{"variants": {"v1": "classic", "v2": "new"}, "defaultVariant": "v2"}"#)
        #expect(flag.evaluate(key: "home-layout", context: Self.context()) == EvaluationDetails(value: "new", variant: "v2", reason: .static))
        #expect(flag.evaluate(key: "home-layout", context: EvaluationContext()).reason == .static)
    }

    /// A disabled flag serves its default with DISABLED, even to a user its rules would match.
    @Test func disabledFlag() throws {
        let flag = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off", "enabled": false,
             "rules": [{"when": {"attribute": "country", "in": ["DE"]}, "variant": "on"}]}
            """)
        #expect(flag.evaluate(key: "eu-face-scan", context: Self.context("u-1", ["country": "DE"]))
            == EvaluationDetails(value: false, variant: "off", reason: .disabled))
    }

    /// The first rule whose condition holds decides, with TARGETING_MATCH, before any split.
    @Test func firstMatchingRuleWins() throws {
        let flag = try Self.flag("""
            {"variants": {"a": 1, "b": 2, "c": 3}, "defaultVariant": "c",
             "rules": [{"when": {"attribute": "platform", "is": "ios"}, "variant": "a"},
                       {"when": {"attribute": "country", "in": ["DE"]}, "variant": "b"}],
             "split": [{"variant": "c", "weight": 1}]}
            """)
        let both = Self.context("u-1", ["platform": "ios", "country": "DE"])
        #expect(flag.evaluate(key: "k", context: both) == EvaluationDetails(value: 1, variant: "a", reason: .targetingMatch))
        let second = Self.context("u-1", ["platform": "web", "country": "DE"])
        #expect(flag.evaluate(key: "k", context: second) == EvaluationDetails(value: 2, variant: "b", reason: .targetingMatch))
    }

    /// A split buckets with GrowthBook's hash v2 of (flag key, user): "u-1" hashes to 0.4804 under "eu-face-scan".
    @Test func splitBucketsWithHashV2() throws {
        let flag = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "split": [{"variant": "on", "weight": 0.5}, {"variant": "off", "weight": 0.5}]}
            """)
        #expect(Bucketing.hash(seed: "eu-face-scan", value: "u-1", version: 2) == 0.4804)
        #expect(flag.evaluate(key: "eu-face-scan", context: Self.context("u-1"))
            == EvaluationDetails(value: true, variant: "on", reason: .split))
        // The same user under another key (another seed) lands elsewhere: 0.83 for "onboarding-length"/"u-2".
        #expect(flag.evaluate(key: "onboarding-length", context: Self.context("u-2")).variant == "off")
    }

    /// A seed replaces the flag key in the hash, and a named hash attribute replaces the targeting key.
    @Test func seedAndHashAttribute() throws {
        let seeded = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off", "seed": "onboarding-length",
             "split": [{"variant": "on", "weight": 0.4}, {"variant": "off", "weight": 0.6}]}
            """)
        // hash("onboarding-length", "u-1") = 0.3973 < 0.4
        #expect(seeded.evaluate(key: "anything", context: Self.context("u-1")).variant == "on")
        let byDevice = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off", "seed": "onboarding-length",
             "hashAttribute": "deviceId", "split": [{"variant": "on", "weight": 0.4}, {"variant": "off", "weight": 0.6}]}
            """)
        // The device id, not the user, is hashed: "u-2" hashes to 0.83.
        #expect(byDevice.evaluate(key: "k", context: Self.context("u-1", ["deviceId": "u-2"])).variant == "off")
        // A numeric attribute hashes as JavaScript writes it: 42 as "42" (0.869).
        #expect(byDevice.evaluate(key: "k", context: Self.context(nil, ["deviceId": 42]))
            == byDevice.evaluate(key: "k", context: Self.context(nil, ["deviceId": "42"])))
    }

    /// Rules that do not match and no split give the default with DEFAULT.
    @Test func noRuleMatches() throws {
        let flag = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "rules": [{"when": {"attribute": "country", "in": ["DE", "FR"]}, "variant": "on"}]}
            """)
        #expect(flag.evaluate(key: "eu-face-scan", context: Self.context("u-1", ["country": "US"]))
            == EvaluationDetails(value: false, variant: "off", reason: .default))
    }

    /// A split without the hash attribute (no targeting key, or an empty one) falls back to the default with DEFAULT.
    @Test(arguments: [nil, ""] as [String?])
    func splitWithoutTargetingKey(_ user: String?) throws {
        let flag = try Self.flag(FlagDefinitionTests.designExample)
        #expect(flag.evaluate(key: "eu-face-scan", context: Self.context(user, ["country": "US"]))
            == EvaluationDetails(value: false, variant: "off", reason: .default))
    }

    /// A hash attribute that cannot be hashed is an INVALID_CONTEXT error that still serves the default.
    @Test func unusableHashAttribute() throws {
        let flag = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off", "hashAttribute": "deviceId",
             "split": [{"variant": "on", "weight": 1}]}
            """)
        let details = flag.evaluate(key: "k", context: Self.context("u-1", ["deviceId": ["a"]]))
        #expect(details.reason == .error)
        #expect(details.errorCode == .invalidContext)
        #expect(details.value == false)
        #expect(details.variant == "off")
        #expect(details.errorMessage == #"flag "k" splits on attribute "deviceId", which is an array; expected a string or a number"#)
    }

    /// A flag built in code that names an undefined variant answers ERROR with GENERAL instead of trapping.
    @Test func undefinedVariantsInCode() {
        let noDefault = FlagDefinition(variants: ["on": true], defaultVariant: "off")
        #expect(noDefault.evaluate(key: "k", context: Self.context()).errorCode == .general)
        let badRule = FlagDefinition(
            variants: ["on": true], defaultVariant: "on",
            rules: [.init(when: .attribute(AttributeCondition(attribute: "userId", tests: [AttributeTest(operation: .exists, operand: true)])), variant: "gone")])
        let details = badRule.evaluate(key: "k", context: Self.context())
        #expect(details.reason == .error)
        #expect(details.errorCode == .general)
        #expect(details.value == true)
    }

    /// About 10% of 10,000 users get a 10% split variant, and each user always gets the same one.
    @Test func splitShares() throws {
        let flag = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "split": [{"variant": "on", "weight": 0.1}, {"variant": "off", "weight": 0.9}]}
            """)
        var on = 0
        for index in 0..<10_000 {
            let context = Self.context("user-\(index)")
            let details = flag.evaluate(key: "new-home", context: context)
            #expect(details.reason == .split)
            if details.variant == "on" { on += 1 }
        }
        #expect((900...1_100).contains(on))
        #expect(flag.evaluate(key: "new-home", context: Self.context("user-7")) == flag.evaluate(key: "new-home", context: Self.context("user-7")))
    }

    /// Details encode as {"value", "variant", "reason"}, with errorCode (and its message) only on errors.
    @Test func detailsJSON() throws {
        var writer = JSONWriter()
        EvaluationDetails(value: true, variant: "on", reason: .targetingMatch).write(to: &writer)
        #expect(String(decoding: writer.takeBytes(), as: UTF8.self) == #"{"value":true,"variant":"on","reason":"TARGETING_MATCH"}"#)

        let missing = EvaluationDetails.flagNotFound(key: "nope")
        missing.write(to: &writer)
        #expect(String(decoding: writer.takeBytes(), as: UTF8.self)
            == #"{"value":null,"variant":null,"reason":"ERROR","errorCode":"FLAG_NOT_FOUND","errorMessage":"no flag is defined with key \"nope\""}"#)
        #expect(missing.jsonValue == (try JSONParser.parse(missing.jsonValue.jsonText)))
        #expect(EvaluationDetails(value: ["a": 1], variant: "v", reason: .static).jsonValue.jsonText == #"{"value":{"a":1},"variant":"v","reason":"STATIC"}"#)
    }

    /// A FlagSet evaluates one key (FLAG_NOT_FOUND with the caller's default for an unknown one) or all, in key order.
    @Test func flagSet() throws {
        let flags = FlagSet([
            "new-home": try Self.flag(#"{"variants": {"on": true, "off": false}, "defaultVariant": "on"}"#),
            "eu-face-scan": try Self.flag(FlagDefinitionTests.designExample),
            "Beta": try Self.flag(#"{"variants": {"x": 1}, "defaultVariant": "x", "enabled": false}"#),
        ])
        let context = Self.context("u-1", ["country": "FR"])
        #expect(flags.evaluate(key: "eu-face-scan", context: context).reason == .targetingMatch)
        let unknown = flags.evaluate(key: "nope", context: context, defaultValue: false)
        #expect(unknown.reason == .error)
        #expect(unknown.errorCode == .flagNotFound)
        #expect(unknown.value == false)

        let all = flags.evaluateAll(context: context)
        #expect(all.keys == ["Beta", "eu-face-scan", "new-home"])
        #expect(all["eu-face-scan"]?.variant == "on")
        #expect(all["nope"] == nil)
        var writer = JSONWriter()
        all.write(to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == """
            {"Beta":{"value":1,"variant":"x","reason":"DISABLED"},\
            "eu-face-scan":{"value":true,"variant":"on","reason":"TARGETING_MATCH"},\
            "new-home":{"value":true,"variant":"on","reason":"STATIC"}}
            """)
        #expect(all.jsonValue == (try JSONParser.parse(String(decoding: writer.bytes, as: UTF8.self))))
    }

    /// evaluateAll takes any sequence of keyed flags and keeps key order whatever order they come in.
    @Test func evaluateAllFromAnySequence() throws {
        let on = try Self.flag(#"{"variants": {"on": true}, "defaultVariant": "on"}"#)
        let rows: [(key: String, value: FlagDefinition)] = [("c", on), ("a", on), ("b", on), ("a", on)]
        let all = FlagSet.evaluateAll(flags: rows, context: Self.context())
        #expect(all.keys == ["a", "b", "c"])
        #expect(all.count == 3)
    }
}

// OFREPEvaluationTests: the targeting key OFREP requires, experiments seen as flags, and OFREP's JSON.

import FeatureFlags
import JSON
import Testing

struct OFREPEvaluationTests {
    static func flag(_ text: String) throws -> FlagDefinition {
        try FlagDefinition(json: JSONParser.parse(text))
    }

    static func experiment(_ text: String) throws -> ExperimentDefinition {
        try ExperimentDefinition(json: JSONParser.parse(text))
    }

    static func ofrep(_ details: EvaluationDetails, key: String = "k") -> String {
        var writer = JSONWriter()
        details.writeOFREP(key: key, to: &writer)
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }

    static let userSplit = #"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "split": [{"variant": "on", "weight": 0.5}, {"variant": "off", "weight": 0.5}]}"#

    /// Requiring the targeting key turns only "a split on it, without it" into TARGETING_KEY_MISSING.
    @Test func requiringTargetingKey() throws {
        let split = try Self.flag(Self.userSplit)
        let anonymous = EvaluationContext(attributes: ["country": "DE"])
        #expect(split.evaluate(key: "k", context: anonymous).reason == .default)
        let required = split.evaluate(key: "k", context: anonymous, requiringTargetingKey: true)
        #expect(required.reason == .error)
        #expect(required.errorCode == .targetingKeyMissing)
        #expect(split.evaluate(key: "k", context: EvaluationContext(targetingKey: ""), requiringTargetingKey: true).errorCode == .targetingKeyMissing)
        // With a key, or with the id among the attributes, nothing changes.
        let keyed = EvaluationContext(targetingKey: "u-1")
        #expect(split.evaluate(key: "k", context: keyed, requiringTargetingKey: true) == split.evaluate(key: "k", context: keyed))
        #expect(split.evaluate(key: "k", context: EvaluationContext(attributes: ["userId": "u-1"]), requiringTargetingKey: true).reason == .split)
        // A rule that matches first needs no key; a split on another attribute never asks for it.
        let ruled = try Self.flag(#"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "rules": [{"when": {"attribute": "country", "in": ["DE"]}, "variant": "on"}], "split": [{"variant": "on", "weight": 1}]}"#)
        #expect(ruled.evaluate(key: "k", context: anonymous, requiringTargetingKey: true).reason == .targetingMatch)
        let device = try Self.flag(#"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "hashAttribute": "deviceId", "split": [{"variant": "on", "weight": 1}]}"#)
        #expect(device.evaluate(key: "k", context: anonymous, requiringTargetingKey: true).reason == .default)
        // Static and disabled flags never need one.
        #expect(try Self.flag(#"{"variants": {"a": 1}, "defaultVariant": "a"}"#).evaluate(key: "k", context: anonymous, requiringTargetingKey: true).reason == .static)
        #expect(try Self.flag(#"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "enabled": false, "split": [{"variant": "on", "weight": 1}]}"#)
            .evaluate(key: "k", context: anonymous, requiringTargetingKey: true).reason == .disabled)
    }

    /// An experiment as a flag answers exactly the variant `assign` gives, for thousands of users.
    @Test func experimentEvaluationIsAssignment() throws {
        let experiment = try Self.experiment("""
            {"variants": [{"key": "control", "weight": 0.3}, {"key": "short", "weight": 0.7}], "coverage": 0.6,
             "when": {"attribute": "platform", "in": ["ios", "android"]}}
            """)
        let platforms: [JSONValue] = ["ios", "android", "web"]
        for index in 0..<3_000 {
            let context = EvaluationContext(targetingKey: "user-\(index)", attributes: ["platform": platforms[index % 3]])
            let details = experiment.evaluate(key: "onboarding-length", context: context, requiringTargetingKey: true)
            if let assignment = experiment.assign(key: "onboarding-length", context: context) {
                #expect(details == EvaluationDetails(value: .string(assignment.variantKey), variant: assignment.variantKey, reason: .split))
            } else {
                #expect(details == EvaluationDetails(value: .null, variant: nil, reason: .default))
            }
        }
    }

    /// Outside an experiment: DISABLED, DEFAULT, or the errors a flag's split would give.
    @Test func experimentOutsideReasons() throws {
        let user = EvaluationContext(targetingKey: "u-1")
        #expect(try Self.experiment(#"{"variants": [{"key": "a"}], "enabled": false}"#).evaluate(key: "e", context: user)
            == EvaluationDetails(value: .null, variant: nil, reason: .disabled))
        #expect(try Self.experiment(#"{"variants": [{"key": "a"}], "coverage": 0}"#).evaluate(key: "e", context: user).reason == .default)
        let plain = try Self.experiment(#"{"variants": [{"key": "a"}]}"#)
        #expect(plain.evaluate(key: "e", context: EvaluationContext()).reason == .default)
        #expect(plain.evaluate(key: "e", context: EvaluationContext(), requiringTargetingKey: true).errorCode == .targetingKeyMissing)
        let device = try Self.experiment(#"{"variants": [{"key": "a"}], "hashAttribute": "deviceId"}"#)
        #expect(device.evaluate(key: "e", context: user, requiringTargetingKey: true).reason == .default)
        #expect(device.evaluate(key: "e", context: EvaluationContext(targetingKey: "u-1", attributes: ["deviceId": true])).errorCode == .invalidContext)
    }

    /// OFREP answers OpenFeature's reasons as FlowStack's own evaluation names them, DEFAULT
    /// included (it was UNKNOWN); ERROR is a failure body instead.
    @Test(arguments: [
        (EvaluationReason.static, "STATIC"), (.default, "DEFAULT"), (.targetingMatch, "TARGETING_MATCH"),
        (.split, "SPLIT"), (.disabled, "DISABLED"),
    ])
    func reasonMapping(_ reason: EvaluationReason, _ expected: String) {
        #expect(reason.ofrep == expected)
        #expect(Set(EvaluationReason.allCases.compactMap(\.ofrep)).count == EvaluationReason.allCases.count - 1)
        #expect(EvaluationReason.error.ofrep == nil)
    }

    /// Successes, null values (OFREP's code default), failures and unknown flags, as OFREP writes them.
    @Test func ofrepJSON() {
        #expect(Self.ofrep(EvaluationDetails(value: ["a": 1], variant: "v", reason: .targetingMatch))
            == #"{"key":"k","value":{"a":1},"reason":"TARGETING_MATCH","variant":"v"}"#)
        #expect(Self.ofrep(EvaluationDetails(value: .null, variant: "none", reason: .static))
            == #"{"key":"k","reason":"STATIC","variant":"none"}"#)
        #expect(Self.ofrep(EvaluationDetails(value: .null, variant: nil, reason: .default), key: "experiment:e")
            == #"{"key":"experiment:e","reason":"DEFAULT","variant":""}"#)
        let invalid = EvaluationDetails.failure(.invalidContext, message: "bad", value: false, variant: "off")
        #expect(Self.ofrep(invalid) == #"{"key":"k","errorCode":"INVALID_CONTEXT","errorDetails":"bad"}"#)
        #expect(invalid.ofrepStatus == 400)
        let missing = EvaluationDetails.flagNotFound(key: "k")
        #expect(Self.ofrep(missing) == #"{"key":"k","errorCode":"FLAG_NOT_FOUND","errorDetails":"no flag is defined with key \"k\""}"#)
        #expect(missing.ofrepStatus == 404)
        #expect(EvaluationDetails(value: true, variant: "on", reason: .split).ofrepStatus == 200)
        #expect(EvaluationErrorCode.typeMismatch.ofrep == "GENERAL")
    }
}

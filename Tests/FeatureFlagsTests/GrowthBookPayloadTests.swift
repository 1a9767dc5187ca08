// GrowthBookPayloadTests: flags, experiments and conditions as GrowthBook's SDK payload, and what is left out and why.

import FeatureFlags
import JSON
import Testing

struct GrowthBookPayloadTests {
    static func flag(_ text: String) throws -> FlagDefinition { try FlagDefinition(json: JSONParser.parse(text)) }
    static func experiment(_ text: String) throws -> ExperimentDefinition { try ExperimentDefinition(json: JSONParser.parse(text)) }
    static func condition(_ text: String) throws -> TargetingCondition { try TargetingCondition(json: JSONParser.parse(text)) }

    struct ConditionCase: Sendable, CustomTestStringConvertible {
        let flowstack: String
        let growthbook: String
        init(_ flowstack: String, _ growthbook: String) { (self.flowstack, self.growthbook) = (flowstack, growthbook) }
        var testDescription: String { flowstack }
    }

    /// Each operator with an exact equivalent becomes it; comparisons carry a `$type` so the JS SDK cannot coerce.
    @Test(arguments: [
        ConditionCase(#"{"attribute": "platform", "is": "ios"}"#, #"{"platform":{"$eq":"ios"}}"#),
        ConditionCase(#"{"attribute": "premium", "is": true}"#, #"{"premium":{"$eq":true}}"#),
        ConditionCase(#"{"attribute": "age", "isNot": 30}"#, #"{"age":{"$ne":30}}"#),
        ConditionCase(#"{"attribute": "country", "in": ["DE", "FR"]}"#, #"{"country":{"$in":["DE","FR"]}}"#),
        ConditionCase(#"{"attribute": "country", "notIn": ["US", 1, false]}"#, #"{"country":{"$nin":["US",1,false]}}"#),
        ConditionCase(#"{"attribute": "beta", "exists": false}"#, #"{"beta":{"$exists":false}}"#),
        ConditionCase(#"{"attribute": "age", "gt": 18}"#, #"{"age":{"$type":"number","$gt":18}}"#),
        ConditionCase(#"{"attribute": "score", "gte": 0.5}"#, #"{"score":{"$type":"number","$gte":0.5}}"#),
        ConditionCase(#"{"attribute": "name", "lt": "m"}"#, #"{"name":{"$type":"string","$lt":"m"}}"#),
        ConditionCase(#"{"attribute": "name", "lte": "m"}"#, #"{"name":{"$type":"string","$lte":"m"}}"#),
        ConditionCase(#"{"attribute": "age", "gte": 18, "lt": 65}"#,
                      #"{"$and":[{"age":{"$type":"number","$gte":18}},{"age":{"$type":"number","$lt":65}}]}"#),
        ConditionCase(#"{"attribute": "userId", "in": ["u-1"]}"#, #"{"userId":{"$in":["u-1"]}}"#),
        ConditionCase(#"{"attribute": "targetingKey", "is": "u-1"}"#, #"{"userId":{"$eq":"u-1"}}"#),
        ConditionCase(#"{"all": [{"attribute": "a", "is": 1}, {"any": [{"attribute": "b", "is": 2}, {"not": {"attribute": "c", "exists": true}}]}]}"#,
                      #"{"$and":[{"a":{"$eq":1}},{"$or":[{"b":{"$eq":2}},{"$not":{"c":{"$exists":true}}}]}]}"#),
    ])
    func conditions(_ test: ConditionCase) throws {
        let translated = try GrowthBookPayload.condition(try Self.condition(test.flowstack))
        #expect(translated.jsonText == test.growthbook)
    }

    struct RefusedCase: Sendable, CustomTestStringConvertible {
        let condition: String
        let path: String
        let says: String
        init(_ condition: String, _ path: String, _ says: String) { (self.condition, self.path, self.says) = (condition, path, says) }
        var testDescription: String { condition }
    }

    /// What no GrowthBook SDK evaluates as FlowStack does is refused with where and why, never dropped.
    @Test(arguments: [
        RefusedCase(#"{"attribute": "appVersion", "versionGte": "1-2"}"#, "/versionGte", "has fewer than three numbers"),
        RefusedCase(#"{"attribute": "appVersion", "versionGt": "a.b.c"}"#, "/versionGt", "does not start with three numbers"),
        RefusedCase(#"{"attribute": "appVersion", "versionLt": "1.0.100000"}"#, "/versionLt", "has a number above 99999"),
        RefusedCase(#"{"attribute": "appVersion", "versionLte": "1.0.0-a_b"}"#, "/versionLte", "\"a_b\" that is not ASCII letters and digits"),
        RefusedCase(#"{"attribute": "appVersion", "versionIs": "1.0.0-é"}"#, "/versionIs", "not ASCII letters and digits"),
        RefusedCase(#"{"attribute": "appVersion", "versionIsNot": "1..2"}"#, "/versionIsNot", "does not start with three numbers"),
        RefusedCase(#"{"attribute": "tags", "is": ["a"]}"#, "/is", "an array"),
        RefusedCase(#"{"attribute": "prefs", "isNot": {"dark": true}}"#, "/isNot", "an object"),
        RefusedCase(#"{"attribute": "tags", "in": [["a"]]}"#, "/in", "arrays or objects"),
        RefusedCase(#"{"attribute": "device.model", "is": "x"}"#, "/attribute", "path"),
        RefusedCase(#"{"attribute": "$or", "is": "x"}"#, "/attribute", "operator"),
        RefusedCase(#"{"attribute": "constructor", "exists": false}"#, "/attribute", "every JavaScript object"),
        RefusedCase(#"{"any": [{"attribute": "a", "is": 1}, {"not": {"attribute": "v", "versionIs": "x"}}]}"#, "/any/1/not/versionIs", "major.minor.patch"),
    ])
    func refusedConditions(_ test: RefusedCase) throws {
        let condition = try Self.condition(test.condition)
        #expect(throws: GrowthBookPayload.Untranslatable.self) { try GrowthBookPayload.condition(condition) }
        do {
            _ = try GrowthBookPayload.condition(condition)
        } catch {
            #expect(error.path.description == test.path)
            #expect(error.reason.contains(test.says), "\(error.reason)")
        }
    }

    /// Rules become force rules in order, the split an experiment rule on hash v2 with the flag's seed; the default stays the default.
    @Test func flagWithRulesAndSplit() throws {
        let flag = try Self.flag("""
            {"variants": {"on": true, "off": false}, "defaultVariant": "off",
             "rules": [{"when": {"attribute": "country", "in": ["DE", "FR"]}, "variant": "on"}],
             "split": [{"variant": "on", "weight": 0.1}, {"variant": "off", "weight": 0.9}]}
            """)
        let feature = try GrowthBookPayload.feature(flag: flag, key: "new-home")
        #expect(feature.jsonText == """
            {"defaultValue":false,"rules":[{"condition":{"country":{"$in":["DE","FR"]}},"force":true},\
            {"key":"new-home","condition":{"$or":[{"userId":{"$type":"string"}},{"userId":{"$type":"number"}}]},\
            "variations":[true,false],"weights":[0.1,0.9],"coverage":1,"hashAttribute":"userId","hashVersion":2,\
            "seed":"new-home","meta":[{"key":"on"},{"key":"off"}]}]}
            """)
    }

    /// A flag's own seed and hash attribute are used, values of any JSON type pass through, null among a split's values too.
    @Test func splitKeepsSeedAttributeAndValues() throws {
        let flag = try Self.flag("""
            {"variants": {"a": {"x": [1]}, "b": null, "c": "c"}, "defaultVariant": "c", "seed": "s-1", "hashAttribute": "deviceId",
             "split": [{"variant": "a", "weight": 0.25}, {"variant": "b", "weight": 0.25}, {"variant": "c", "weight": 0.5}]}
            """)
        let rule = try GrowthBookPayload.feature(flag: flag, key: "f")["rules"]?.arrayValue?.first
        #expect(rule?["variations"]?.jsonText == #"[{"x":[1]},null,"c"]"#)
        #expect(rule?["seed"] == "s-1")
        #expect(rule?["hashAttribute"] == "deviceId")
        #expect(rule?["condition"]?.jsonText == #"{"$or":[{"deviceId":{"$type":"string"}},{"deviceId":{"$type":"number"}}]}"#)
    }

    /// A one-variant split (SDKs run no experiment of one variation) is a force rule over FlowStack's own bucket range.
    @Test func oneVariantSplitIsARollout() throws {
        let flag = try Self.flag(#"{"variants": {"on": "yes", "off": "no"}, "defaultVariant": "off", "split": [{"variant": "on", "weight": 1}]}"#)
        let rule = try GrowthBookPayload.feature(flag: flag, key: "all")["rules"]?.arrayValue?.first
        #expect(rule?.jsonText == """
            {"condition":{"$or":[{"userId":{"$type":"string"}},{"userId":{"$type":"number"}}]},"force":"yes","range":[0,1],\
            "hashAttribute":"userId","hashVersion":2,"seed":"all"}
            """)
    }

    /// A disabled flag is its default for everyone, so its rules are not served.
    @Test func disabledFlag() throws {
        let flag = try Self.flag(#"{"variants": {"on": 1, "off": 0}, "defaultVariant": "on", "enabled": false, "rules": [{"when": {"attribute": "a", "is": 1}, "variant": "off"}]}"#)
        #expect(try GrowthBookPayload.feature(flag: flag, key: "f").jsonText == #"{"defaultValue":1,"rules":[]}"#)
    }

    /// A rule serving null is refused: the Python SDK reads `"force": null` as no force.
    @Test func ruleServingNullIsRefused() throws {
        let flag = try Self.flag(#"{"variants": {"unset": null, "set": 1}, "defaultVariant": "set", "rules": [{"when": {"attribute": "a", "is": 1}, "variant": "unset"}]}"#)
        #expect(throws: GrowthBookPayload.Untranslatable(path: JSONPointer(["rules", "0", "variant"]), reason:
            "serves the variant \"unset\", whose value is null: GrowthBook's Python SDK reads \"force\": null as no force and skips the rule; give the variant a value")) {
            try GrowthBookPayload.feature(flag: flag, key: "f")
        }
        let single = try Self.flag(#"{"variants": {"unset": null, "set": 1}, "defaultVariant": "set", "split": [{"variant": "unset", "weight": 1}]}"#)
        #expect(throws: GrowthBookPayload.Untranslatable.self) { try GrowthBookPayload.feature(flag: single, key: "f") }
    }

    /// An experiment is the feature experiment:KEY whose values are its variant keys, with its weights, coverage, seed and condition.
    @Test func experimentFeature() throws {
        let experiment = try Self.experiment("""
            {"variants": [{"key": "a", "weight": 0.2}, {"key": "b", "weight": 0.8, "flows": {"onboarding": 2}}],
             "coverage": 0.5, "seed": "s", "hashAttribute": "deviceId", "when": {"attribute": "platform", "is": "ios"}}
            """)
        let feature = try GrowthBookPayload.feature(experiment: experiment, key: "paywall")
        #expect(feature.jsonText == """
            {"defaultValue":null,"rules":[{"key":"paywall","condition":{"$and":[{"platform":{"$eq":"ios"}},\
            {"$or":[{"deviceId":{"$type":"string"}},{"deviceId":{"$type":"number"}}]}]},"variations":["a","b"],\
            "weights":[0.2,0.8],"coverage":0.5,"hashAttribute":"deviceId","hashVersion":2,"seed":"s","meta":[{"key":"a"},{"key":"b"}]}]}
            """)
        #expect(GrowthBookPayload.featureKey(experiment: "paywall") == "experiment:paywall")
    }

    /// Unweighted variants get FlowStack's equal weights written out; the seed defaults to the experiment's key.
    @Test func equalWeightsWrittenOut() throws {
        let experiment = try Self.experiment(#"{"variants": [{"key": "a"}, {"key": "b"}, {"key": "c"}]}"#)
        let rule = try GrowthBookPayload.feature(experiment: experiment, key: "three")["rules"]?.arrayValue?.first
        #expect(rule?["weights"] == .array(Bucketing.equalWeights(count: 3).map(JSONValue.number)))
        #expect(rule?["seed"] == "three")
    }

    /// A one-variant experiment is a force rule whose range holds exactly the users FlowStack assigns.
    @Test func oneVariantExperimentIsARollout() throws {
        let experiment = try Self.experiment(#"{"variants": [{"key": "short", "flows": {"onboarding": 2}}], "coverage": 0.3}"#)
        let feature = try GrowthBookPayload.feature(experiment: experiment, key: "rollout")
        let rule = try #require(feature["rules"]?.arrayValue?.first)
        #expect(rule["force"] == "short")
        let range = (rule["range"]?.arrayValue ?? []).compactMap { $0.doubleValue }
        #expect(range == [0, 0.3])
        try #require(range.count == 2)
        for index in 0..<2000 {
            let user = "user-\(index)"
            let assigned = experiment.assign(key: "rollout", context: EvaluationContext(targetingKey: user)) != nil
            let n = try #require(Bucketing.hash(seed: "rollout", value: user, version: 2))
            #expect(assigned == (n >= range[0] && n < range[1]), "\(user): n = \(n)")
        }
    }

    /// A disabled experiment assigns nobody: null for everyone.
    @Test func disabledExperiment() throws {
        let experiment = try Self.experiment(#"{"variants": [{"key": "a"}, {"key": "b"}], "enabled": false}"#)
        #expect(try GrowthBookPayload.feature(experiment: experiment, key: "x").jsonText == #"{"defaultValue":null,"rules":[]}"#)
    }

    /// The payload lists flags, then experiments, each in key order, and says what it left out and why.
    @Test func payloadListsOmissions() throws {
        let plain = try Self.flag(#"{"variants": {"on": true}, "defaultVariant": "on"}"#)
        let versioned = try Self.flag(#"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "rules": [{"when": {"attribute": "appVersion", "versionGte": "5.2.0-a_b"}, "variant": "on"}]}"#)
        let dotted = try Self.experiment(#"{"variants": [{"key": "a"}, {"key": "b"}], "hashAttribute": "device.id"}"#)
        let fine = try Self.experiment(#"{"variants": [{"key": "a"}, {"key": "b"}]}"#)
        let payload = GrowthBookPayload(
            flags: [("zeta", plain), ("min-version", versioned), ("alpha", plain)],
            experiments: [("exp-b", dotted), ("exp-a", fine)], dateUpdated: "2026-01-02T03:04:05.678Z")
        #expect(payload.features.keys == ["alpha", "zeta", "experiment:exp-a"])
        #expect(payload.omitted.map(\.key) == ["min-version", "experiment:exp-b"])
        #expect(payload.omitted.map(\.path.description) == ["/rules/0/when/versionGte", "/hashAttribute"])
        let json = payload.jsonValue
        #expect(json["status"] == 200)
        #expect(json["experiments"] == [])
        #expect(json["dateUpdated"] == "2026-01-02T03:04:05.678Z")
        #expect(json["flowstack"]?["omitted"]?.arrayValue?.first?["key"] == "min-version")
        #expect(json["flowstack"]?["omitted"]?.arrayValue?.first?["reason"]?.stringValue?.contains("major.minor.patch") == true)
    }
}

// ExperimentTests: GrowthBook-identical assignment, its distribution, eligibility, pins and validation paths.

import FeatureFlags
import JSON
import Testing

struct ExperimentTests {
    /// DESIGN's example experiment.
    static let designExample = """
        {"variants": [{"key": "control", "weight": 0.5},
                      {"key": "short", "weight": 0.5, "flows": {"onboarding": 2}}],
         "coverage": 1.0, "hashAttribute": "userId"}
        """

    static func experiment(_ text: String) throws -> ExperimentDefinition {
        try ExperimentDefinition(json: JSONParser.parse(text))
    }

    /// Every user lands where the GrowthBook SDK puts them (variant, coverage, seed, bucket).
    @Test(arguments: GrowthBookVectors.experiments)
    func matchesGrowthBook(_ vector: GrowthBookVectors.ExperimentCase) {
        let variants = (0..<vector.variants).map { index in
            ExperimentDefinition.Variant(key: "v\(index)", weight: vector.weights?[index])
        }
        let experiment = ExperimentDefinition(variants: variants, coverage: vector.coverage, seed: vector.seed)
        #expect(experiment.problems.isEmpty)
        let assignment = experiment.assign(key: vector.key, context: EvaluationContext(targetingKey: vector.user))
        #expect(assignment?.variantIndex == vector.expected)
        if let bucket = vector.bucket { #expect(assignment?.bucket == bucket) }
    }

    /// DESIGN's example reads, assigns u-1 to control and u-2 to short (with its pinned flow), and explains why.
    @Test func designExample() throws {
        let experiment = try Self.experiment(Self.designExample)
        let control = experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "u-1"))
        #expect(control == ExperimentAssignment(
            experimentKey: "onboarding-length", variantKey: "control", variantIndex: 0, pinnedFlows: [:],
            hashAttribute: "userId", hashValue: "u-1", bucket: 0.3973))
        let short = experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "u-2"))
        #expect(short?.variantKey == "short")
        #expect(short?.pinnedFlows == ["onboarding": 2])
        #expect(short?.jsonValue.jsonText
            == #"{"variant":"short","variantIndex":1,"bucket":0.83,"hashAttribute":"userId","hashValue":"u-2","flows":{"onboarding":2}}"#)
        #expect(experiment.pinReferences == [ExperimentDefinition.PinReference(
            variantKey: "short", pin: .init(flow: "onboarding", version: 2),
            path: JSONPointer(["variants", "1", "flows", "onboarding"]))])
    }

    /// The same context always gets the same assignment; another seed reshuffles users.
    @Test func deterministic() throws {
        let experiment = try Self.experiment(Self.designExample)
        var reshuffled = experiment
        reshuffled.seed = "second-run"
        var moved = 0
        for index in 0..<1_000 {
            let context = EvaluationContext(targetingKey: "user-\(index)")
            let first = experiment.assign(key: "onboarding-length", context: context)
            #expect(first == experiment.assign(key: "onboarding-length", context: context))
            if first?.variantKey != reshuffled.assign(key: "onboarding-length", context: context)?.variantKey { moved += 1 }
        }
        #expect((350...650).contains(moved))  // independent seeds move about half
    }

    /// 10,000 synthetic users split 50/50 land within 49–51% in each variant.
    @Test func fiftyFiftySplit() throws {
        let experiment = try Self.experiment(Self.designExample)
        var counts = [0, 0]
        for index in 0..<10_000 {
            if let assignment = experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "user-\(index)")) {
                counts[assignment.variantIndex] += 1
            }
        }
        #expect(counts[0] + counts[1] == 10_000)
        #expect((4_900...5_100).contains(counts[0]), "control: \(counts[0])")
        #expect((4_900...5_100).contains(counts[1]), "short: \(counts[1])")
    }

    /// Coverage 0.2 leaves about 80% of 10,000 users out, and splits the rest evenly.
    @Test func coverageLeavesUsersOut() throws {
        let experiment = try Self.experiment(#"{"variants": [{"key": "control"}, {"key": "short"}], "coverage": 0.2}"#)
        var counts = [0, 0]
        var unassigned = 0
        for index in 0..<10_000 {
            if let assignment = experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "user-\(index)")) {
                counts[assignment.variantIndex] += 1
            } else {
                unassigned += 1
            }
        }
        #expect((7_800...8_200).contains(unassigned), "unassigned: \(unassigned)")
        #expect((900...1_100).contains(counts[0]))
        #expect((900...1_100).contains(counts[1]))
    }

    struct IneligibleCase: Sendable, CustomTestStringConvertible {
        let name: String
        let experiment: String
        let context: EvaluationContext
        var testDescription: String { name }
    }

    /// No assignment when disabled, when `when` fails, or when the hash attribute is missing, empty or unhashable.
    @Test(arguments: [
        IneligibleCase(name: "disabled", experiment: #"{"variants": [{"key": "a"}], "enabled": false}"#,
                       context: EvaluationContext(targetingKey: "u-1")),
        IneligibleCase(name: "when fails", experiment: #"{"variants": [{"key": "a"}], "when": {"attribute": "platform", "is": "ios"}}"#,
                       context: EvaluationContext(targetingKey: "u-1", attributes: ["platform": "web"])),
        IneligibleCase(name: "when on a missing attribute", experiment: #"{"variants": [{"key": "a"}], "when": {"attribute": "platform", "is": "ios"}}"#,
                       context: EvaluationContext(targetingKey: "u-1")),
        IneligibleCase(name: "no targeting key", experiment: #"{"variants": [{"key": "a"}]}"#,
                       context: EvaluationContext(attributes: ["country": "DE"])),
        IneligibleCase(name: "empty targeting key", experiment: #"{"variants": [{"key": "a"}]}"#,
                       context: EvaluationContext(targetingKey: "")),
        IneligibleCase(name: "missing hash attribute", experiment: #"{"variants": [{"key": "a"}], "hashAttribute": "deviceId"}"#,
                       context: EvaluationContext(targetingKey: "u-1")),
        IneligibleCase(name: "boolean hash attribute", experiment: #"{"variants": [{"key": "a"}], "hashAttribute": "deviceId"}"#,
                       context: EvaluationContext(targetingKey: "u-1", attributes: ["deviceId": true])),
        IneligibleCase(name: "zero coverage", experiment: #"{"variants": [{"key": "a"}], "coverage": 0}"#,
                       context: EvaluationContext(targetingKey: "u-1")),
    ])
    func notAssigned(_ vector: IneligibleCase) throws {
        #expect(try Self.experiment(vector.experiment).assign(key: "exp", context: vector.context) == nil)
    }

    /// A matching `when` and a named hash attribute assign as usual; a single variant takes every covered user.
    @Test func eligibleWithConditionAndAttribute() throws {
        let experiment = try Self.experiment("""
            {"variants": [{"key": "only"}], "hashAttribute": "deviceId", "seed": "onboarding-length",
             "when": {"attribute": "appVersion", "versionGte": "5.2"}}
            """)
        let context = EvaluationContext(targetingKey: "u-9", attributes: ["appVersion": "5.10.1", "deviceId": "u-1"])
        let assignment = experiment.assign(key: "exp", context: context)
        #expect(assignment?.variantKey == "only")
        #expect(assignment?.hashValue == "u-1")
        #expect(assignment?.bucket == 0.3973)
    }

    /// An experiment written back to JSON reads back equal, defaults left out.
    @Test func jsonRoundTrip() throws {
        let full = try Self.experiment("""
            {"variants": [{"key": "control", "weight": 0.25}, {"key": "short", "weight": 0.75, "flows": {"onboarding": 2, "home": 5}}],
             "coverage": 0.5, "seed": "s", "hashAttribute": "deviceId", "when": {"attribute": "country", "in": ["DE"]},
             "enabled": false, "description": "Shorter onboarding"}
            """)
        #expect(try ExperimentDefinition(json: full.jsonValue) == full)
        let design = try Self.experiment(Self.designExample)
        #expect(design.jsonValue.jsonText
            == #"{"variants":[{"key":"control","weight":0.5},{"key":"short","weight":0.5,"flows":{"onboarding":2}}]}"#)
    }

    struct ProblemCase: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String
        let problems: [(path: String, message: String)]
        var testDescription: String { name }
    }

    /// Each invalid experiment is refused with exactly these problems, paths and messages.
    @Test(arguments: [
        ProblemCase(name: "no variants member", json: #"{"coverage": 1}"#, problems: [
            ("/variants", "missing \"variants\": expected an array such as [{\"key\": \"control\", \"weight\": 0.5}, {\"key\": \"short\", \"weight\": 0.5}]"),
        ]),
        ProblemCase(name: "empty variants", json: #"{"variants": []}"#, problems: [
            ("/variants", "an experiment needs at least one variant, such as [{\"key\": \"control\"}, {\"key\": \"treatment\"}]"),
        ]),
        ProblemCase(name: "variants not an array", json: #"{"variants": {"control": 0.5}}"#, problems: [
            ("/variants", "\"variants\" must be an array of {\"key\": NAME, \"weight\": 0…1, \"flows\"?: {FLOW: VERSION}}, found object {\"control\":0.5}"),
        ]),
        ProblemCase(name: "bad keys", json: #"{"variants": [{"key": "a"}, {"key": "a"}, {"key": ""}, {"weight": 1}, {"key": 5}, "b"]}"#, problems: [
            ("/variants/3/key", "missing \"key\": expected the variant's name, such as \"control\""),
            ("/variants/4/key", "\"key\" must be a string, found 5"),
            ("/variants/5", "expected a variant {\"key\": NAME, \"weight\": 0…1} (a JSON object), found \"b\""),
            ("/variants/1/key", "\"a\" is already the key of variant 0; variant keys must be unique"),
            ("/variants/2/key", "\"key\" must not be empty"),
            ("/variants/0/weight", "missing \"weight\": give every variant a weight, or none for equal shares"),
            ("/variants/1/weight", "missing \"weight\": give every variant a weight, or none for equal shares"),
            ("/variants/2/weight", "missing \"weight\": give every variant a weight, or none for equal shares"),
            ("/variants/4/weight", "missing \"weight\": give every variant a weight, or none for equal shares"),
        ]),
        ProblemCase(name: "weights", json: #"{"variants": [{"key": "a", "weight": 0.6}, {"key": "b", "weight": 0.6}]}"#, problems: [
            ("/variants", "weights must add up to 1 (±0.01), they add up to 1.2"),
        ]),
        ProblemCase(name: "weight out of range", json: #"{"variants": [{"key": "a", "weight": 2}, {"key": "b", "weight": "x"}]}"#, problems: [
            ("/variants/1/weight", "\"weight\" must be a number from 0 to 1, found \"x\""),
            ("/variants/0/weight", "\"weight\" must be from 0 to 1, found 2"),
        ]),
        ProblemCase(name: "coverage", json: #"{"variants": [{"key": "a"}], "coverage": 1.5}"#, problems: [
            ("/coverage", "\"coverage\" must be from 0 to 1, found 1.5"),
        ]),
        ProblemCase(name: "coverage type", json: #"{"variants": [{"key": "a"}], "coverage": "all"}"#, problems: [
            ("/coverage", "\"coverage\" must be a number from 0 to 1, found \"all\""),
        ]),
        ProblemCase(name: "flows", json: #"{"variants": [{"key": "a", "flows": {"onboarding": 0, "home": 1.5, "": 2, "modal": "2"}}, {"key": "b", "flows": [1]}]}"#, problems: [
            ("/variants/0/flows/onboarding", "a flow version is a positive integer, found 0"),
            ("/variants/0/flows/home", "a flow version is a positive integer, found 1.5"),
            ("/variants/0/flows/", "a flow name must not be empty"),
            ("/variants/0/flows/modal", "a flow version is a positive integer, found \"2\""),
            ("/variants/1/flows", "\"flows\" must be an object from flow name to version, such as {\"onboarding\": 2}, found array [1]"),
        ]),
        ProblemCase(name: "unknown members", json: #"{"variants": [{"key": "a", "name": "A"}], "traffic": 1}"#, problems: [
            ("/traffic", "unknown member \"traffic\"; expected one of \"variants\", \"coverage\", \"seed\", \"hashAttribute\", \"when\", \"enabled\", \"status\", \"winner\", \"description\""),
            ("/variants/0/name", "unknown member \"name\"; expected one of \"key\", \"weight\", \"flows\""),
        ]),
        ProblemCase(name: "optional members", json: #"{"variants": [{"key": "a"}], "seed": "", "hashAttribute": "", "enabled": 1, "when": {"attribute": "x"}}"#, problems: [
            ("/seed", "\"seed\" must not be empty"),
            ("/hashAttribute", "\"hashAttribute\" must not be empty"),
            ("/when", "a condition on \"x\" needs an operator: one of \"is\", \"isNot\", \"in\", \"notIn\", \"exists\", \"gt\", \"gte\", \"lt\", \"lte\", \"versionGt\", \"versionGte\", \"versionLt\", \"versionLte\", \"versionIs\", \"versionIsNot\""),
            ("/enabled", "\"enabled\" must be true or false, found 1"),
        ]),
        ProblemCase(name: "unknown status", json: #"{"variants": [{"key": "a"}], "status": "paused"}"#, problems: [
            ("/status", "\"status\" must be one of \"draft\", \"running\", \"stopped\", \"concluded\", found \"paused\""),
        ]),
        ProblemCase(name: "status not a string", json: #"{"variants": [{"key": "a"}], "status": false}"#, problems: [
            ("/status", "\"status\" must be one of \"draft\", \"running\", \"stopped\", \"concluded\", found false"),
        ]),
        ProblemCase(name: "concluded without a winner", json: #"{"variants": [{"key": "a"}, {"key": "b"}], "status": "concluded"}"#, problems: [
            ("/winner", "missing \"winner\": a concluded experiment names the variant whose flows were made live, one of \"a\", \"b\""),
        ]),
        ProblemCase(name: "winner not a variant", json: #"{"variants": [{"key": "a"}, {"key": "b"}], "status": "concluded", "winner": "c"}"#, problems: [
            ("/winner", "\"c\" is not a variant; expected one of \"a\", \"b\""),
        ]),
        ProblemCase(name: "winner of a running experiment", json: #"{"variants": [{"key": "a"}], "winner": "a"}"#, problems: [
            ("/winner", "\"winner\" is only for a concluded experiment (\"status\": \"concluded\"); this one is \"running\""),
        ]),
        ProblemCase(name: "winner of a stopped experiment", json: #"{"variants": [{"key": "a"}], "status": "stopped", "winner": "a"}"#, problems: [
            ("/winner", "\"winner\" is only for a concluded experiment (\"status\": \"concluded\"); this one is \"stopped\""),
        ]),
        ProblemCase(name: "winner not a string", json: #"{"variants": [{"key": "a"}], "status": "concluded", "winner": 1}"#, problems: [
            ("/winner", "\"winner\" must be a string, found 1"),
        ]),
        ProblemCase(name: "not an object", json: #""onboarding""#, problems: [
            ("", "expected an experiment (a JSON object), found \"onboarding\""),
        ]),
    ])
    func refusesWithPaths(_ vector: ProblemCase) throws {
        let json = try JSONParser.parse(vector.json)
        do {
            _ = try ExperimentDefinition(json: json)
            Issue.record("accepted an invalid experiment")
        } catch {
            #expect(error.problems.map(\.path.description) == vector.problems.map(\.path))
            #expect(error.problems.map(\.message) == vector.problems.map(\.message))
        }
    }

    /// `status` absent is running (stored experiments keep assigning); each status and a winner read and write back.
    @Test func statusAndWinnerRoundTrip() throws {
        let legacy = try Self.experiment(Self.designExample)
        #expect(legacy.status == .running)
        #expect(legacy.winner == nil)
        #expect(!legacy.jsonValue.jsonText.contains("status"))
        for status in ExperimentDefinition.Status.allCases {
            let winner = status == .concluded ? #", "winner": "short""# : ""
            let experiment = try Self.experiment(#"{"variants": [{"key": "control"}, {"key": "short", "flows": {"onboarding": 2}}], "status": "\#(status.rawValue)"\#(winner)}"#)
            #expect(experiment.status == status)
            #expect(try ExperimentDefinition(json: experiment.jsonValue) == experiment)
            #expect(experiment.jsonValue.jsonText.contains(#""status":"\#(status.rawValue)""#) == (status != .running))
        }
        let concluded = try Self.experiment(#"{"variants": [{"key": "control"}, {"key": "short", "flows": {"onboarding": 2}}], "status": "concluded", "winner": "short"}"#)
        #expect(concluded.winner == "short")
        #expect(concluded.winningVariant?.pinnedFlows == ["onboarding": 2])
        #expect(concluded.jsonValue.jsonText.hasSuffix(#""status":"concluded","winner":"short"}"#))
    }

    /// Only a running experiment assigns, evaluates to a variant and is served to GrowthBook SDKs with rules.
    @Test(arguments: ExperimentDefinition.Status.allCases)
    func onlyRunningAssigns(_ status: ExperimentDefinition.Status) throws {
        var experiment = try Self.experiment(Self.designExample)
        experiment.status = status
        if status == .concluded { experiment.winner = "short" }
        #expect(experiment.problems.isEmpty)
        let context = EvaluationContext(targetingKey: "u-2")
        let assignment = experiment.assign(key: "onboarding-length", context: context)
        let details = experiment.evaluate(key: "onboarding-length", context: context)
        let feature = try GrowthBookPayload.feature(experiment: experiment, key: "onboarding-length")
        if status == .running {
            #expect(assignment?.variantKey == "short")
            #expect(details.reason == .split)
            #expect(feature["rules"]?.arrayValue?.count == 1)
        } else {
            #expect(assignment == nil)
            #expect(details == EvaluationDetails(value: .null, variant: nil, reason: .disabled))
            #expect(feature.jsonText == #"{"defaultValue":null,"rules":[]}"#)
        }
    }

    /// The lifecycle: draft → running ⇄ stopped → concluded, concluded final; staying put is allowed except once concluded.
    @Test func transitions() {
        typealias Status = ExperimentDefinition.Status
        let allowed: Set<String> = [
            "draft>draft", "draft>running", "draft>stopped", "running>running", "running>stopped", "running>concluded",
            "stopped>stopped", "stopped>running", "stopped>concluded",
        ]
        for from in Status.allCases {
            for to in Status.allCases {
                #expect(from.canMove(to: to) == allowed.contains("\(from.rawValue)>\(to.rawValue)"), "\(from) → \(to)")
            }
        }
    }

    /// A code-built experiment reports a winner it should not have, or one that is not a variant.
    @Test func problemsOfACodeBuiltWinner() {
        let variants: [ExperimentDefinition.Variant] = [.init(key: "a"), .init(key: "b")]
        #expect(ExperimentDefinition(variants: variants, status: .concluded).problems.map(\.path.description) == ["/winner"])
        #expect(ExperimentDefinition(variants: variants, status: .concluded, winner: "z").problems.map(\.path.description) == ["/winner"])
        #expect(ExperimentDefinition(variants: variants, status: .stopped, winner: "a").problems.map(\.path.description) == ["/winner"])
        #expect(ExperimentDefinition(variants: variants, status: .concluded, winner: "b").problems.isEmpty)
    }

    /// One variant is a valid experiment (a staged rollout of a pinned flow).
    @Test func singleVariantIsAllowed() throws {
        let experiment = try Self.experiment(#"{"variants": [{"key": "new-onboarding", "flows": {"onboarding": 3}}], "coverage": 0.1}"#)
        #expect(experiment.variants.count == 1)
        #expect(experiment.weights == nil)
    }

    /// An experiment built in code reports the same problems as its JSON would.
    @Test func problemsOfACodeBuiltExperiment() {
        let experiment = ExperimentDefinition(
            variants: [.init(key: "a", weight: 0.7), .init(key: "a", weight: 0.7, flows: [.init(flow: "home", version: -1)])],
            coverage: -1, seed: "")
        #expect(experiment.problems.map(\.path.description)
            == ["/variants/1/key", "/variants", "/variants/1/flows/home", "/coverage", "/seed"])
    }
}

// MistakeTests: the mistakes that used to pass validation — a `from` no screen matches, a flag that does not exist, params on a bubble rule.

import JSON
import Testing

import FlowEngine

struct MistakeTests {
    /// The sample app with `replacements` in place of the sample flows of the same name.
    private func problems(_ replacements: [String: String], flags: [String: [JSONValue]]? = nil) -> [DefinitionProblem] {
        var documents: [(name: String, bytes: [UInt8])] = Fixtures.sampleNames.filter { replacements[$0] == nil }.map { ($0, Fixtures.sampleBytes($0)) }
        for (name, text) in replacements.sorted(by: { $0.key < $1.key }) { documents.append((name, Array(text.utf8))) }
        let (catalog, parseProblems) = FlowCatalog.parse(documents)
        guard parseProblems.isEmpty else { return parseProblems }
        return catalog.validate(flags: flags)
    }

    private static let sampleFlags: [String: [JSONValue]] = ["eu-face-scan": [true, false], "paywall": [true, false]]

    /// A rule `from` a screen no flow can show (`checkout.reveiw`) is refused at its pointer,
    /// with the nearest screen the flow can show.
    @Test func fromAScreenNoFlowShows() {
        let checkout = #"""
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"from": "onboarding.frist", "do": [{"push": "onboarding.second"}]}],
                    "onboarding.completed": [{"from": ["onboarding.second", "checkout.reveiw"], "do": [{"bubble": {}}]}]}}
            """#
        let found = problems(["onboarding": checkout])
        #expect(found.map(\.path) == ["/onboarding/on/onboarding.showSecond/0/from", "/onboarding/on/onboarding.completed/0/from/1"], "\(found)")
        #expect(found.first?.message.contains(#"did you mean "onboarding.first"?"#) == true, "\(found)")
        #expect(found.allSatisfy { $0.severity == .error })
    }

    /// A parent may name its children's screens in `from` (the source screen stays the one the
    /// action came from as it bubbles), and a child's screen it never reaches is refused.
    @Test func fromAChildScreen() {
        let app = #"""
            {"name": "app", "kind": "stacked", "initial": [{"flow": "home"}],
             "on": {"home.presentModal": [{"from": ["home.first", "modal"], "do": [{"present": "modal"}]}],
                    "home.checkout": [{"do": [{"present": "checkout"}]}], "home.upgrade": [{"do": [{"present": "paywall"}]}],
                    "x": [{"from": "onboarding.first", "do": [{"pop": {}}]}]}}
            """#
        let found = problems(["app": app])
        #expect(found.map(\.path) == ["/app/on/x/0/from"])
        #expect(found.first?.message.contains("it is shown by onboarding, which app never reaches") == true, "\(found)")
    }

    /// `via` a defined flow this flow never starts, pushes or presents can never match.
    @Test func viaAFlowThatIsNotAChild() {
        let modal = #"{"name": "modal", "kind": "stacked", "initial": ["modal"], "on": {"x": [{"via": "home", "do": [{"pop": {}}]}]}}"#
        let found = problems(["modal": modal])
        #expect(found.map(\.path) == ["/modal/on/x/0/via"], "\(found)")
        #expect(found.first?.message.contains("never starts, pushes, sets or presents") == true)
    }

    /// `popTo` a feature the flow never puts on its own stack is always refused.
    @Test func popToAScreenNotOnTheStack() {
        let onboarding = #"""
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"do": [{"push": "onboarding.second"}]}],
                    "onboarding.returnToFirst": [{"do": [{"popTo": "onboarding.frist"}]}],
                    "onboarding.completed": [{"do": [{"popTo": {"feature": "home.first"}}]}]}}
            """#
        let found = problems(["onboarding": onboarding])
        #expect(found.map(\.path) == [
            "/onboarding/on/onboarding.returnToFirst/0/do/0/popTo",
            "/onboarding/on/onboarding.completed/0/do/0/popTo",
        ], "\(found)")
    }

    /// Params and `interactive` on a rule that only bubbles are never enforced; each is refused
    /// with a message that says the handling rule enforces them.
    @Test func paramsOnABubbleRule() {
        let found = Fixtures.problems(#"""
            {"name": "home", "kind": "tabbed", "initial": ["home.first"],
             "on": {"home.presentModal": [{"params": {"content": "string"}, "interactive": true, "do": [{"bubble": {}}]}]}}
            """#)
        #expect(found.map(\.path) == ["/on/home.presentModal/0/params", "/on/home.presentModal/0/interactive"], "\(found)")
        #expect(found.first?.message.contains("checked only by the rule that handles the action") == true)
    }

    /// A condition on a flag that is not defined, or on a value the flag never has, is a warning
    /// at its pointer (also inside all/any/not, initial entries and links); with no flags given,
    /// flags are not checked.
    @Test func flagConditionsAreWarnings() {
        let onboarding = #"""
            {"name": "onboarding", "kind": "stacked",
             "initial": ["onboarding.first", {"screen": "onboarding.tip", "when": {"not": {"flag": "tips", "is": true}}}],
             "on": {"onboarding.showSecond": [
                      {"when": {"flag": "eu-face-scn", "is": true}, "do": [{"push": "onboarding.faceScan"}]},
                      {"when": {"all": [{"user": "onboarded", "isNot": true}, {"flag": "eu-face-scan", "in": [true, "yes"]}]}, "do": [{"push": "onboarding.second"}]}],
                    "onboarding.completed": [{"do": [{"bubble": {}}]}]}}
            """#
        let found = problems(["onboarding": onboarding], flags: Self.sampleFlags)
        #expect(found.errors.isEmpty, "\(found)")
        #expect(found.warnings.map(\.path) == [
            "/onboarding/initial/1/when/not/flag",
            "/onboarding/on/onboarding.showSecond/0/when/flag",
            "/onboarding/on/onboarding.showSecond/1/when/all/1/in",
        ], "\(found)")
        #expect(found.warnings[1].message.contains(#"there is no flag "eu-face-scn""#))
        #expect(found.warnings[2].message.contains(#"never has the value "yes""#))
        #expect(problems(["onboarding": onboarding]).isEmpty)
        // The flags the flow reads, each once, at its first condition (what `flows test` warns of).
        let (catalog, _) = FlowCatalog.parse([("onboarding", Array(onboarding.utf8))])
        #expect(catalog.flagsRead(by: "onboarding").map(\.key) == ["tips", "eu-face-scn", "eu-face-scan"])
        #expect(catalog.flagsRead(by: "onboarding").first?.path == "/initial/1/when/not/flag")
        #expect(catalog.flagsRead(by: "home").isEmpty)
    }

    /// A bubble no flow above names can only fail (refused at the root); so can a bubble in the
    /// root flow. A generic `back` may bubble (the engine takes it).
    @Test func bubbleThatNoParentHandles() {
        let onboarding = #"""
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.finished": [{"from": "onboarding.first", "do": [{"bubble": {}}]}],
                    "onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}],
                    "back": [{"do": [{"bubble": {}}]}]}}
            """#
        let found = problems(["onboarding": onboarding])
        #expect(found.map(\.path) == ["/onboarding/on/onboarding.finished/0/do/0/bubble"], "\(found)")
        #expect(found.first?.message.contains("no flow above onboarding (app) names onboarding.finished") == true)
        let app = #"""
            {"name": "app", "kind": "stacked", "initial": [{"flow": "home"}], "on": {"home.presentModal": [{"do": [{"bubble": {}}]}],
             "home.checkout": [{"do": [{"present": "checkout"}]}], "home.upgrade": [{"do": [{"present": "paywall"}]}]}}
            """#
        #expect(problems(["app": app]).map(\.path) == ["/app/on/home.presentModal/0/do/0/bubble"])
    }

    /// A body made to be slow to check (200 screens of 64 characters, 64 rules each from 100
    /// unknown ones) is checked in a fraction of a second: suggestions are computed for the first
    /// few problems only.
    @Test func manyUnknownScreensStayCheap() throws {
        let screens = (0..<200).map { "s\(String(repeating: "x", count: 58))\($0 + 100)" }
        let initial = screens.map { JSONValue.string($0) }
        var rules: [JSONValue] = []
        for rule in 0..<64 {
            let from = (0..<100).map { JSONValue.string("u\(String(repeating: "y", count: 56))\(rule)-\($0 + 100)") }
            rules.append(["from": .array(from), "when": ["user": .string("k\(rule)"), "is": true], "do": [["pop": [:]]]])
        }
        let document: JSONValue = ["name": "modal", "kind": "stacked", "initial": .array(initial), "on": ["x": .array(rules)]]
        var catalog = Fixtures.sampleCatalog
        catalog.insert(try FlowDefinition(json: document))
        let start = ContinuousClock.now
        let found = catalog.problems(for: "modal")
        let elapsed = ContinuousClock.now - start
        #expect(found.count == 6400)
        #expect(elapsed < .seconds(5), "\(elapsed)")  // 0.1 s alone in a debug build; 9 s when suggestions were unbounded
    }

    /// The shipped sample app has no problem and no warning against the shipped flags.
    @Test func sampleAppIsClean() {
        #expect(Fixtures.sampleCatalog.validate(flags: Self.sampleFlags).isEmpty)
    }

    /// A Swift delegate may show any screen, so `from` is not checked while one is registered.
    @Test func delegatesSkipTheScreenCheck() throws {
        var catalog = Fixtures.sampleCatalog
        catalog.insert(try FlowDefinition.parse(Array(#"{"name": "modal", "kind": "stacked", "initial": ["modal"], "on": {"x": [{"from": "elsewhere", "do": [{"pop": {}}]}]}}"#.utf8)))
        #expect(catalog.problems(for: "modal").map(\.path) == ["/on/x/0/from"])
        catalog.register(QuietDelegate(), for: "app")
        #expect(catalog.problems(for: "modal").isEmpty)
    }
}

private struct QuietDelegate: FlowActionDelegate {
    func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision { .useDefinition }
}

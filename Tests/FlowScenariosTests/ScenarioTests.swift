// ScenarioTests: flow tests read from JSON with every problem located, and run on the sample app.

import FlowEngine
import Foundation
import JSON
import Testing

import FlowScenarios

/// The sample app from `flows/`, wherever the package is checked out.
enum Sample {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let catalog: FlowCatalog = {
        let names = ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"]
        let documents = names.map { name in
            (name, [UInt8](FileManager.default.contents(atPath: repository.appendingPathComponent("flows/\(name).json").path) ?? Data()))
        }
        let (catalog, problems) = FlowCatalog.parse(documents)
        if !problems.isEmpty { Issue.record("sample flows have problems: \(problems)") }
        return catalog
    }()

    static func suite(_ text: String) throws -> FlowScenarioSuite {
        try FlowScenarioSuite.parse(Array(text.utf8))
    }

    static func run(_ text: String, catalog: FlowCatalog = Sample.catalog) throws -> [ScenarioResult] {
        try suite(text).run(catalog: catalog)
    }
}

struct ScenarioReadingTests {
    /// A file with every part reads into scenarios: the context, a link start, `from: "top"`,
    /// and each kind of expectation in the order written.
    @Test func readsEveryPart() throws {
        let suite = try Sample.suite("""
            {"scenarios": [{
              "name": "everything",
              "context": {"userId": "ada", "attributes": {"country": "DE"}, "traits": {"horizontalSizeClass": "compact"},
                          "user": {"onboarded": true}, "flags": {"eu-face-scan": true}},
              "start": {"link": "/modal/Hi", "expect": {"top": "modal", "pendingLink": null}},
              "steps": [
                {"action": {"type": "modal.dismiss", "from": "top"}, "expect": {"transition": "dismiss", "handledBy": "modal", "screens": ["home.first"]}},
                {"action": {"type": "back", "from": "e1"}, "expect": {"error": "stale-source", "top": "home.first"}},
                {"action": {"type": "home.selectTab", "params": {"index": 1}}}
              ]
            }]}
            """)
        let scenario = try #require(suite.scenarios.first)
        #expect(scenario.name == "everything")
        #expect(scenario.context == FlowScenario.Context(
            userId: "ada", attributes: ["country": "DE"], traits: ["horizontalSizeClass": "compact"],
            user: ["onboarded": true], flags: ["eu-face-scan": true]))
        #expect(scenario.start.link == "/modal/Hi")
        #expect(scenario.start.expect?[.pendingLink] == .null)
        #expect(scenario.steps.map(\.fromTop) == [true, false, false])
        #expect(scenario.steps[0].action.from == nil)
        #expect(scenario.steps[1].action.from == "e1")
        #expect(scenario.steps[0].expect?.checks.map(\.key) == [.transition, .handledBy, .screens])
        #expect(scenario.steps[2].action.params == ["index": 1])
        #expect(scenario.steps[2].expect == nil)
    }

    /// Each malformed part is reported at its JSON Pointer, all at once.
    @Test(arguments: [
        ("{", [""]),
        ("[]", [""]),
        (#"{"tests": []}"#, ["/tests", "/scenarios"]),
        (#"{"scenarios": []}"#, ["/scenarios"]),
        (#"{"scenarios": [5]}"#, ["/scenarios/0"]),
        (#"{"scenarios": [{"steps": []}]}"#, ["/scenarios/0/name"]),
        (#"{"scenarios": [{"name": "x"}]}"#, ["/scenarios/0/steps"]),
        (#"{"scenarios": [{"name": "x", "steps": {}}]}"#, ["/scenarios/0/steps"]),
        (#"{"scenarios": [{"name": "x", "steps": [], "extra": 1}]}"#, ["/scenarios/0/extra"]),
        (#"{"scenarios": [{"name": "x", "context": {"userId": 5, "attributes": [], "traits": {"a": 1}, "flags": 3, "age": 1}, "steps": []}]}"#,
         ["/scenarios/0/context/age", "/scenarios/0/context/userId", "/scenarios/0/context/attributes",
          "/scenarios/0/context/flags", "/scenarios/0/context/traits/a"]),
        (#"{"scenarios": [{"name": "x", "start": {"link": 5, "at": 1}, "steps": []}]}"#, ["/scenarios/0/start/at", "/scenarios/0/start/link"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"expect": {}}]}]}"#, ["/scenarios/0/steps/0/action"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back", "parmas": {}}}]}]}"#, ["/scenarios/0/steps/0/action/parmas"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": 1}}]}]}"#, ["/scenarios/0/steps/0/action/type"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"top": 1, "screens": "a", "transition": "fly", "color": 1}}]}]}"#,
         ["/scenarios/0/steps/0/expect/color", "/scenarios/0/steps/0/expect/top", "/scenarios/0/steps/0/expect/screens",
          "/scenarios/0/steps/0/expect/transition"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"error": "refused", "transition": "pop"}}]}]}"#,
         ["/scenarios/0/steps/0/expect/transition"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"user": [], "pendingLink": 1}}]}]}"#,
         ["/scenarios/0/steps/0/expect/user", "/scenarios/0/steps/0/expect/pendingLink"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"params": [], "result": 1, "handoff": "", "pending": "home.checkout"}}]}]}"#,
         ["/scenarios/0/steps/0/expect/params", "/scenarios/0/steps/0/expect/result", "/scenarios/0/steps/0/expect/handoff",
          "/scenarios/0/steps/0/expect/pending"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"params": {"checkout.review": "Lyon", "": {}}, "pending": [1]}}]}]}"#,
         ["/scenarios/0/steps/0/expect/params/checkout.review", "/scenarios/0/steps/0/expect/params/", "/scenarios/0/steps/0/expect/pending"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"params": {}}}]}]}"#,
         ["/scenarios/0/steps/0/expect/params"]),
        (#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}, "expect": {"error": "refused", "result": null}}]}]}"#,
         ["/scenarios/0/steps/0/expect/result"]),
    ] as [(String, [String])])
    func reportsProblemsAtPointers(text: String, pointers: [String]) {
        do throws(ScenarioProblems) {
            _ = try FlowScenarioSuite.parse(Array(text.utf8))
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.problems.map(\.path) == pointers, "\(error)")
        }
    }

    /// The expectations of results, hand-offs and guards read in the order written, nulls kept.
    @Test func readsResultHandoffAndPendingExpectations() throws {
        let suite = try Sample.suite("""
            {"scenarios": [{"name": "x", "steps": [
              {"action": {"type": "back"}, "expect": {"params": {"checkout.review": {"address": {"city": "Lyon"}}}, "result": "checkout.review",
                                                       "handoff": null, "pending": []}},
              {"action": {"type": "back"}, "expect": {"error": "refused", "handoff": "purchase", "pending": ["home.checkout"], "params": {"home.first": {}}}}
            ]}]}
            """)
        let steps = try #require(suite.scenarios.first?.steps)
        #expect(steps[0].expect?.checks.map(\.key) == [.params, .result, .handoff, .pending])
        #expect(steps[0].expect?[.params] == ["checkout.review": ["address": ["city": "Lyon"]]])
        #expect(steps[0].expect?[.handoff] == .null)
        #expect(steps[1].expect?[.pending] == ["home.checkout"])
    }

    /// A file cannot ask for an unbounded run: scenarios and steps are counted.
    @Test func boundsTheRun() {
        let step = #"{"action": {"type": "back"}}"#
        let steps = Array(repeating: step, count: FlowScenarioSuite.maxSteps + 1).joined(separator: ",")
        let text = #"{"scenarios": [{"name": "long", "steps": [\#(steps)]}]}"#
        #expect(throws: ScenarioProblems.self) { try FlowScenarioSuite.parse(Array(text.utf8)) }
    }
}

struct ScenarioRunTests {
    /// Onboarding walked with every kind of check passes; `user` sees what `setUser` recorded.
    @Test func passingWalk() throws {
        let results = try Sample.run("""
            {"scenarios": [{"name": "onboarding", "steps": [
              {"action": {"type": "onboarding.showSecond", "from": "top"}, "expect": {"top": "onboarding.second", "transition": "push", "handledBy": "onboarding"}},
              {"action": {"type": "onboarding.returnToFirst", "interactive": true}, "expect": {"interaction": "onboarding.returnToFirst", "transition": null}},
              {"action": {"type": "interaction.cancel"}, "expect": {"interaction": null, "top": "onboarding.second"}},
              {"action": {"type": "onboarding.completed", "from": "top"},
               "expect": {"screens": ["home.first"], "transition": "replaceRoot", "handledBy": "app", "user": {"onboarded": true}}},
              {"action": {"type": "home.presentModal", "params": {"content": "Hi"}}, "expect": {"top": "modal", "topParams": {"content": "Hi"}}}
            ]}]}
            """)
        #expect(results == [ScenarioResult(name: "onboarding", index: 0, stepsRun: 5, failures: [])])
    }

    /// A difference names the scenario's step, the key, expected and actual, and stops the run.
    @Test func differenceStopsTheRun() throws {
        let results = try Sample.run("""
            {"scenarios": [
              {"name": "fine", "steps": [{"action": {"type": "onboarding.showSecond"}}]},
              {"name": "wrong", "steps": [
                {"action": {"type": "onboarding.showSecond"}, "expect": {"top": "onboarding.second"}},
                {"action": {"type": "onboarding.completed"}, "expect": {"top": "home.second", "transition": "push", "handledBy": "app"}},
                {"action": {"type": "home.selectTab", "params": {"index": 1}}}
              ]}
            ]}
            """)
        #expect(results.map(\.passed) == [true, false])
        let wrong = results[1]
        #expect(wrong.index == 1)
        #expect(wrong.stepsRun == 2)
        #expect(wrong.failures == [
            ScenarioFailure(step: 1, action: "onboarding.completed", key: "top", pointer: "/scenarios/1/steps/1/expect/top",
                            expected: "home.second", actual: "home.first", message: "top is home.first, expected home.second"),
            ScenarioFailure(step: 1, action: "onboarding.completed", key: "transition", pointer: "/scenarios/1/steps/1/expect/transition",
                            expected: "push", actual: "replaceRoot", message: "transition is replaceRoot, expected push"),
        ])
        #expect(wrong.failures[0].description == "step 1 (onboarding.completed): top is home.first, expected home.second")
    }

    /// Errors: an expected code passes and leaves the state as it was; an unexpected one, a
    /// different one, or none where one was expected are differences at `error`.
    @Test func errors() throws {
        let results = try Sample.run("""
            {"scenarios": [
              {"name": "expected", "steps": [
                {"action": {"type": "onboarding.showSecond", "from": "top"}},
                {"action": {"type": "onboarding.showSecond", "from": "e3"}, "expect": {"error": "stale-source", "top": "onboarding.second"}},
                {"action": {"type": "nobody.knows"}, "expect": {"error": "unhandled"}}
              ]},
              {"name": "unexpected", "steps": [{"action": {"type": "onboarding.completed"}}]},
              {"name": "another", "steps": [{"action": {"type": "onboarding.completed"}, "expect": {"error": "unhandled"}}]},
              {"name": "none", "steps": [{"action": {"type": "onboarding.showSecond"}, "expect": {"error": "refused"}}]}
            ]}
            """)
        #expect(results.map(\.passed) == [true, false, false, false])
        #expect(results[1].failures.map(\.pointer) == ["/scenarios/1/steps/0/action"])
        #expect(results[1].failures.first?.actual == "refused")
        #expect(results[1].failures.first?.message.hasPrefix("refused with refused: onboarding refused onboarding.completed") == true)
        #expect(results[2].failures.map(\.pointer) == ["/scenarios/2/steps/0/expect/error"])
        #expect(results[2].failures.first?.expected == "unhandled")
        #expect(results[2].failures.first?.actual == "refused")
        #expect(results[3].failures.first?.message == "applied, expected to be refused with refused")
        #expect(results[3].failures.first?.actual == .null)
    }

    /// A link start: a new user keeps it pending through onboarding and lands on it; an
    /// onboarded one opens it at once; an unknown link is an error the start can expect.
    @Test func linkStarts() throws {
        let results = try Sample.run("""
            {"scenarios": [
              {"name": "deferred", "start": {"link": "/modal/Later", "expect": {"top": "onboarding.first", "pendingLink": "/modal/Later"}},
               "steps": [
                 {"action": {"type": "onboarding.showSecond"}},
                 {"action": {"type": "onboarding.completed"}, "expect": {"screens": ["home.first", "modal"], "topParams": {"content": "Later"}, "pendingLink": null}}
               ]},
              {"name": "at once", "context": {"user": {"onboarded": true}}, "start": {"link": "myapp://open/home/1", "expect": {"top": "home.second"}}, "steps": []},
              {"name": "unknown", "start": {"link": "/nowhere", "expect": {"error": "unknown-link"}}},
              {"name": "unknown with steps", "start": {"link": "/nowhere", "expect": {"error": "unknown-link"}}, "steps": [{"action": {"type": "back"}}]}
            ]}
            """)
        #expect(results.map(\.passed) == [true, true, true, false])
        #expect(results[3].failures.first?.pointer == "/scenarios/3/steps")
    }

    /// Flags: the runner's flag values are the base, the scenario's `flags` win.
    @Test func flagsFromTheRunnerAndTheScenario() throws {
        let suite = try Sample.suite("""
            {"scenarios": [
              {"name": "EU by definition", "context": {"attributes": {"country": "DE"}}, "steps": [
                {"action": {"type": "onboarding.showSecond"}},
                {"action": {"type": "onboarding.completed"}, "expect": {"top": "onboarding.faceScan"}}]},
              {"name": "EU, flag pinned off", "context": {"attributes": {"country": "DE"}, "flags": {"eu-face-scan": false}}, "steps": [
                {"action": {"type": "onboarding.showSecond"}},
                {"action": {"type": "onboarding.completed"}, "expect": {"top": "home.first"}}]}
            ]}
            """)
        let euFlag: FlowScenario.FlagValues = { _, attributes in ["eu-face-scan": .bool(attributes["country"] == "DE")] }
        #expect(suite.run(catalog: Sample.catalog, flags: euFlag).map(\.passed) == [true, true])
        #expect(suite.run(catalog: Sample.catalog).map(\.passed) == [false, true])
    }

    /// An address picker returns its value: `result` names the receiving review and `params`
    /// reads the review's address below the top, by either path (the screen below, or `to`).
    @Test func resultsReachTheReview() throws {
        let results = try Sample.run("""
            {"scenarios": [
              {"name": "chosen", "context": {"user": {"onboarded": true, "loggedIn": true}}, "steps": [
                {"action": {"type": "home.checkout"}, "expect": {"top": "checkout.cart", "pending": [], "result": null}},
                {"action": {"type": "checkout.review"}},
                {"action": {"type": "checkout.chooseAddress"}, "expect": {"top": "address.list", "params": {"checkout.review": {"address": null}}}},
                {"action": {"type": "address.chosen", "params": {"address": {"city": "Lyon", "street": "1 rue Neuve"}}},
                 "expect": {"top": "checkout.review", "result": "checkout.review", "transition": "dismiss",
                            "params": {"checkout.review": {"address": {"street": "1 rue Neuve", "city": "Lyon"}}}}},
                {"action": {"type": "checkout.chooseAddress"}, "expect": {"result": null, "params": {"checkout.review": {"address": {"city": "Lyon", "street": "1 rue Neuve"}}}}},
                {"action": {"type": "address.add"}},
                {"action": {"type": "address.saved", "params": {"address": {"city": "Oslo"}}},
                 "expect": {"top": "checkout.review", "result": "checkout.review", "params": {"checkout.review": {"address": {"city": "Oslo"}}}}},
                {"action": {"type": "address.chosen", "params": {"address": {}}}, "expect": {"error": "unhandled", "params": {"checkout.review": {"address": {"city": "Oslo"}}}}}
              ]}
            ]}
            """)
        #expect(results.map(\.failures) == [[]])
    }

    /// A hand-off on top is named by its kind; each outcome leaves it, failure with a result.
    @Test func handoffOutcomes() throws {
        let results = try Sample.run("""
            {"scenarios": [{"name": "paywall", "context": {"user": {"onboarded": true}, "flags": {"paywall": true}}, "steps": [
              {"action": {"type": "home.upgrade"}, "expect": {"top": "paywall.offer", "handoff": null}},
              {"action": {"type": "paywall.buy", "params": {"productId": "pro.yearly"}},
               "expect": {"top": "purchase", "handoff": "purchase", "topParams": {"productId": "pro.yearly"}}},
              {"action": {"type": "purchase.failed", "params": {"reason": "declined"}},
               "expect": {"top": "paywall.offer", "handoff": null, "result": "paywall.offer", "params": {"paywall.offer": {"error": "declined"}}}},
              {"action": {"type": "paywall.buy", "params": {"productId": "pro.yearly"}}},
              {"action": {"type": "purchase.cancelled"}, "expect": {"handoff": null, "result": null, "transition": "pop"}},
              {"action": {"type": "paywall.buy", "params": {"productId": "pro.yearly"}}},
              {"action": {"type": "purchase.completed", "params": {"transactionId": "t1"}},
               "expect": {"screens": ["home.first"], "user": {"premium": true}, "handoff": null}}
            ]}]}
            """)
        #expect(results.map(\.failures) == [[]])
    }

    /// A guarded checkout waits in `pending` while login shows, and resumes once it is submitted.
    @Test func pendingGuardedAction() throws {
        let results = try Sample.run("""
            {"scenarios": [{"name": "guard", "context": {"user": {"onboarded": true}}, "steps": [
              {"action": {"type": "home.checkout", "from": "top"}, "expect": {"top": "login.form", "pending": ["home.checkout"], "handledBy": "app"}},
              {"action": {"type": "login.submit"}, "expect": {"screens": ["home.first", "checkout.cart"], "pending": [], "user": {"loggedIn": true}}}
            ]}]}
            """)
        #expect(results.map(\.failures) == [[]])
    }

    /// Each new expectation that does not hold is a difference with a message that shows both
    /// values: the review's missing address, the receiver, the hand-off and the pending list.
    @Test func failingResultHandoffAndPendingExpectations() throws {
        let results = try Sample.run("""
            {"scenarios": [
              {"name": "params", "context": {"user": {"onboarded": true, "loggedIn": true}}, "steps": [
                {"action": {"type": "home.checkout"}},
                {"action": {"type": "checkout.review"}},
                {"action": {"type": "checkout.chooseAddress"}},
                {"action": {"type": "address.chosen", "params": {"address": {"city": "Lyon"}}},
                 "expect": {"params": {"checkout.review": {"address": {"city": "Oslo"}}, "checkout.cart": {"address": null}, "paywall.offer": {}},
                            "result": "checkout.cart"}}
              ]},
              {"name": "handoff and pending", "context": {"user": {"onboarded": true}}, "steps": [
                {"action": {"type": "home.checkout"}, "expect": {"handoff": "purchase", "pending": []}}
              ]}
            ]}
            """)
        #expect(results.map(\.passed) == [false, false])
        #expect(results[0].failures.map(\.message) == [
            #"params of checkout.review are {"address":{"city":"Lyon"}}, expected {"address":{"city":"Oslo"}}; no screen shows paywall.offer"#,
            "result is checkout.review, expected checkout.cart",
        ])
        #expect(results[0].failures.map(\.pointer) == ["/scenarios/0/steps/3/expect/params", "/scenarios/0/steps/3/expect/result"])
        #expect(results[1].failures.map(\.message) == ["handoff is none, expected purchase", "pending is [home.checkout], expected []"])
    }

    /// A broken catalog fails at the start, as a session would.
    @Test func brokenCatalogFailsAtStart() throws {
        var catalog = Sample.catalog
        catalog.removeDefinition(named: "onboarding")
        let results = try Sample.run(#"{"scenarios": [{"name": "x", "steps": [{"action": {"type": "back"}}]}]}"#, catalog: catalog)
        #expect(results.first?.failures.map(\.key) == ["error"])
        #expect(results.first?.failures.first?.actual == "broken-definition")
        #expect(results.first?.failures.first?.pointer == "/scenarios/0/start")
    }

    /// Results are written as the API answers them.
    @Test func resultJSON() {
        let result = ScenarioResult(name: "n", index: 0, stepsRun: 1, failures: [
            ScenarioFailure(step: 0, action: "back", key: "top", pointer: "/scenarios/0/steps/0/expect/top",
                            expected: "a", actual: .null, message: "top is none, expected a"),
        ])
        var writer = JSONWriter()
        result.write(into: &writer)
        #expect(String(decoding: writer.takeBytes(), as: UTF8.self) == #"{"name":"n","passed":false,"stepsRun":1,"failures":[{"step":0,"action":"back","key":"top","pointer":"/scenarios/0/steps/0/expect/top","expected":"a","actual":null,"message":"top is none, expected a"}]}"#)
    }
}

// ScenarioClientTests: flow tests for an app build, offline: a client that cannot render the
// folder's flows gets the unsupported-client outcome, which a scenario can expect.

import FlowEngine
import JSON
import Testing

import FlowScenarios

struct ScenarioClientTests {
    static let allSample = #"["onboarding.first","onboarding.second","onboarding.faceScan","home.first","home.second","modal","login.form","checkout.cart","checkout.review","address.list","address.form","address.row","paywall.offer","purchase"]"#

    /// A client listing every screen runs like no client; one lacking a screen is refused at
    /// the start, which passes when expected and fails (naming the screen) when not.
    @Test func unsupportedClientIsAnOutcome() throws {
        let results = try Sample.run("""
            {"scenarios": [
              {"name": "a build with every screen", "client": {"platform": "ios", "appVersion": "2.3.1", "features": \(Self.allSample)},
               "steps": [{"action": {"type": "onboarding.showSecond"}, "expect": {"top": "onboarding.second"}}]},
              {"name": "an old build is refused", "client": {"features": ["onboarding.first", "home.first"]},
               "start": {"expect": {"error": "unsupported-client"}}, "steps": []},
              {"name": "an old build, not expected to be refused", "client": {"platform": "android", "features": ["onboarding.first"]},
               "steps": [{"action": {"type": "onboarding.showSecond"}}]},
              {"name": "refused, but steps were written", "client": {"features": []},
               "start": {"expect": {"error": "unsupported-client"}}, "steps": [{"action": {"type": "back"}}]},
              {"name": "expected refusal that does not come", "client": {"platform": "ios"},
               "start": {"expect": {"error": "unsupported-client"}}, "steps": []}
            ]}
            """)
        #expect(results.map(\.passed) == [true, true, false, false, false])
        #expect(results[2].failures.first?.key == "error")
        #expect(results[2].failures.first?.pointer == "/scenarios/2/client")
        #expect(results[2].failures.first?.actual == "unsupported-client")
        #expect(results[2].failures.first?.message.contains("home.first") == true)
        #expect(results[3].failures.first?.key == "steps")
        #expect(results[4].failures.first?.message == "applied, expected to be refused with unsupported-client")
    }

    /// `client` is checked like a session's, problems under the scenario's pointer.
    @Test func clientProblemsArePointed() throws {
        #expect(throws: ScenarioProblems.self) {
            try Sample.suite(#"{"scenarios": [{"name": "x", "client": {"features": [1], "os": "ios"}, "steps": []}]}"#)
        }
        do throws(ScenarioProblems) {
            _ = try FlowScenarioSuite.parse(Array(#"{"scenarios": [{"name": "x", "client": {"features": [1], "os": "ios"}, "steps": []}]}"#.utf8))
        } catch {
            #expect(error.problems.map(\.path) == ["/scenarios/0/client/os", "/scenarios/0/client/features/0"])
        }
        let suite = try Sample.suite(#"{"scenarios": [{"name": "x", "client": {"platform": "web"}, "steps": []}]}"#)
        #expect(suite.scenarios[0].client == ClientCapabilities(platform: "web"))
    }

    /// The server's route gives each client its own catalog: the placement decides, per scenario.
    @Test func placementPerClient() throws {
        let suite = try Sample.suite("""
            {"scenarios": [
              {"name": "anyone", "start": {"expect": {"top": "onboarding.first"}}, "steps": []},
              {"name": "old", "client": {"appVersion": "1"}, "start": {"expect": {"error": "unsupported-client"}}, "steps": []}
            ]}
            """)
        let results = suite.run { client in
            client?.appVersion == "1" ? .unsupportedClient(missing: ["onboarding.first"]) : .catalog(Sample.catalog)
        }
        #expect(results.map(\.passed) == [true, true])
    }
}

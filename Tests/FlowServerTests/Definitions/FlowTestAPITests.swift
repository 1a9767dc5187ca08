// Flow tests: the sample app's shipped scenarios pass, offline and over the API, and a stored
// version is tested before it goes live.
import FlowEngine
import FlowScenarios
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct FlowTestAPITests {
    static let admin = FlowAdminTests.admin

    /// The shipped scenario files, `flows/tests/*.json`.
    static let shippedFiles: [(name: String, text: String)] = {
        let folder = Repository.path("flows/tests")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.map { ($0, (try? String(contentsOf: folder.appending(path: $0), encoding: .utf8)) ?? "") }
    }()

    /// Every shipped scenario passes on the sample app as the binary embeds it, with the flags
    /// it ships: what `flowstack flows test flows/tests` runs in CI.
    @Test func shippedScenariosPass() throws {
        #expect(Self.shippedFiles.count >= 3)
        let catalog = BundledFlows.catalog().catalog
        var scenarios = 0
        for file in Self.shippedFiles {
            let suite = try FlowScenarioSuite.parse(Array(file.text.utf8))
            for result in suite.run(catalog: catalog, flags: ScenarioFlags.bundled()) {
                scenarios += 1
                #expect(result.passed, "\(file.name): \(result.name): \(result.failures.map(\.description))")
            }
        }
        #expect(scenarios >= 10)
    }

    /// The same files pass over the API against the live version of each flow they test.
    @Test func shippedScenariosPassOverTheAPI() throws {
        let test = try TestApp()
        for file in Self.shippedFiles {
            let response = try test.direct.send("POST", "/v1/flows/app/versions/1/test", body: file.text, headers: Self.admin)
            #expect(response.status == 200)
            #expect(response.json["failed"] == 0, "\(file.name): \(response.text)")
            #expect(response.json["flowVersions"] == [
                "address": 1, "app": 1, "checkout": 1, "home": 1, "login": 1, "modal": 1, "onboarding": 1, "paywall": 1,
            ])
        }
    }

    /// A one-screen onboarding, stored but not live, is tested before it goes live: the scenario
    /// passes on version 2 and fails on version 1, with the difference named; what is live and
    /// what sessions get does not change.
    @Test func testsAStoredVersionBeforeItGoesLive() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        let scenarios = #"""
            {"scenarios": [
              {"name": "one screen to home", "steps": [
                {"action": {"type": "onboarding.completed", "from": "top"}, "expect": {"screens": ["home.first"], "handledBy": "app", "user": {"onboarded": true}}}]},
              {"name": "the face scan still comes from the live flag", "context": {"attributes": {"country": "DE"}}, "steps": [
                {"action": {"type": "onboarding.completed"}, "expect": {"top": "onboarding.faceScan"}}]}
            ]}
            """#
        let second = try test.direct.send("POST", "/v1/flows/onboarding/versions/2/test", body: scenarios, headers: Self.admin)
        #expect(second.status == 200)
        #expect(second.headers["Content-Type"] == "application/json")
        #expect(second.json["flow"] == "onboarding")
        #expect(second.json["version"] == 2)
        #expect(second.json["flowVersions"]["onboarding"] == 2)
        #expect(second.json["passed"] == 1)
        #expect(second.json["failed"] == 1)
        #expect(second.json["scenarios"][0] == ["name": "one screen to home", "passed": true, "stepsRun": 1, "failures": []])
        // Version 2 has no face scan: the flag is on for a German user, but nothing reads it.
        #expect(second.json["scenarios"][1]["failures"][0]["key"] == "top")
        #expect(second.json["scenarios"][1]["failures"][0]["actual"] == "home.first")

        let first = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: scenarios, headers: Self.admin)
        #expect(first.status == 200)
        #expect(first.json["passed"] == 0)
        let failure = first.json["scenarios"][0]["failures"][0]
        #expect(failure["step"] == 0)
        #expect(failure["action"] == "onboarding.completed")
        #expect(failure["key"] == "error")
        #expect(failure["pointer"] == "/scenarios/0/steps/0/action")
        #expect(failure["expected"] == .null)
        #expect(failure["actual"] == "refused")

        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)
        let client = SessionClient(sender: test.direct)
        #expect(try client.act(try client.create(userId: "unchanged"), #"{"type":"onboarding.completed"}"#).status == 422)
    }

    /// Bad requests: no token 401, unknown flow or version 404, a bad version 400, malformed
    /// JSON 400, scenarios that do not fit the format 422 with the pointer of each problem.
    @Test func refusesBadRequests() throws {
        let test = try TestApp()
        let valid = #"{"scenarios": [{"name": "x", "steps": []}]}"#
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: valid).status == 401)
        #expect(try test.direct.send("POST", "/v1/flows/nothing/versions/1/test", body: valid, headers: Self.admin).status == 404)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/7/test", body: valid, headers: Self.admin).status == 404)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/zero/test", body: valid, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: "{", headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: "", headers: Self.admin).status == 400)
        let invalid = try test.direct.send(
            "POST", "/v1/flows/onboarding/versions/1/test",
            body: #"{"scenarios": [{"name": "", "steps": [{"action": {"type": "back", "form": "top"}, "expect": {"top": 3}}]}]}"#,
            headers: Self.admin)
        #expect(invalid.status == 422)
        #expect(invalid.headers["Content-Type"] == "application/problem+json")
        #expect(invalid.json["type"] == "urn:flowstack:problem:invalid-scenarios")
        let pointers = invalid.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } ?? []
        #expect(pointers == ["/scenarios/0/name", "/scenarios/0/steps/0/action/form", "/scenarios/0/steps/0/expect/top"])
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: "[1]", headers: Self.admin).status == 422)
    }
}

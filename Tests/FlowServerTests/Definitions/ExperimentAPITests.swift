// Flags and A/B experiments over the API: the shipped face-scan flag, evaluation, a 50/50
// experiment between the two-screen and a one-screen onboarding, and its report.
import FeatureFlags
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct FlagAPITests {
    static let admin = FlowAdminTests.admin

    /// eu-face-scan is on for EU countries: a German user scans their face before home; a US user does not.
    @Test func shippedFaceScanFlag() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let german = try client.create(userId: "hans", attributes: #"{"country":"DE"}"#)
        #expect(german.state["flags"]["eu-face-scan"] == ["value": true, "variant": "on", "reason": "TARGETING_MATCH"])
        try client.apply(german, #"{"type":"onboarding.showSecond"}"#)
        #expect(try client.apply(german, #"{"type":"onboarding.completed"}"#).features == ["onboarding.first", "onboarding.second", "onboarding.faceScan"])
        let home = try client.apply(german, #"{"type":"onboarding.faceScanVerified"}"#)
        #expect(home.features == ["home.first"])
        #expect(home["handledBy"] == "app")

        let american = try client.create(userId: "sam", attributes: #"{"country":"US"}"#)
        #expect(american.state["flags"]["eu-face-scan"] == ["value": false, "variant": "off", "reason": "DEFAULT"])
        try client.apply(american, #"{"type":"onboarding.showSecond"}"#)
        #expect(try client.apply(american, #"{"type":"onboarding.completed"}"#).features == ["home.first"])
    }

    /// Flags are stored, listed and evaluated; a changed flag applies to new sessions only.
    @Test func flagsCanBeChangedAndEvaluated() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let before = try client.create(userId: "early", attributes: #"{"country":"US"}"#)
        let everyone = #"{"variants":{"on":true,"off":false},"defaultVariant":"on"}"#
        let put = try test.direct.send("PUT", "/v1/flags/eu-face-scan", body: everyone, headers: Self.admin)
        #expect(put.status == 200)
        #expect(put.json["revision"] == 2)
        let listed = try test.direct.send("GET", "/v1/flags", headers: Self.admin).json
        #expect(listed["flags"][0]["key"] == "eu-face-scan")
        #expect(listed["flags"][0]["defaultVariant"] == "on")
        let evaluated = try test.direct.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"x","attributes":{"country":"US"}}"#, headers: Self.admin)
        #expect(evaluated.json["eu-face-scan"] == ["value": true, "variant": "on", "reason": "STATIC"])
        #expect(try client.create(userId: "late", attributes: #"{"country":"US"}"#).state["flags"]["eu-face-scan"]["value"] == true)
        #expect(try client.state(before).json["flags"]["eu-face-scan"]["value"] == false)
        let created = try test.direct.send("PUT", "/v1/flags/new-checkout", body: everyone, headers: Self.admin)
        #expect(created.status == 201)
        let readBack = try test.direct.send("GET", "/v1/flags/new-checkout", headers: Self.admin)
        #expect(try test.direct.send("PUT", "/v1/flags/new-checkout", body: readBack.text, headers: Self.admin).status == 200)
    }

    /// Invalid flags are 422 with paths; bad keys and bodies 400; no token 401; unknown 404.
    @Test func flagValidation() throws {
        let test = try TestApp()
        let wrong = try test.direct.send("PUT", "/v1/flags/f", body: #"{"variants":{"on":true},"defaultVariant":"off","split":[{"variant":"on","weight":0.5}]}"#, headers: Self.admin)
        #expect(wrong.status == 422)
        let pointers = wrong.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } ?? []
        #expect(pointers.contains("/defaultVariant"), "\(pointers)")
        #expect(pointers.contains { $0.hasPrefix("/split") }, "\(pointers)")
        #expect(try test.direct.send("PUT", "/v1/flags/f", body: "[1]", headers: Self.admin).status == 422)
        #expect(try test.direct.send("PUT", "/v1/flags/f", body: "{", headers: Self.admin).status == 400)
        #expect(try test.direct.send("PUT", "/v1/flags/bad%20key", body: "{}", headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/flags/none", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/flags").status == 401)
        #expect(try test.direct.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":5}"#, headers: Self.admin).status == 400)
    }
}

struct ExperimentAPITests {
    static let admin = FlowAdminTests.admin
    static let experiment = #"""
        {"variants": [{"key": "control", "weight": 0.5}, {"key": "short", "weight": 0.5, "flows": {"onboarding": 2}}],
         "coverage": 1.0, "hashAttribute": "userId"}
        """#

    /// The variant GrowthBook would give: hash v2 over the experiment key and the user id.
    static func expectedVariant(_ userId: String) -> String {
        let n = Bucketing.hash(seed: "onboarding-length", value: userId, version: 2) ?? -1
        return n < 0.5 ? "control" : "short"
    }

    /// A team uploads a one-screen onboarding, runs it against the two-screen one at 50/50 with
    /// that one flow pinned (the shipped `app` takes its bubbled completion), and reads the
    /// report: assignments agree with GrowthBook's hashing, each variant runs its own
    /// onboarding, and the report counts sessions, onboarded users and the funnel.
    @Test func fiftyFiftyOnboardingExperiment() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        let put = try test.direct.send("PUT", "/v1/experiments/onboarding-length", body: Self.experiment, headers: Self.admin)
        #expect(put.status == 201)
        let client = SessionClient(sender: test.direct)
        var counts: [String: Int] = [:]
        for index in 0..<60 {
            let userId = "user-\(index)"
            let session = try client.create(userId: userId)
            let variant = session.state["experiments"]["onboarding-length"].stringValue ?? "none"
            #expect(variant == Self.expectedVariant(userId))
            counts[variant, default: 0] += 1
            #expect(session.state.features == ["onboarding.first"])
            if variant == "short" {
                let home = try client.apply(session, #"{"type":"onboarding.completed"}"#)
                #expect(home.features == ["home.first"])
                #expect(home["handledBy"] == "app")
            } else {
                #expect(try client.act(session, #"{"type":"onboarding.completed"}"#).status == 422)
                try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
                if index % 3 != 0 {  // a third of the control group gives up on the second screen
                    #expect(try client.apply(session, #"{"type":"onboarding.completed"}"#).features == ["home.first"])
                }
            }
        }
        #expect(counts.keys.sorted() == ["control", "short"])
        let control = counts["control"] ?? 0
        let short = counts["short"] ?? 0
        let quitters = (0..<60).filter { $0 % 3 == 0 && Self.expectedVariant("user-\($0)") == "control" }.count
        let report = try test.direct.send("GET", "/v1/experiments/onboarding-length/report", headers: Self.admin).json
        #expect(report["variants"][0]["key"] == "control")
        #expect(report["variants"][0]["sessions"].integerValue == control)
        #expect(report["variants"][0]["onboarded"].integerValue == control - quitters)
        #expect(report["variants"][0]["funnel"] == [
            "home.first": .integer(control - quitters), "onboarding.first": .integer(control), "onboarding.second": .integer(control)])
        #expect(report["variants"][1]["key"] == "short")
        #expect(report["variants"][1]["sessions"].integerValue == short)
        #expect(report["variants"][1]["onboarded"].integerValue == short)
        #expect(report["variants"][1]["funnel"] == ["home.first": .integer(short), "onboarding.first": .integer(short)])
    }

    /// Assignments are stored with the session and are the same after a restart; the same user
    /// gets the same variant in a new session.
    @Test func assignmentsSurviveRestart() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        #expect(try test.direct.send("PUT", "/v1/experiments/onboarding-length", body: Self.experiment, headers: Self.admin).status == 201)
        let client = SessionClient(sender: test.direct)
        let sessions = try (0..<10).map { try client.create(userId: "r-\($0)") }
        let reopened = try test.reopened()
        defer { withExtendedLifetime(reopened) {} }
        let again = SessionClient(sender: reopened.direct)
        for (index, session) in sessions.enumerated() {
            let variant: JSONValue = session.state["experiments"]["onboarding-length"]
            #expect(try again.state(session).json["experiments"]["onboarding-length"] == variant)
            #expect(try again.create(userId: "r-\(index)").state["experiments"]["onboarding-length"] == variant)
        }
        #expect(try reopened.direct.send("GET", "/v1/experiments/onboarding-length/report", headers: Self.admin)
            .json["variants"].arrayValue?.compactMap { $0["sessions"].integerValue }.reduce(0, +) == 20)
    }

    /// Invalid experiments are 422 with paths: weights, coverage, duplicate keys, missing flow versions.
    @Test(arguments: [
        (#"{"variants":[{"key":"a","weight":0.7},{"key":"b","weight":0.7}]}"#, "/variants"),
        (#"{"variants":[{"key":"a"},{"key":"b"}],"coverage":1.5}"#, "/coverage"),
        (#"{"variants":[{"key":"a"},{"key":"a"}]}"#, "/variants/1/key"),
        (#"{"variants":[{"key":"a"},{"key":"b","flows":{"onboarding":7}}]}"#, "/variants/1/flows/onboarding"),
        (#"{"variants":[{"key":"a"},{"key":"b","flows":{"nowhere":1}}]}"#, "/variants/1/flows/nowhere"),
    ])
    func experimentValidation(body: String, pointer: String) throws {
        let test = try TestApp()
        let response = try test.direct.send("PUT", "/v1/experiments/e", body: body, headers: Self.admin)
        #expect(response.status == 422)
        let pointers = response.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } ?? []
        #expect(pointers.contains { $0.hasPrefix(pointer) }, "\(pointers)")
        #expect(try test.direct.send("GET", "/v1/experiments/e", headers: Self.admin).status == 404)
    }

    /// Sessions outside coverage are in no variant, and appear in no report.
    @Test func coverageLeavesSessionsOut() throws {
        let test = try TestApp()
        let none = #"{"variants":[{"key":"a"},{"key":"b"}],"coverage":0}"#
        #expect(try test.direct.send("PUT", "/v1/experiments/nobody", body: none, headers: Self.admin).status == 201)
        let client = SessionClient(sender: test.direct)
        #expect(try client.create(userId: "out").state["experiments"] == [:])
        let report = try test.direct.send("GET", "/v1/experiments/nobody/report", headers: Self.admin).json
        #expect(report["variants"].arrayValue?.compactMap { $0["sessions"].integerValue } == [0, 0])
        #expect(try test.direct.send("GET", "/v1/experiments/missing/report", headers: Self.admin).status == 404)
    }
}

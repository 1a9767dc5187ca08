// Flow definitions over the admin API: versions, validation with paths, activation, and
// sessions keeping the versions they started with.
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct FlowAdminTests {
    static let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]

    /// A one-screen onboarding: completing it from its only screen bubbles to the shipped
    /// `app`, which goes home (it trusts its child's screens, so no new `app` is needed).
    static let shortOnboarding = #"""
        {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
         "on": {"onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}}
        """#

    /// The shipped flows are version 1 and live; GET shows the live definition with its version.
    @Test func shippedFlowsAreVersionOne() throws {
        let test = try TestApp()
        let list = try test.direct.send("GET", "/v1/flows", headers: Self.admin).json
        #expect(list["flows"].arrayValue?.compactMap { $0["name"].stringValue } == ["address", "app", "checkout", "home", "login", "modal", "onboarding", "paywall"])
        #expect(list["flows"][0]["liveVersion"] == 1)
        let onboarding = try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin)
        #expect(onboarding.status == 200)
        #expect(onboarding.json["version"] == 1)
        #expect(onboarding.json["kind"] == "stacked")
        #expect(onboarding.json["on"]["onboarding.showSecond"] != .null)
        #expect(try test.direct.send("GET", "/v1/flows/nothing", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/flows").status == 401)
    }

    /// A PUT stores a new version without making it live; ?activate=true or the activate call does.
    @Test func putStoresVersionsAndActivates() throws {
        let test = try TestApp()
        let put = try test.direct.send("PUT", "/v1/flows/onboarding", body: Self.shortOnboarding, headers: Self.admin)
        #expect(put.status == 201)
        #expect(put.json == ["name": "onboarding", "version": 2, "live": false, "warnings": []])
        #expect(put.headers["Location"] == "/v1/flows/onboarding/versions/2")
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)
        let client = SessionClient(sender: test.direct)
        #expect(try client.create(userId: "before").state.features == ["onboarding.first"])
        let stored = try test.direct.send("GET", "/v1/flows/onboarding/versions/2", headers: Self.admin).json
        #expect(stored["live"] == false)
        #expect(stored["initial"] == ["onboarding.first"])

        let old = try client.create(userId: "old-session")
        let activated = try test.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", headers: Self.admin)
        #expect(activated.status == 200)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 2)

        // A new session runs version 2: completing from the first screen goes home.
        let fresh = try client.create(userId: "new-session")
        #expect(try client.apply(fresh, #"{"type":"onboarding.completed"}"#).features == ["home.first"])
        // The session made before keeps version 1: completing needs the second screen.
        #expect(try client.act(old, #"{"type":"onboarding.completed"}"#).status == 422)
        try client.apply(old, #"{"type":"onboarding.showSecond"}"#)
        #expect(try client.apply(old, #"{"type":"onboarding.completed"}"#).features == ["home.first"])

        let third = try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: Self.shortOnboarding, headers: Self.admin)
        #expect(third.json["name"] == "onboarding" && third.json["version"] == 3 && third.json["live"] == true)
        // Sessions that listed no features render everything: nobody falls back.
        #expect(third.json["impact"]["affectedSessions"] == 0 && third.json["impact"]["clients"] == [])
    }

    /// Versions and activations survive a restart; a session keeps its versions across it.
    @Test func versionsSurviveRestart() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: Self.shortOnboarding, headers: Self.admin).status == 201)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "keeper")
        let reopened = try test.reopened()
        defer { withExtendedLifetime(reopened) {} }
        #expect(try reopened.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 2)
        let again = SessionClient(sender: reopened.direct)
        #expect(try again.apply(session, #"{"type":"onboarding.completed"}"#).features == ["home.first"])
    }

    /// Invalid definitions are 422 with the JSON Pointer of every problem; malformed JSON is 400.
    @Test(arguments: [
        (#"{"name":"onboarding","kind":"stacked","initial":[],"on":{}}"#, "/initial"),
        (#"{"name":"other","kind":"stacked","initial":["a"],"on":{}}"#, "/name"),
        (#"{"name":"onboarding","kind":"sideways","initial":["a"],"on":{}}"#, "/kind"),
        (#"{"name":"onboarding","kind":"stacked","initial":["a"],"on":{"x":[{"do":[{"teleport":{}}]}]}}"#, "/on/x/0/do/0/teleport"),
        (#"{"name":"onboarding","kind":"stacked","initial":["a"],"on":{"x":[{"do":[{"present":{"flow":"nowhere"}}]}]}}"#, "/on/x/0/do/0/present/flow"),
        (#"{"name":"onboarding","kind":"stacked","initial":[{"flow":"onboarding"}],"on":{}}"#, "/initial/0/flow"),
    ])
    func invalidDefinitionsAre422(body: String, pointer: String) throws {
        let test = try TestApp()
        let response = try test.direct.send("PUT", "/v1/flows/onboarding", body: body, headers: Self.admin)
        #expect(response.status == 422)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let pointers = response.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } ?? []
        #expect(pointers.contains(pointer), "\(pointers)")
        #expect(try test.direct.send("GET", "/v1/flows", headers: Self.admin).json["flows"][3]["latestVersion"] == 1)
    }

    /// Malformed bodies and parameters are 400; unknown versions 404; no token 401.
    @Test func badRequestsAreRefused() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: "{oops", headers: Self.admin).status == 400)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=maybe", body: Self.shortOnboarding, headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding/versions/zero", headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding/versions/9", headers: Self.admin).status == 404)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/9/activate", headers: Self.admin).status == 404)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: Self.shortOnboarding).status == 401)
    }
}

struct FlowRoundTripTests {
    /// A definition read back from GET can be PUT again as it is, and makes an identical version.
    @Test func getThenPutRoundTrips() throws {
        let test = try TestApp()
        let admin = FlowAdminTests.admin
        let live = try test.direct.send("GET", "/v1/flows/home", headers: admin)
        let put = try test.direct.send("PUT", "/v1/flows/home", body: live.text, headers: admin)
        #expect(put.status == 201)
        var first = try test.direct.send("GET", "/v1/flows/home/versions/1", headers: admin).json.objectValue ?? [:]
        var second = try test.direct.send("GET", "/v1/flows/home/versions/2", headers: admin).json.objectValue ?? [:]
        for key in ["version", "live"] {
            first[key] = nil
            second[key] = nil
        }
        #expect(first == second)
    }
}

// Replay over the API: recorded sessions of the sample app run against changed onboarding
// versions, through a real socket, on the run's store (SQLite, or PostgreSQL in CI's second pass).
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct ReplayAPITests {
    static let admin = FlowAdminTests.admin

    /// Onboarding that starts at its second screen: every session that walked it diverges at
    /// `onboarding.first`.
    static let skipsFirst = #"""
        {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.second"],
         "on": {"onboarding.completed": [{"from": "onboarding.second", "do": [{"bubble": {}}]}]}}
        """#

    /// Onboarding that completes only from its first screen: a user who completed it from the
    /// second is refused there.
    static let refusesCompletion = #"""
        {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
         "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"push": "onboarding.second"}]}],
                "onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}}
        """#

    /// Four sessions: ada completes onboarding, bob stops at its second screen, cy at its first,
    /// and ada comes back (home, second tab).
    static func record(_ client: SessionClient) throws {
        let ada = try client.create(userId: "ada")
        try client.apply(ada, #"{"type":"onboarding.showSecond","from":"e3"}"#)
        try client.apply(ada, #"{"type":"onboarding.completed","from":"e4"}"#)
        let bob = try client.create(userId: "bob")
        try client.apply(bob, #"{"type":"onboarding.showSecond","from":"e3"}"#)
        _ = try client.create(userId: "cy")
        let back = try client.create(userId: "ada")
        #expect(back.state["top"]["feature"] == "home.first")
        try client.apply(back, #"{"type":"home.selectTab","params":{"index":1}}"#)
    }

    /// A version that skips a screen diverges there, one that refuses an action is counted as
    /// refused (screen, action, code), the versions each session ran replay the same; through
    /// libmicrohttpd on an ephemeral port.
    @Test func reportsDivergenceAndRefusalOfRealChanges() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            try Self.record(SessionClient(sender: sender))
            #expect(try sender.send("PUT", "/v1/flows/onboarding", body: Self.skipsFirst, headers: Self.admin).status == 201)
            #expect(try sender.send("PUT", "/v1/flows/onboarding", body: Self.refusesCompletion, headers: Self.admin).status == 201)

            let skipped = try sender.send("POST", "/v1/replays", body: #"{"flows": {"onboarding": 2}, "days": 7, "sample": 100}"#,
                                          headers: Self.admin)
            #expect(skipped.status == 200, "\(skipped.text)")
            #expect(skipped.headers["Content-Type"] == "application/json")
            let report = skipped.json
            #expect(report["versions"] == ["onboarding": 2])
            #expect(report["totals"] == ["sessions": 4, "same": 1, "diverged": 3, "refused": 0, "deadEnd": 0, "skipped": 0])
            let onboarding: JSONValue = report["flows"]["onboarding"]
            #expect(onboarding["sessions"] == 3 && onboarding["diverged"] == 3 && onboarding["same"] == 0)
            #expect(onboarding["firstDivergence"] == [["screen": "onboarding.first", "replayedScreen": "onboarding.second", "count": 3]])
            // Ada's first session would have reached home only after onboarding; her second is the same.
            #expect(report["flows"]["home"]["sessions"] == 2 && report["flows"]["home"]["same"] == 1
                    && report["flows"]["home"]["notReached"] == 1)
            #expect(report["durationMs"].doubleValue != nil)

            let refused = try sender.send("POST", "/v1/replays", body: #"{"flows": {"onboarding": 3}}"#, headers: Self.admin).json
            #expect(refused["totals"] == ["sessions": 4, "same": 3, "diverged": 0, "refused": 1, "deadEnd": 0, "skipped": 0])
            #expect(refused["flows"]["onboarding"]["refusals"]
                    == [["screen": "onboarding.second", "action": "onboarding.completed", "code": "refused", "count": 1]])

            let ownResponse = try sender.send("POST", "/v1/replays", body: "", headers: Self.admin)
            #expect(ownResponse.status == 200, "\(ownResponse.text)")
            let own = ownResponse.json
            #expect(own["versions"] == [:])
            #expect(own["totals"]["same"] == 4)

            let sample = try sender.send("POST", "/v1/replays", body: #"{"sample": 2}"#, headers: Self.admin).json
            #expect(sample["totals"]["sessions"] == 2)
        }
    }

    /// A release replays with the versions it makes live: its onboarding that skips the first
    /// screen diverges there for the three sessions that walked it.
    @Test func replaysARelease() throws {
        let test = try TestApp()
        try Self.record(SessionClient(sender: test.direct))
        let made = try test.direct.send("POST", "/v1/releases", body: #"{"description": "onboarding from its second screen", "flows": {"onboarding": \#(Self.skipsFirst)}}"#,
                                        headers: Self.admin)
        #expect(made.status == 201, "\(made.text)")
        let id = made.json["id"].integerValue ?? 0
        let replay = try test.direct.send("POST", "/v1/releases/\(id)/replay", body: #"{"sample": 100}"#, headers: Self.admin)
        #expect(replay.status == 200, "\(replay.text)")
        let versions: JSONValue = replay.json["versions"], flows: JSONValue = made.json["flows"]
        #expect(versions == flows && versions["onboarding"].integerValue == 2)
        #expect(replay.json["totals"]["diverged"] == 3 && replay.json["totals"]["same"] == 1)
        #expect(try test.direct.send("POST", "/v1/releases/\(id)/replay", body: #"{"flows": {"onboarding": 1}}"#, headers: Self.admin).status == 400)
        // Not even an empty or null one: the release's versions are the only ones it replays with.
        #expect(try test.direct.send("POST", "/v1/releases/\(id)/replay", body: #"{"flows": {}}"#, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/releases/\(id)/replay", body: #"{"flows": null}"#, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/releases/\(id + 1)/replay", body: "", headers: Self.admin).status == 404)
    }

    /// Bad requests are 4xx problems with a code and the pointer of what is wrong.
    @Test(arguments: [
        (#"{"flow": {"onboarding": 2}}"#, 400, "malformed-request", "/flow"),
        (#"{"flows": {"onboarding": 0}}"#, 400, "malformed-request", "/flows/onboarding"),
        (#"{"flows": ["onboarding"]}"#, 400, "malformed-request", "/flows"),
        (#"{"days": 0}"#, 400, "malformed-request", "/days"),
        (#"{"sample": 100001}"#, 400, "malformed-request", "/sample"),
        (#"[]"#, 400, "malformed-request", ""),
        ("null", 400, "malformed-request", ""),
        (#"{"flows": {"onboarding": 9}}"#, 422, "unknown-flow-version", "/flows/onboarding"),
    ])
    func refusesBadRequests(body: String, status: Int, code: String, pointer: String) throws {
        let test = try TestApp()
        let response = try test.direct.send("POST", "/v1/replays", body: body, headers: Self.admin)
        #expect(response.status == status, "\(response.text)")
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.json["code"].stringValue == code)
        #expect(response.json["errors"][0]["pointer"].stringValue == pointer)
    }

    /// The replay page and its script are served from the binary; the report page links to it.
    @Test func replayPageIsServed() throws {
        let test = try TestApp()
        let page = try test.direct.send("GET", "/playground/replay.html")
        #expect(page.status == 200)
        #expect(page.text.contains("/playground/replay.js") && page.text.contains("data-testid=\"replay-table\""))
        #expect(try test.direct.send("GET", "/playground/replay.js").status == 200)
        #expect(try test.direct.send("GET", "/playground/report.html").text.contains("/playground/replay.html"))
    }

    /// Replays are an admin route.
    @Test func needsTheAdminToken() throws {
        let test = try TestApp()
        #expect(try test.direct.send("POST", "/v1/replays", body: "{}").status == 401)
    }
}

// Deep links over the API: sessions that start from a link, links followed in a running session,
// links deferred through onboarding (with and without the face scan), variants' own links,
// the admin resolve route, and every error leaving everything as it was.
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct LinkAPITests {
    static let admin = FlowAdminTests.admin

    /// Walks `user` through onboarding in a first session, so their next sessions start at home.
    static func onboard(_ client: SessionClient, _ user: String) throws {
        let session = try client.create(userId: user)
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"onboarding.completed"}"#)
    }

    static func create(_ sender: any RequestSender, _ body: String) throws -> (Response, CreatedSession?) {
        let response = try sender.send("POST", "/v1/sessions", body: body)
        guard response.status == 201 else { return (response, nil) }
        let json = response.json
        return (response, CreatedSession(id: json["session"]["id"].stringValue ?? "", token: json["session"]["token"].stringValue ?? "",
                                         state: json["state"]))
    }

    /// Every pattern form of the sample's links builds the whole stack for an onboarded user:
    /// home below the modal, the tab selected, scheme and host or none, percent-decoding.
    @Test func linksBuildTheWholeStack() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        try Self.onboard(client, "ada")
        let cases: [(link: String, features: [String], param: String?)] = [
            ("/home", ["home.first"], nil),
            ("/home/1", ["home.second"], nil),
            ("myapp://open/home/1/", ["home.second"], nil),
            ("/modal/Hello", ["home.first", "modal"], "Hello"),
            ("https://example.com/modal/Hi%20there%2Fyou?utm=x#top", ["home.first", "modal"], "Hi there/you"),
        ]
        for entry in cases {
            let (response, session) = try Self.create(test.direct, #"{"userId":"ada","link":"\#(entry.link)"}"#)
            let state = try #require(session?.state, "\(entry.link): \(response.status) \(response.text)")
            #expect(state.features == entry.features, "\(entry.link)")
            #expect(state["version"] == 1, "the link is the session's first action")
            #expect(state["pendingLink"] == .null)
            if let param = entry.param { #expect(state["top"]["params"]["content"] == .string(param)) }
        }
    }

    /// A user who has not onboarded keeps the link pending through onboarding and lands on it
    /// once onboarding completes: at once in the US, after the face scan in Germany.
    @Test(arguments: [("US", false), ("DE", true)])
    func deferredThroughOnboarding(country: String, faceScan: Bool) throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let (response, created) = try Self.create(
            test.direct, #"{"userId":"new-\#(country)","attributes":{"country":"\#(country)"},"link":"/modal/Welcome"}"#)
        let session = try #require(created, "\(response.status) \(response.text)")
        #expect(session.state.features == ["onboarding.first"])
        #expect(session.state["pendingLink"] == ["uri": "/modal/Welcome", "pattern": "/modal/{content}"])
        #expect(try client.apply(session, #"{"type":"onboarding.showSecond"}"#)["pendingLink"]["uri"] == "/modal/Welcome")
        var state = try client.apply(session, #"{"type":"onboarding.completed"}"#)
        if faceScan {
            #expect(state.features == ["onboarding.first", "onboarding.second", "onboarding.faceScan"])
            #expect(state["pendingLink"]["uri"] == "/modal/Welcome")
            state = try client.apply(session, #"{"type":"onboarding.faceScanVerified"}"#)
        }
        #expect(state.features == ["home.first", "modal"], "the user lands on the link, not on home")
        #expect(state["top"]["params"]["content"] == "Welcome")
        #expect(state["pendingLink"] == .null)
        #expect(state["transition"]["to"]["feature"] == "modal")
        #expect(try client.state(session).json == state, "committed as answered")
    }

    /// In a running session: a link action moves at once; a newer deferred link replaces a
    /// pending one; link.cancel drops it, and onboarding then ends at home.
    @Test func linksInARunningSession() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        try Self.onboard(client, "runner")
        let running = try client.create(userId: "runner")
        let linked = try client.apply(running, #"{"type":"link","params":{"uri":"/modal/Now"}}"#)
        #expect(linked.features == ["home.first", "modal"])
        #expect(linked["transition"]["type"] == "present")
        let log = try test.direct.send("GET", "/v1/sessions/\(running.id)/actions", headers: running.auth).json
        #expect(log["actions"][0]["type"] == "link")
        #expect(log["actions"][0]["params"] == ["uri": "/modal/Now"])

        let fresh = try client.create(userId: "newcomer")
        #expect(try client.apply(fresh, #"{"type":"link","params":{"uri":"/modal/First"}}"#)["pendingLink"]["uri"] == "/modal/First")
        #expect(try client.apply(fresh, #"{"type":"link","params":{"uri":"/home/1"}}"#)["pendingLink"] == ["uri": "/home/1", "pattern": "/home/{tab}"])
        let cancelled = try client.apply(fresh, #"{"type":"link.cancel"}"#)
        #expect(cancelled["pendingLink"] == .null)
        #expect(cancelled.features == ["onboarding.first"])
        try client.apply(fresh, #"{"type":"onboarding.showSecond"}"#)
        #expect(try client.apply(fresh, #"{"type":"onboarding.completed"}"#).features == ["home.first"])
    }

    /// Unknown, malformed, mistyped and refused links are refused with the field and the code,
    /// and change nothing: no session is created, a running session keeps its version.
    @Test func errorsChangeNothing() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        try Self.onboard(client, "erring")
        let sessionsBefore = try test.store.sessionCount()
        let refusals: [(body: String, status: Int, code: String?, pointer: String?)] = [
            (#"{"userId":"erring","link":"/nowhere"}"#, 422, "unknown-link", nil),
            (#"{"userId":"erring","link":"not a link"}"#, 400, "invalid-params", "/link"),
            (#"{"userId":"erring","link":"/home/abc"}"#, 400, "invalid-params", "/link"),
            (#"{"userId":"erring","link":42}"#, 400, nil, "/link"),
            (#"{"userId":"erring","link":"/home/7"}"#, 422, "link-refused", nil),
        ]
        for refusal in refusals {
            let (response, _) = try Self.create(test.direct, refusal.body)
            #expect(response.status == refusal.status, "\(refusal.body): \(response.text)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
            if let code = refusal.code { #expect(response.json["code"] == .string(code), "\(refusal.body)") }
            if let pointer = refusal.pointer { #expect(response.json["errors"][0]["pointer"] == .string(pointer), "\(refusal.body)") }
        }
        #expect(try test.store.sessionCount() == sessionsBefore, "no refused link created a session")
        let refused = try Self.create(test.direct, #"{"userId":"erring","link":"/home/7"}"#).0.json
        #expect(refused["link"] == "/home/{tab}")
        #expect(refused["step"] == 0)

        let session = try client.create(userId: "erring")
        for (body, status) in [(#"{"type":"link","params":{"uri":"/nowhere"}}"#, 422), (#"{"type":"link","params":{"uri":"/home/x"}}"#, 400),
                               (#"{"type":"link","params":{"uri":"/home/9"}}"#, 422), (#"{"type":"link","params":{}}"#, 400),
                               (#"{"type":"link","params":{"uri":5}}"#, 400)] {
            let response = try client.act(session, body)
            #expect(response.status == status, "\(body): \(response.text)")
        }
        #expect(try client.state(session).json["version"] == 0)
    }

    /// A variant that pins its own version of the root flow has its own links.
    @Test func variantsHaveTheirOwnLinks() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        var app = try #require(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json.objectValue)
        var links = app["links"]?.arrayValue ?? []
        links.append(["pattern": "/promo", "actions": [["type": "home.presentModal", "params": ["content": "Promo"]]]])
        app["links"] = .array(links)
        let put = try test.direct.send("PUT", "/v1/flows/app", body: JSONValue.object(app).jsonText, headers: Self.admin)
        #expect(put.status == 201, "\(put.text)")
        let experiment = #"{"variants":[{"key":"control","weight":0.5},{"key":"promo","weight":0.5,"flows":{"app":2}}],"coverage":1.0,"hashAttribute":"userId"}"#
        #expect(try test.direct.send("PUT", "/v1/experiments/promo-links", body: experiment, headers: Self.admin).status == 201)
        var seen: Set<String> = []
        for index in 0..<16 {
            let user = "promo-\(index)"
            try Self.onboard(client, user)
            let (response, session) = try Self.create(test.direct, #"{"userId":"\#(user)","link":"/promo"}"#)
            let variant = try #require(try client.create(userId: user).state["experiments"]["promo-links"].stringValue)
            seen.insert(variant)
            if variant == "promo" {
                #expect(session?.state.features == ["home.first", "modal"], "\(response.text)")
                #expect(session?.state["top"]["params"]["content"] == "Promo")
            } else {
                #expect(response.status == 422)
                #expect(response.json["code"] == "unknown-link")
            }
        }
        #expect(seen == ["control", "promo"])
    }

    /// The admin route answers where a link leads for a user, deferred or not, creating nothing.
    @Test func resolveRoute() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        try Self.onboard(client, "resolved")
        let before = try test.store.sessionCount()
        let onboarded = try test.direct.send("GET", "/v1/links/resolve?uri=myapp://x/modal/Hi&userId=resolved", headers: Self.admin)
        #expect(onboarded.status == 200)
        #expect(onboarded.json["pattern"] == "/modal/{content}")
        #expect(onboarded.json["params"] == ["content": "Hi"])
        #expect(onboarded.json["deferred"] == false)
        #expect(onboarded.json.features == ["home.first", "modal"])
        let newcomer = try test.direct.send("GET", "/v1/links/resolve?uri=/home/1&userId=nobody-yet&country=DE", headers: Self.admin)
        #expect(newcomer.json["deferred"] == true)
        #expect(newcomer.json["pendingLink"]["pattern"] == "/home/{tab}")
        #expect(newcomer.json.features == ["onboarding.first"])
        #expect(try test.store.sessionCount() == before)
        #expect(try test.direct.send("GET", "/v1/links/resolve?uri=/home&userId=x").status == 401)
        #expect(try test.direct.send("GET", "/v1/links/resolve?uri=/nope&userId=x", headers: Self.admin).status == 422)
        #expect(try test.direct.send("GET", "/v1/links/resolve?uri=/home/abc&userId=x", headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/links/resolve?userId=x", headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/links/resolve?uri=/home", headers: Self.admin).status == 400)
    }

    /// A root flow whose links name an unknown action, use an uncaptured placeholder or repeat a
    /// pattern is refused at PUT with a JSON Pointer to each problem.
    @Test func linkDefinitionsAreValidated() throws {
        let test = try TestApp()
        var app = try #require(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json.objectValue)
        app["links"] = [
            ["pattern": "/a/{x}"],
            ["pattern": "/b", "actions": [["type": "home.presentModal", "params": ["content": ["$link": "missing"]]]]],
            ["pattern": "/a/{y}"],
        ]
        let put = try test.direct.send("PUT", "/v1/flows/app", body: JSONValue.object(app).jsonText, headers: Self.admin)
        #expect(put.status == 422)
        let pointers = Set(put.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } ?? [])
        #expect(pointers.contains { $0.hasPrefix("/links/1/actions/0/params") }, "\(put.text)")
        #expect(pointers.contains("/links/2/pattern"), "\(put.text)")
        // Problems across flows come once the document itself is sound.
        app["links"] = [["pattern": "/a/{x}", "actions": [["type": "home.teleport"]]]]
        let unknown = try test.direct.send("PUT", "/v1/flows/app", body: JSONValue.object(app).jsonText, headers: Self.admin)
        #expect(unknown.status == 422)
        #expect(unknown.json["errors"][0]["pointer"] == "/links/0/actions/0/type", "\(unknown.text)")
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] != 2, "nothing was stored")
    }
}

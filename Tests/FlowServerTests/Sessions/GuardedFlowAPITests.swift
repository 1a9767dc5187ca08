// GuardedFlowAPITests: results, hand-offs and guards through the API — stored, resumed in one version,
// inside an experiment's variant, and reproduced by predictions and by the engine on a bundle.
import FeatureFlags
import FlowEngine
import HTTPTestClient
import JSON
import Testing

struct GuardedFlowAPITests {
    static let admin = FlowAdminTests.admin

    /// A login sheet of this test's own (the sample app ships one too); submitting records the
    /// login and closes it.
    static let login = #"""
        {"name": "login", "kind": "stacked", "initial": ["login.form"],
         "on": {"login.submit": [{"from": "login.form", "do": [{"setUser": {"loggedIn": true}}, {"dismiss": {}}]}],
                "login.cancel": [{"from": "login.form", "do": [{"dismiss": {}}]}]}}
        """#

    /// A store: a purchase hand-off and a result back to the offer when it fails.
    static let store = #"""
        {"name": "store", "kind": "stacked", "initial": ["store.offer"],
         "on": {"store.buy": [{"from": "store.offer", "params": {"productId": "string"},
                               "do": [{"push": {"handoff": "purchase", "params": {"productId": {"$param": "productId"}}}}]}],
                "purchase.failed": [{"from": "purchase", "params": {"reason": "string"},
                                     "do": [{"pop": {}}, {"result": {"into": "error", "value": {"$param": "reason"}}}]}],
                "purchase.completed": [{"from": "purchase", "params": {"transactionId": "string"}, "do": [{"dismiss": {}}]}]}}
        """#

    /// The shipped root with the modal guarded by a login, and the store presented from home.
    static let guardedApp = #"""
        {"name": "app", "kind": "stacked",
         "initial": [{"flow": "home", "when": {"user": "onboarded", "is": true}},
                     {"flow": "onboarding", "when": {"user": "onboarded", "isNot": true}}],
         "on": {
           "onboarding.completed": [{"via": "onboarding", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}],
           "onboarding.faceScanVerified": [{"via": "onboarding", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}],
           "home.presentModal": [{"via": "home", "params": {"content": "any"},
                                  "guard": {"when": {"user": "loggedIn", "is": true}, "else": {"present": {"flow": "login", "style": "pageSheet"}}},
                                  "do": [{"present": {"flow": "modal", "style": "fullScreen", "params": {"content": {"$param": "content"}}}}]}],
           "modal.shop": [{"via": "modal", "do": [{"dismiss": {}}, {"present": "store"}]}],
           "home.checkout": [{"via": "home", "do": [{"present": "checkout"}]}],
           "home.upgrade": [{"via": "home", "do": [{"present": "paywall"}]}]
         }}
        """#

    static let experiment = #"""
        {"variants": [{"key": "open", "weight": 0.5}, {"key": "guarded", "weight": 0.5, "flows": {"app": 2}}],
         "coverage": 1.0, "hashAttribute": "userId"}
        """#

    /// A server with login and store live, the guarded app as version 2 of `app`, and the experiment.
    static func server() throws -> TestApp {
        let test = try TestApp()
        for (name, body) in [("login", login), ("store", store)] {
            let put = try test.direct.send("PUT", "/v1/flows/\(name)?activate=true", body: body, headers: admin)
            try #require(put.status == 201, "\(put.text)")
        }
        let app = try test.direct.send("PUT", "/v1/flows/app", body: guardedApp, headers: admin)
        try #require(app.status == 201, "\(app.text)")
        try #require(app.json["version"] == 2)
        let experiment = try test.direct.send("PUT", "/v1/experiments/login-first", body: experiment, headers: admin)
        try #require(experiment.status == 201, "\(experiment.text)")
        return test
    }

    static func variant(_ userId: String) -> String {
        let n = Bucketing.hash(seed: "login-first", value: userId, version: 2) ?? -1
        return n < 0.5 ? "open" : "guarded"
    }

    /// A user at home in the given variant.
    static func atHome(_ client: SessionClient, variant: String, index: Int = 0) throws -> CreatedSession {
        let userId = try #require((0..<200).map { "g-\($0)" }.filter { Self.variant($0) == variant }.dropFirst(index).first)
        let session = try client.create(userId: userId)
        try #require(session.state["experiments"]["login-first"].stringValue == variant)
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        let home = try client.apply(session, #"{"type":"onboarding.completed"}"#)
        try #require(home.features == ["home.first"])
        return session
    }

    /// In the guarded variant the modal waits behind the login sheet and opens in the same
    /// version as the login; the other variant opens it at once. Both answers are stored.
    @Test func guardInsideAnExperimentVariant() throws {
        let test = try Self.server()
        let client = SessionClient(sender: test.direct)

        let open = try Self.atHome(client, variant: "open")
        let direct = try client.apply(open, #"{"type":"home.presentModal","params":{"content":"Hi"}}"#)
        #expect(direct.features == ["home.first", "modal"])
        #expect(direct["pendingActions"] == [])

        let guarded = try Self.atHome(client, variant: "guarded")
        let sheet = try client.apply(guarded, #"{"type":"home.presentModal","params":{"content":"Hi"}}"#)
        #expect(sheet.features == ["home.first", "login.form"])
        #expect(sheet["version"] == 3)
        #expect(sheet["pendingActions"][0]["action"]["type"] == "home.presentModal")
        #expect(sheet["pendingActions"][0]["action"]["params"] == ["content": "Hi"])
        #expect(sheet["pendingActions"][0]["guard"]["flow"] == "login")
        #expect(sheet["transition"]["style"] == "pageSheet")

        let resumed = try client.apply(guarded, #"{"type":"login.submit"}"#)
        #expect(resumed["version"] == 4, "the login and the modal are one version")
        #expect(resumed.features == ["home.first", "modal"])
        #expect(resumed["top"]["params"] == ["content": "Hi"])
        #expect(resumed["pendingActions"] == [])
        #expect(resumed["handledBy"] == "login")
        #expect(resumed["transition"]["type"] == "present")
        #expect(resumed["transition"]["from"]["feature"] == "login.form")
        #expect(try client.state(guarded).json == resumed)

        // The login is the user's: their next session in the variant opens the modal at once.
        let user = guarded.state["userId"].stringValue ?? ""
        let state = try test.direct.send("GET", "/v1/users/\(user)", headers: Self.admin).json
        #expect(state["state"]["loggedIn"] == true, "\(state)")
        let next = try client.create(userId: user)
        #expect(try client.apply(next, #"{"type":"home.presentModal","params":{"content":"Yo"}}"#).features == ["home.first", "modal"])

        // A reopened server reads the waiting action back from storage, and cancelling drops it.
        let other = try Self.atHome(client, variant: "guarded", index: 1)
        try client.apply(other, #"{"type":"home.presentModal","params":{"content":"Hi"}}"#)
        let reopened = try test.reopened()
        defer { withExtendedLifetime(reopened) {} }
        let again = SessionClient(sender: reopened.direct)
        #expect(try again.state(other).json["pendingActions"][0]["action"]["type"] == "home.presentModal")
        let cancelled = try again.apply(other, #"{"type":"login.cancel"}"#)
        #expect(cancelled.features == ["home.first"])
        #expect(cancelled["pendingActions"] == [])
    }

    /// A hand-off is stored like a screen: an app killed during its purchase sheet finds it on
    /// top; a failed purchase returns its reason to the offer, and the transition names the offer.
    @Test func handoffAndResultThroughTheAPI() throws {
        let test = try Self.server()
        let client = SessionClient(sender: test.direct)
        let session = try Self.atHome(client, variant: "guarded")
        try client.apply(session, #"{"type":"home.presentModal","params":{"content":"Hi"}}"#)
        try client.apply(session, #"{"type":"login.submit"}"#)
        try client.apply(session, #"{"type":"modal.shop"}"#)
        let offer = try client.apply(session, #"{"type":"store.buy","params":{"productId":"pro"}}"#)
        #expect(offer["top"]["handoff"] == "purchase")
        #expect(offer["top"]["params"] == ["productId": "pro"])
        let reopened = try test.reopened()
        defer { withExtendedLifetime(reopened) {} }
        let again = SessionClient(sender: reopened.direct)
        let reloaded = try again.state(session).json
        #expect(reloaded["top"]["handoff"] == "purchase")
        #expect(reloaded == offer)
        let refused = try again.act(session, #"{"type":"purchase.failed"}"#)
        #expect(refused.status == 400, "a missing outcome param is the client's mistake")
        #expect(refused.text.contains("/params/reason"), "\(refused.text)")
        let failed = try again.apply(session, #"{"type":"purchase.failed","params":{"reason":"declined"}}"#)
        #expect(failed["top"]["feature"] == "store.offer")
        #expect(failed["top"]["params"] == ["error": "declined"])
        #expect(failed["transition"]["result"] == ["id": failed["top"]["id"], "feature": "store.offer", "into": "error"])
        #expect(failed["top"].objectValue?["handoff"] == nil)
    }

    /// Predictions and dry runs foretell the resumed action and the result exactly, and the
    /// engine on the session's bundle answers byte for byte what the server answers.
    @Test func predictionsAndBundlesCoverThem() throws {
        let test = try Self.server()
        let client = SessionClient(sender: test.direct)
        let session = try Self.atHome(client, variant: "guarded")
        try client.apply(session, #"{"type":"home.presentModal","params":{"content":"Hi"}}"#)
        let read = try client.sender.send("GET", "/v1/sessions/\(session.id)?predict=true", headers: session.auth).json
        let predictions = read["predictions"].arrayValue ?? []
        let submit = try #require(predictions.first { $0["action"]["type"] == "login.submit" })
        #expect(submit["state"].features == ["home.first", "modal"])

        let fetched = try client.sender.send("GET", "/v1/sessions/\(session.id)/bundle", headers: session.auth)
        try #require(fetched.status == 200, "\(fetched.text)")
        let bundle = try SessionBundle(json: try JSONParser.parse(fetched.body))
        #expect(bundle.state.tree.pendingActions.map(\.action.type) == ["home.presentModal"])
        let local = try bundle.state.applying(FlowAction(type: "login.submit")).next

        let answer = try client.act(session, #"{"type":"login.submit"}"#, headers: [("If-Match", "\"3\"")])
        #expect(answer.status == 200)
        #expect(answer.text == String(decoding: local.document(), as: UTF8.self))
        #expect(answer.json == submit["state"])

        try client.apply(session, #"{"type":"modal.shop"}"#)
        try client.apply(session, #"{"type":"store.buy","params":{"productId":"pro"}}"#)
        let body = #"{"type":"purchase.failed","params":{"reason":"declined"}}"#
        let dry = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions?dryRun=true", body: body, headers: session.auth)
        let bundled = try SessionBundle(json: try JSONParser.parse(
            try client.sender.send("GET", "/v1/sessions/\(session.id)/bundle", headers: session.auth).body))
        let offline = try bundled.state.applying(FlowAction(type: "purchase.failed", params: ["reason": "declined"])).next
        let real = try client.act(session, body)
        #expect(dry.json == real.json)
        #expect(real.text == String(decoding: offline.document(), as: UTF8.self))
        #expect(real.json["transition"]["result"]["feature"] == "store.offer")
    }
}

// A `setUser` of null removes the key, as the stored user state (a JSON merge patch) does: an
// action's own predictions, a read's predictions, the next action and the engine on the
// session's bundle all judge the user without it.
import FlowEngine
import HTTPTestClient
import JSON
import Testing

struct UserStateNullTests {
    static let admin = FlowAdminTests.admin

    /// A root that records a nickname, forgets it with null, and shows which of the three a
    /// condition sees: missing, null, or set.
    static let app = #"""
        {"name": "app", "kind": "stacked", "initial": ["who.start"],
         "on": {"who.set": [{"do": [{"setUser": {"nickname": "kim"}}]}],
                "who.forget": [{"do": [{"setUser": {"nickname": null}}]}],
                "who.setThenForget": [{"do": [{"setUser": {"nickname": "x"}}, {"setUser": {"nickname": null}}]}],
                "who.forgetThenSet": [{"do": [{"setUser": {"nickname": null}}, {"setUser": {"nickname": "y"}}]}],
                "who.composed": [{"do": [{"setUser": {"caf\u00e9": "composed"}}]}],
                "who.decomposed": [{"do": [{"setUser": {"cafe\u0301": "decomposed"}}]}],
                "who.forgetDecomposed": [{"do": [{"setUser": {"cafe\u0301": null}}]}],
                "who.resetDecomposed": [{"do": [{"setUser": {"cafe\u0301": null}}, {"setUser": {"cafe\u0301": "again"}}]}],
                "who.ask": [{"when": {"user": "nickname", "exists": false}, "do": [{"push": "who.anonymous"}]},
                            {"when": {"user": "nickname", "is": null}, "do": [{"push": "who.cleared"}]},
                            {"do": [{"push": "who.named"}]}]}}
        """#

    /// A server running `root` (this suite's `app` unless told) as its live root flow, and a client of it.
    static func server(root: String = app) throws -> (TestApp, SessionClient) {
        let test = try TestApp()
        let put = try test.direct.send("PUT", "/v1/flows/app?activate=true", body: root, headers: admin)
        try #require(put.status == 201, "\(put.text)")
        return (test, SessionClient(sender: test.direct))
    }

    static func prediction(_ type: String, in state: JSONValue) throws -> JSONValue {
        try #require((state["predictions"].arrayValue ?? []).first { $0["action"]["type"].stringValue == type })["state"]
    }

    @Test func aNullRemovesTheKeyForEveryoneWhoJudgesTheUser() throws {
        let (test, client) = try Self.server()
        let session = try client.create(userId: "forgetful")
        try #require(session.state["top"]["feature"] == "who.start")
        let named = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions?predict=true",
                                           body: #"{"type":"who.set"}"#, headers: session.auth)
        try #require(named.status == 200, "\(named.text)")
        #expect(try Self.prediction("who.ask", in: named.json)["top"]["feature"] == "who.named")

        let forgot = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions?predict=true",
                                            body: #"{"type":"who.forget"}"#, headers: session.auth)
        try #require(forgot.status == 200, "\(forgot.text)")
        let predicted = try Self.prediction("who.ask", in: forgot.json)
        #expect(predicted["top"]["feature"] == "who.anonymous", "the action's own predictions: \(predicted["top"])")
        let read = try client.sender.send("GET", "/v1/sessions/\(session.id)?predict=true", headers: session.auth)
        let readPredictions: JSONValue = read.json["predictions"], actionPredictions: JSONValue = forgot.json["predictions"]
        #expect(readPredictions == actionPredictions, "a read predicts what the action predicted")

        let user = try test.direct.send("GET", "/v1/users/forgetful", headers: Self.admin)
        try #require(user.status == 200, "\(user.text)")
        let stored = try #require(user.json["state"].objectValue, "\(user.text)")
        #expect(stored["nickname"] == nil, "stored without the key: \(user.text)")

        let bundle = try SessionBundle(json: try JSONParser.parse(
            try client.sender.send("GET", "/v1/sessions/\(session.id)/bundle", headers: session.auth).body))
        let offline = try bundle.state.applying(FlowAction(type: "who.ask")).next
        let asked = try client.act(session, #"{"type":"who.ask"}"#)
        #expect(asked.json["top"]["feature"] == "who.anonymous")
        #expect(asked.json == predicted)
        #expect(asked.text == String(decoding: offline.document(), as: UTF8.self), "the engine on the bundle")
    }

    /// An action that sets one key twice commits, and its last value stands: in the store, in
    /// the cache and for the next action.
    @Test func aKeySetTwiceInOneActionKeepsItsLastValue() throws {
        let (test, client) = try Self.server()
        let session = try client.create(userId: "twice")
        let steps: [(type: String, nickname: JSONValue?)] = [("who.forgetThenSet", "y"), ("who.setThenForget", .none), ("who.forgetThenSet", "y")]
        for (type, expected) in steps {
            try client.apply(session, #"{"type":"\#(type)"}"#)
            let user = try test.direct.send("GET", "/v1/users/twice", headers: Self.admin)
            try #require(user.status == 200, "\(user.text)")
            #expect(user.json["state"].objectValue?["nickname"] == expected, "\(type): \(user.text)")
        }
        let asked = try client.apply(session, #"{"type":"who.ask"}"#)
        #expect(asked["top"]["feature"] == "who.named")
    }

    /// A key written in either Unicode normal form is one key, as Swift compares strings: the
    /// store keeps one spelling of it (PostgreSQL's jsonb, which compares bytes, kept both, and
    /// the server could then not read the user), a later value replaces it, and a null removes it.
    @Test func aKeyInEitherNormalFormIsOneKey() throws {
        let (test, client) = try Self.server()
        let session = try client.create(userId: "café")
        // A null and a value in the other spelling within one action (`who.resetDecomposed`)
        // leave the key as it was spelled, in the cache too, whose spelling the next patch takes.
        let steps: [(type: String, value: JSONValue?)] = [
            ("who.composed", "composed"), ("who.resetDecomposed", "again"), ("who.decomposed", "decomposed"),
            ("who.forgetDecomposed", .none), ("who.decomposed", "decomposed"), ("who.composed", "composed"),
        ]
        for (type, expected) in steps {
            try client.apply(session, #"{"type":"\#(type)"}"#)
            let user = try test.direct.send("GET", "/v1/users/caf%C3%A9", headers: Self.admin)
            try #require(user.status == 200, "\(user.text)")
            let state = try #require(try JSONParser.parse(user.body)["state"].objectValue, "\(type): \(user.text)")
            #expect(state.count == (expected == nil ? 0 : 1), "\(type): \(user.text)")
            #expect(state["caf\u{e9}"] == expected, "\(type): \(user.text)")
        }
        // After a restart, the next session of the user reads the one key back from the store.
        let restarted = try test.reopened()
        let reader = SessionClient(sender: restarted.direct)
        let again = try reader.create(userId: "café")
        let read = try reader.sender.send("GET", "/v1/sessions/\(again.id)/bundle", headers: again.auth)
        let user = try SessionBundle(json: try JSONParser.parse(read.body)).state.context.user
        #expect(user.count == 1 && user["cafe\u{301}"] == "composed", "\(user)")
    }

    /// In the app, without the server: a bundle's engine that sets a key to null and asks again
    /// judges the user as the server will.
    @Test func theEngineAloneRemovesTheKey() throws {
        var state = try #require(try Self.bundleState())
        state = try state.applying(FlowAction(type: "who.set")).next
        #expect(state.context.user["nickname"] == "kim")
        state = try state.applying(FlowAction(type: "who.forget")).next
        #expect(state.context.user.keys.contains("nickname") == false)
        #expect(try state.applying(FlowAction(type: "who.ask")).next.tree.top?.feature == "who.anonymous")
    }

    static func bundleState() throws -> SessionState? {
        let (test, client) = try server()
        defer { withExtendedLifetime(test) {} }  // the server answers while its app lives
        let session = try client.create(userId: "offline")
        let fetched = try client.sender.send("GET", "/v1/sessions/\(session.id)/bundle", headers: session.auth)
        return try SessionBundle(json: try JSONParser.parse(fetched.body)).state
    }
}

// A user's state cannot hold U+0000: PostgreSQL's jsonb refuses it, so a client's param with it
// that a `setUser` would store failed the commit there (503, every time the tap was sent again)
// while SQLite stored it. The engine now refuses such an action on every store alike: a 400
// `invalid-params` at the param, nothing applied, and the same tap without it applies.
import FlowEngine
import HTTPTestClient
import JSON
import Testing

struct UserStateNulTests {
    static let admin = FlowAdminTests.admin

    static let app = #"""
        {"name": "app", "kind": "stacked", "initial": ["who.start"],
         "on": {"who.name": [{"params": {"name": "string"}, "do": [{"setUser": {"nickname": {"$param": "name"}}}]}],
                "who.tags": [{"params": {"tags": "object"}, "do": [{"setUser": {"tags": {"$param": "tags"}}}]}]}}
        """#

    @Test func aParamWithNulIsRefusedAndNothingIsStored() throws {
        let (test, client) = try UserStateNullTests.server(root: Self.app)
        let session = try client.create(userId: "nul")
        for (body, param) in [(#"{"type":"who.name","params":{"name":"a\u0000b"}}"#, "name"),
                              (#"{"type":"who.tags","params":{"tags":{"x\u0000":true}}}"#, "tags"),
                              (#"{"type":"who.tags","params":{"tags":{"list":["ok","\u0000"]}}}"#, "tags")] {
            let refused = try client.act(session, body)
            #expect(refused.status == 400, "\(body): \(refused.text)")
            #expect(refused.headers["Content-Type"] == "application/problem+json")
            #expect(refused.json["code"] == "invalid-params")
            #expect((refused.json["errors"].arrayValue ?? []).first?["pointer"] == .string("/params/\(param)"), "\(refused.text)")
        }
        // As an item of an offline batch too: refused there, and the batch stops.
        let batch = try client.batch(session, [Tap(key: "n-1", version: 0, action: #"{"type":"who.name","params":{"name":"\u0000"}}"#)])
        #expect(batch.status == 200, "\(batch.text)")
        #expect(batch.json.batchStatuses == ["refused"])
        #expect(batch.json["refused"]["code"] == "invalid-params")

        let user = try test.direct.send("GET", "/v1/users/nul", headers: Self.admin)
        #expect(user.json["state"] == [:], "\(user.text)")
        #expect(try client.log(session).isEmpty)
        let named = try client.apply(session, #"{"type":"who.name","params":{"name":"kim"}}"#)
        #expect(named["version"] == 1)
        #expect(try test.direct.send("GET", "/v1/users/nul", headers: Self.admin).json["state"] == ["nickname": "kim"])
    }

    /// A definition whose `setUser` writes U+0000 as it is would have every action of that rule
    /// refused: it is refused at upload instead, at the key or string, and the live flow stays.
    @Test func aLiteralNulIsRefusedAtUpload() throws {
        let (test, client) = try UserStateNullTests.server(root: Self.app)
        let broken = #"""
            {"name": "app", "kind": "stacked", "initial": ["who.start"],
             "on": {"who.greet": [{"do": [{"setUser": {"greeting": "hi\u0000", "seen\u0000": true}}]}]}}
            """#
        let live: JSONValue = try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"]
        let put = try test.direct.send("PUT", "/v1/flows/app?activate=true", body: broken, headers: Self.admin)
        #expect(put.status == 422, "\(put.text)")
        #expect(put.headers["Content-Type"] == "application/problem+json")
        #expect(put.json["code"] == "invalid-definition")
        let pointers = (put.json["errors"].arrayValue ?? []).compactMap { $0["pointer"].stringValue }
        #expect(pointers == ["/on/who.greet/0/do/0/setUser/greeting", "/on/who.greet/0/do/0/setUser/seen\u{0}"], "\(put.text)")
        #expect(live.integerValue != nil, "\(live)")
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == live)
        let session = try client.create(userId: "nul-upload")
        #expect(try client.apply(session, #"{"type":"who.name","params":{"name":"kim"}}"#)["version"] == 1)
    }

    /// A definition stored before uploads were checked, whose `setUser` writes U+0000 as it is,
    /// still loads after a restart and serves its other rules; the broken rule's actions are
    /// refused one by one, as they were, and nothing of them is stored.
    @Test func aStoredDefinitionWithANulStillServes() throws {
        let (first, _) = try UserStateNullTests.server(root: Self.app)
        let stored = #"""
            {"name": "app", "kind": "stacked", "initial": ["who.start"],
             "on": {"who.name": [{"params": {"name": "string"}, "do": [{"setUser": {"nickname": {"$param": "name"}}}]}],
                    "who.greet": [{"do": [{"setUser": {"greeting": "hi\u0000"}}]}]}}
            """#
        _ = try first.store.addFlowVersion(name: "app", definition: stored, activate: true, audit: nil)
        let test = try first.reopened()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "nul-stored")
        let greeted = try client.act(session, #"{"type":"who.greet"}"#)
        #expect(greeted.status == 422 && greeted.json["code"] == "refused", "\(greeted.text)")
        #expect(greeted.headers["Content-Type"] == "application/problem+json")
        #expect(try client.apply(session, #"{"type":"who.name","params":{"name":"kim"}}"#)["version"] == 1)
        #expect(try test.direct.send("GET", "/v1/users/nul-stored", headers: Self.admin).json["state"] == ["nickname": "kim"])
    }
}

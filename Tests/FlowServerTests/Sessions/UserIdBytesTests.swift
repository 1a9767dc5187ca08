// User ids are compared as the stores compare them, byte for byte: `café` composed (NFC) and
// decomposed (NFD) are two users in SQLite and PostgreSQL, so they are two users in the cache of
// user states too, where Swift's `String` equality would make them one.
import FlowEngine
import HTTPTestClient
import JSON
import Testing

struct UserIdBytesTests {
    static let admin = FlowAdminTests.admin

    @Test func idsInTwoNormalFormsAreTwoUsers() throws {
        let (test, client) = try UserStateNullTests.server()
        let composed = try client.create(userId: "caf\u{e9}")
        try client.apply(composed, #"{"type":"who.set"}"#)

        let decomposed = try client.create(userId: "cafe\u{301}")
        let fetched = try client.sender.send("GET", "/v1/sessions/\(decomposed.id)/bundle", headers: decomposed.auth)
        let user = try SessionBundle(json: try JSONParser.parse(fetched.body)).state.context.user
        #expect(user.isEmpty, "a new user's session holds another user's state: \(user)")
        // The first user's session still reads its own user (on a shared database the second
        // session's fresh read had replaced the state held for both).
        let first = try client.sender.send("GET", "/v1/sessions/\(composed.id)/bundle", headers: composed.auth)
        #expect(try SessionBundle(json: try JSONParser.parse(first.body)).state.context.user == ["nickname": "kim"])
        #expect(try client.apply(decomposed, #"{"type":"who.ask"}"#)["top"]["feature"] == "who.anonymous")
        try client.apply(decomposed, #"{"type":"who.forgetThenSet"}"#)

        #expect(try client.apply(composed, #"{"type":"who.ask"}"#)["top"]["feature"] == "who.named")
        for (path, nickname) in [("caf%C3%A9", "kim"), ("cafe%CC%81", "y")] {
            let stored = try test.direct.send("GET", "/v1/users/\(path)", headers: Self.admin)
            try #require(stored.status == 200, "\(path): \(stored.text)")
            #expect(stored.json["state"] == ["nickname": .string(nickname)], "\(path): \(stored.text)")
        }
        let again = try client.create(userId: "caf\u{e9}")
        let bundle = try client.sender.send("GET", "/v1/sessions/\(again.id)/bundle", headers: again.auth)
        #expect(try SessionBundle(json: try JSONParser.parse(bundle.body)).state.context.user == ["nickname": "kim"])
    }
}

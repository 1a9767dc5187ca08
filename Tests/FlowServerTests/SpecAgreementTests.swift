// Where schemathesis (every check) found the server and openapi.yaml disagreeing, the server side of
// the agreement: what the spec allows is accepted, what it forbids is refused.
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import Testing

struct SpecAgreementTests {
    static let admin = FlowAdminTests.admin

    /// A method a path does not serve is 405 with `Allow` naming the methods of that path's own
    /// routes, as openapi.yaml lists them: `/v1/flags/evaluate` is POST only, although
    /// `PUT /v1/flags/{key}` and `GET /v1/flags/{key}` also match it (they answer for the name).
    @Test func allowNamesThePathsOwnMethods() throws {
        let test = try TestApp()
        let routes = test.app.routes
        // A method no route serves (PATCH was, until PATCH /v1/experiments/{key}).
        #expect(!routes.contains { $0.method == "TRACE" })
        var checked = 0
        try test.withLiveServer { sender in
            for pattern in Set(routes.map(\.pattern)) {
                let path = pattern.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.hasPrefix("{") ? "x1" : String($0) }.joined(separator: "/")
                let expected = routes.filter { $0.pattern == pattern }.flatMap { $0.method == "GET" ? ["GET", "HEAD"] : [$0.method] }
                let response = try sender.send("TRACE", path, headers: Self.admin)
                #expect(response.status == 405, "TRACE \(path)")
                #expect(response.headers["Allow"] == expected.joined(separator: ", "), "TRACE \(path)")
                checked += 1
            }
        }
        #expect(checked >= 30)
        let evaluate = try test.direct.send("OPTIONS", "/v1/flags/evaluate", headers: Self.admin)
        #expect(evaluate.headers["Allow"]?.contains("PUT") == false)
        #expect(evaluate.headers["Allow"]?.contains("POST") == true)
    }

    /// `attributes: null` is no attributes, as the spec's `nullable` says (it was 400, "must be an
    /// object; found null": `nil` in the closure read as JSON null).
    @Test func evaluateTakesNullAttributesAsNone() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let response = try sender.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"u","attributes":null}"#, headers: Self.admin)
            #expect(response.status == 200, "\(response.text)")
            let none = try sender.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"u"}"#, headers: Self.admin)
            #expect(response.text == none.text)
            #expect(try sender.send("POST", "/v1/flags/evaluate", body: #"{"attributes":3}"#, headers: Self.admin).status == 400)
        }
    }

    /// Length limits count characters (Unicode scalars), as JSON Schema's `maxLength` does, not
    /// UTF-8 bytes: 100 characters of `é` (200 bytes) make a client key name, 101 do not.
    @Test func clientKeyNameLimitCountsCharacters() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let name = String(repeating: "é", count: 100)
            #expect(try sender.send("POST", "/v1/client-keys", body: #"{"name":"\#(name)"}"#, headers: Self.admin).status == 201)
            let long = try sender.send("POST", "/v1/client-keys", body: #"{"name":"\#(name)é"}"#, headers: Self.admin)
            #expect(long.status == 400)
            #expect(long.json["errors"][0]["pointer"].stringValue == "/name")
            #expect(try sender.send("POST", "/v1/client-keys", body: #"{"name":"a\u0001"}"#, headers: Self.admin).status == 400)
        }
    }

    /// A user id is 1 to 128 characters (a 128-`é` id is 256 bytes), at session creation and at
    /// link resolution alike; 129 characters are refused at both. The same for `userHash`.
    @Test func userIdLimitCountsCharacters() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let userId = String(repeating: "é", count: 128)
            let hash = String(repeating: "é", count: 128)
            let created = try sender.send("POST", "/v1/sessions", body: #"{"userId":"\#(userId)","userHash":"\#(hash)"}"#)
            #expect(created.status == 201, "\(created.text)")
            #expect(try sender.send("POST", "/v1/sessions", body: #"{"userId":"\#(userId)é"}"#).status == 400)
            #expect(try sender.send("POST", "/v1/sessions", body: #"{"userId":"u","userHash":"\#(hash)é"}"#).status == 400)
            let encoded = userId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let resolved = try sender.send("GET", "/v1/links/resolve?uri=/home&userId=\(encoded)", headers: Self.admin)
            #expect(resolved.status == 200, "\(resolved.text)")
            #expect(try sender.send("GET", "/v1/links/resolve?uri=/home&userId=\(encoded)%C3%A9", headers: Self.admin).status == 400)
        }
    }

    /// A flow test scenario's name is up to 200 characters, not bytes; its user id up to 128.
    @Test func scenarioLimitsCountCharacters() throws {
        let test = try TestApp()
        let name = String(repeating: "é", count: 200)
        let body = #"{"scenarios":[{"name":"\#(name)","steps":[]}]}"#
        let response = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: body, headers: Self.admin)
        #expect(response.status == 200, "\(response.text)")
        let long = #"{"scenarios":[{"name":"\#(name)é","steps":[]}]}"#
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: long, headers: Self.admin).status == 422)
        // The same for a scenario's user id: 128 characters.
        let userId = String(repeating: "é", count: 128)
        let user = #"{"scenarios":[{"name":"u","context":{"userId":"\#(userId)"},"steps":[]}]}"#
        let answered = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: user, headers: Self.admin)
        #expect(answered.status == 200, "\(answered.text)")
        let longUser = #"{"scenarios":[{"name":"u","context":{"userId":"\#(userId)é"},"steps":[]}]}"#
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: longUser, headers: Self.admin).status == 422)
    }
}

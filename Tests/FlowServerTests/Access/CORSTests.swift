// CORS through libmicrohttpd: preflights and headers for allowed origins on OFREP and the
// session routes, nothing for other origins, admin routes, or when no origin is configured.
@testable import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct CORSTests {
    static let app = "https://app.example.com"

    static func allowing(_ list: String) throws -> TestApp {
        var cors = CORSOptions()
        cors.origins = try CORSOptions.parse(list)
        return try TestApp(cors: cors)
    }

    static func preflight(_ sender: SocketSender, _ path: String, origin: String, method: String = "POST",
                          headers: String = "authorization, content-type") throws -> Response {
        try sender.send("OPTIONS", path, headers: [
            ("Origin", origin), ("Access-Control-Request-Method", method), ("Access-Control-Request-Headers", headers),
        ])
    }

    static func commaList(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// A preflight from an allowed origin to OFREP or a session route is 204 with the route's
    /// methods, every header those routes read, and a max age.
    @Test func preflightsFromAllowedOriginsAreAnswered() throws {
        let test = try Self.allowing("https://APP.example.com:443/, http://localhost:3000")
        try test.withLiveServer { sender in
            let session = try SessionClient(sender: sender).create(userId: "web")
            let paths = [
                ("/ofrep/v1/evaluate/flags", ["post"]),
                ("/ofrep/v1/evaluate/flags/eu-face-scan", ["post"]),
                ("/v1/sessions", ["post"]),
                ("/v1/sessions/\(session.id)", ["get", "head", "delete"]),
                ("/v1/sessions/\(session.id)/actions", ["post", "get", "head"]),
                ("/v1/sessions/\(session.id)/events", ["get", "head"]),
                ("/v1/sessions/\(session.id)/events/ticket", ["post"]),
            ]
            for (path, methods) in paths {
                let response = try Self.preflight(sender, path, origin: Self.app)
                #expect(response.status == 204, "\(path)")
                #expect(response.headers["Access-Control-Allow-Origin"] == Self.app)
                #expect(Set(Self.commaList(response.headers["Access-Control-Allow-Methods"])) == Set(methods), "\(path)")
                let allowed = Set(Self.commaList(response.headers["Access-Control-Allow-Headers"]))
                #expect(allowed.isSuperset(of: ["authorization", "content-type", "if-match", "if-none-match", "idempotency-key",
                                                "x-api-key", "last-event-id"]))
                #expect(response.headers["Access-Control-Max-Age"] == "7200")
                #expect(Self.commaList(response.headers["Vary"]).contains("origin"))
                #expect(response.headers["Access-Control-Allow-Credentials"] == nil)
            }
            #expect(try Self.preflight(sender, "/v1/sessions", origin: "http://localhost:3000").status == 204)
        }
    }

    /// Answers to an allowed origin carry it, errors and late answers (an action waits for its
    /// commit) included, and expose the headers a client reads; an event stream too.
    @Test func answersToAllowedOriginsCarryIt() throws {
        let test = try Self.allowing(Self.app)
        try test.withLiveServer { sender in
            let origin = [("Origin", Self.app)]
            let created = try sender.send("POST", "/v1/sessions", body: #"{"userId":"web"}"#, headers: origin)
            #expect(created.status == 201)
            #expect(created.headers["Access-Control-Allow-Origin"] == Self.app)
            let exposed = Set(Self.commaList(created.headers["Access-Control-Expose-Headers"]))
            #expect(exposed.isSuperset(of: ["etag", "location", "retry-after", "x-request-id"]))
            #expect(Self.commaList(created.headers["Vary"]).contains("origin"))
            let id = created.json["session"]["id"].stringValue ?? ""
            let auth = [("Authorization", "Bearer \(created.json["session"]["token"].stringValue ?? "")")]

            let acted = try sender.send("POST", "/v1/sessions/\(id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                        headers: origin + auth)
            #expect(acted.status == 200)
            #expect(acted.headers["Access-Control-Allow-Origin"] == Self.app)
            let failures = [
                try sender.send("GET", "/v1/sessions/\(id)", headers: origin),
                try sender.send("GET", "/v1/sessions/s_none", headers: origin + auth),
                try sender.send("POST", "/v1/sessions/\(id)/actions", body: "{", headers: origin + auth),
                try sender.send("POST", "/ofrep/v1/evaluate/flags", body: #"{"context":{}}"#, headers: origin),
                try sender.send("PUT", "/v1/sessions/\(id)", headers: origin + auth),
            ]
            #expect(failures.map(\.status) == [401, 404, 400, 401, 405])
            for failure in failures { #expect(failure.headers["Access-Control-Allow-Origin"] == Self.app) }

            let ticket = try sender.send("POST", "/v1/sessions/\(id)/events/ticket", headers: origin + auth)
            let stream = try EventStreamClient(port: sender.port, path: "/v1/sessions/\(id)/events?ticket=\(ticket.json["ticket"].stringValue ?? "")",
                                               headers: origin)
            #expect(stream.status == 200)
            #expect(stream.header("Access-Control-Allow-Origin") == Self.app)
            #expect(try stream.next()?.id == "1")
        }
    }

    /// Another origin gets no CORS header (the browser blocks it), nor does any origin on an
    /// admin route; a request without `Origin` is answered as before.
    @Test func otherOriginsAndAdminRoutesGetNone() throws {
        let test = try Self.allowing(Self.app)
        try test.withLiveServer { sender in
            for origin in ["https://evil.example.com", "https://app.example.com.evil.example", "http://app.example.com", "null"] {
                let preflight = try Self.preflight(sender, "/v1/sessions", origin: origin)
                #expect(preflight.status == 405, "\(origin)")
                #expect(preflight.headers["Access-Control-Allow-Origin"] == nil)
                let created = try sender.send("POST", "/v1/sessions", body: #"{"userId":"web"}"#, headers: [("Origin", origin)])
                #expect(created.status == 201)
                #expect(created.headers["Access-Control-Allow-Origin"] == nil)
                #expect(created.headers["Access-Control-Expose-Headers"] == nil)
                #expect(Self.commaList(created.headers["Vary"]).contains("origin"), "caches must keep answers per origin")
            }
            for path in ["/v1/flags", "/v1/flows", "/v1/client-keys", "/healthz", "/v1/users/ada"] {
                let preflight = try Self.preflight(sender, path, origin: Self.app, method: "GET")
                #expect(preflight.status == 405, "\(path)")
                #expect(preflight.headers["Access-Control-Allow-Origin"] == nil)
                let answer = try sender.send("GET", path, headers: [("Origin", Self.app)] + FlowAdminTests.admin)
                #expect(answer.headers["Access-Control-Allow-Origin"] == nil, "\(path)")
            }
            let plain = try sender.send("OPTIONS", "/v1/sessions")
            #expect(plain.status == 405)
            #expect(plain.headers["Allow"] == "POST")
            let unknown = try Self.preflight(sender, "/v1/sessions/s_x/nothing", origin: Self.app)
            #expect(unknown.status == 404)
        }
    }

    /// `*` lets any origin in (echoed, never `*` itself); without the option nothing changes.
    @Test func anyOriginOrNone() throws {
        let any = try Self.allowing("*")
        try any.withLiveServer { sender in
            let preflight = try Self.preflight(sender, "/ofrep/v1/evaluate/flags", origin: "https://anyone.example")
            #expect(preflight.status == 204)
            #expect(preflight.headers["Access-Control-Allow-Origin"] == "https://anyone.example")
        }
        let none = try TestApp()
        try none.withLiveServer { sender in
            let preflight = try Self.preflight(sender, "/ofrep/v1/evaluate/flags", origin: Self.app)
            #expect(preflight.status == 405)
            let created = try sender.send("POST", "/v1/sessions", body: #"{"userId":"web"}"#, headers: [("Origin", Self.app)])
            #expect(created.headers["Access-Control-Allow-Origin"] == nil)
            #expect(!(created.headers["Vary"] ?? "").contains("Origin"))  // gzip's Accept-Encoding may be there
        }
    }

    /// Origins are written as browsers send them; anything else is refused with the reason.
    @Test(arguments: [
        ("https://App.Example.com", ["https://app.example.com"]),
        ("https://a.example:443/, http://b.example:80, http://c.example:8080", ["https://a.example", "http://b.example", "http://c.example:8080"]),
        (" * ", ["*"]),
        ("", []),
    ])
    func originListsAreNormalized(list: String, expected: [String]) throws {
        #expect(try CORSOptions.parse(list) == expected)
    }

    @Test(arguments: ["app.example.com", "https://app.example.com/path", "ftp://app.example.com", "https://", "*, https://a.example",
                      "https://user@app.example.com", "null"])
    func badOriginListsAreRefused(list: String) {
        #expect(throws: CORSOptions.InvalidOrigin.self) { try CORSOptions.parse(list) }
    }
}

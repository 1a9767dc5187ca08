// HTTP as RFCs and browsers read it: Cache-Control per route, honest 304s, gzip, problem codes,
// reserved names; through the application and through a real socket.
@testable import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Testing

@Suite(.serialized)
struct HTTPSemanticsTests {
    static let admin = FlowAdminTests.admin

    /// The README's table, written out again here: routes whose answers may be kept; every
    /// other route answers `no-store`.
    static let expectedCacheControl: [String: String] = [
        "/openapi.yaml": "no-cache",
        "/": "no-cache",
        "/playground/{file}": "no-cache",
        "/sdk/{file}": "no-cache",
        "/sdk/engine/{file}": "no-cache",
        "/sdk/client/{file}": "no-cache",
        "/v1/schemas": "no-cache",
        "/v1/schemas/{name}": "no-cache",
        "/api/features/{clientKey}": "no-cache",
        "/v1/sessions/{id}/bundle": "private, no-cache",
    ]

    /// Every GET route of the router, called with real ids, keys and names, answers with the
    /// Cache-Control the table gives it.
    @Test func everyGetRouteHasTheTablesCacheControl() throws {
        let test = try TestApp()
        let session = try SessionClient(sender: test.direct).create(userId: "cache-user")
        let key = try AccessTests.makeKey(test)
        let values = ["id": session.id, "userId": "cache-user", "name": "onboarding", "version": "1", "key": "no-such-flag",
                      "clientKey": key.key, "file": "app.js"]
        let getRoutes = test.app.routes.filter { $0.method == "GET" }
        #expect(getRoutes.count >= 25)
        for route in getRoutes {
            var path = route.pattern
            for (name, value) in values { path = path.replacingOccurrences(of: "{\(name)}", with: value) }
            #expect(!path.contains("{"), "no value for a parameter of \(route.pattern)")
            let query: [(name: String, value: String)] = route.pattern == "/v1/links/resolve" ? [("uri", "/home")] : []
            var request = Request(method: "GET", path: path, query: query)
            for (name, value) in session.auth + Self.admin where !path.hasPrefix("/api/") {
                // The admin token wins on admin routes; session routes read the session token.
                if name == "Authorization", route.pattern.hasPrefix("/v1/sessions") {
                    request.headers["Authorization"] = "Bearer \(session.token)"
                } else if request.headers[name] == nil {
                    request.headers.add(name: name, value: value)
                }
            }
            let response = test.app.handle(request).settled()
            let expected = Self.expectedCacheControl[route.pattern] ?? "no-store"
            #expect(response.headers.values("Cache-Control") == [expected],
                    "GET \(route.pattern) answered \(response.status) with Cache-Control \(response.headers.values("Cache-Control"))")
            response.stream?.finish()
        }
    }

    /// The session state's 304, through a real socket, says the length of the 200 (not 0), and
    /// keeps Cache-Control and the ETag; the same for the bundle and the GrowthBook payload.
    @Test func notModifiedAnswersCarryTheFullLength() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let session = try SessionClient(sender: sender).create(userId: "u-304")
            let key = try AccessTests.makeKey(test)
            for (path, auth) in [("/v1/sessions/\(session.id)", session.auth), ("/v1/sessions/\(session.id)/bundle", session.auth),
                                 ("/api/features/\(key.key)", []), ("/openapi.yaml", []), ("/playground/app.js", [])] {
                let full = try sender.send("GET", path, headers: auth)
                #expect(full.status == 200, "\(path): \(full.text)")
                let etag = try #require(full.headers["ETag"], "\(path) has no ETag")
                let connection = try RawConnection(port: server.port)
                var head = "GET \(path) HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(etag)\r\n"
                for (name, value) in auth { head += "\(name): \(value)\r\n" }
                try connection.send(head + "\r\n")
                let answer = try connection.readResponse()
                let headers = Dictionary(answer.headers.map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
                #expect(answer.status == 304, "\(path)")
                #expect(headers["content-length"] == String(full.body.count), "\(path): \(headers)")
                #expect(headers["etag"] == etag)
                #expect(headers["cache-control"] == full.headers["Cache-Control"])
            }
        }
    }

    /// Large answers go gzip-compressed to a client that asks, and decompress to the identity
    /// bytes: the OpenAPI document, the GrowthBook payload, the session state. The coded ETag
    /// revalidates (304) and is accepted by If-Match on an action.
    @Test func gzipRoundTripsThroughASocket() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let session = try SessionClient(sender: sender).create(userId: "u-gz")
            let key = try AccessTests.makeKey(test)
            for (path, auth) in [("/openapi.yaml", []), ("/api/features/\(key.key)", []), ("/v1/sessions/\(session.id)", session.auth),
                                 ("/playground/app.js", [])] {
                let identity = try sender.send("GET", path, headers: auth)
                let coded = try sender.send("GET", path, headers: auth + [("Accept-Encoding", "gzip")])
                #expect(identity.headers["Vary"] == "Accept-Encoding", "\(path)")
                #expect(coded.headers["Vary"] == "Accept-Encoding", "\(path)")
                if identity.body.count < 1024 {
                    #expect(coded.headers["Content-Encoding"] == nil, "\(path) is small")
                    continue
                }
                #expect(coded.headers["Content-Encoding"] == "gzip", "\(path)")
                #expect(ContentCoding.gunzip(coded.body) == identity.body, "\(path)")
                let etag = try #require(identity.headers["ETag"])
                #expect(coded.headers["ETag"] == ContentCoding.gzipTag(etag))
                let again = try sender.send("GET", path, headers: auth + [("Accept-Encoding", "gzip"), ("If-None-Match", coded.headers["ETag"] ?? "")])
                #expect(again.status == 304, "\(path)")
            }
            let state = try sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth + [("Accept-Encoding", "gzip")])
            let tag = try #require(state.headers["ETag"])
            let acted = try sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                        headers: session.auth + [("If-Match", tag)])
            #expect(acted.status == 200, "If-Match \(tag): \(acted.text)")
            // A small action answer is sent as it is.
            let openAPI = try sender.send("GET", "/openapi.yaml", headers: [("Accept-Encoding", "identity;q=0, gzip;q=0")])
            #expect(openAPI.headers["Content-Encoding"] == nil)
        }
    }

    /// A session's state is compressed once per version: an action's answer and the reads of
    /// its version share one compressed form, kept with the session, and the next version gets
    /// its own. Every compressed body decodes to that version's plain one, and a 304 says the
    /// compressed length of the version it stands for.
    @Test func aVersionsStateIsCompressedOnce() throws {
        let test = try TestApp()
        try test.withServer({ $0.gzipMinimumBytes = 256 }) { server in
            let sender = SocketSender(port: server.port)
            let session = try SessionClient(sender: sender).create(userId: "u-gz-once")
            let gzip = [("Accept-Encoding", "gzip")]
            func form() throws -> CompressedForm? {
                try test.app.sessions.withSession(session.id, access: .server) { $0.documentForm }
            }
            func read(_ headers: [(String, String)] = []) throws -> Response {
                try sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth + headers)
            }
            let plain = try read()
            #expect(try form()?.isMade == false, "no client asked for gzip yet")
            let coded = try read(gzip)
            #expect(coded.headers["Content-Encoding"] == "gzip")
            #expect(ContentCoding.gunzip(coded.body) == plain.body)
            let first = try #require(try form())
            #expect(first.isMade)
            #expect(try read(gzip).body == coded.body)
            #expect(try form() === first, "the same version keeps its form")

            let acted = try sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                        headers: session.auth + gzip)
            #expect(acted.status == 200 && acted.headers["Content-Encoding"] == "gzip")
            let second = try #require(try form())
            #expect(second !== first && second.isMade, "the action's answer made the new version's form")
            let plainAfter = try read()
            #expect(plainAfter.body != plain.body)
            #expect(ContentCoding.gunzip(acted.body) == plainAfter.body)
            let codedAfter = try read(gzip)
            #expect(codedAfter.body == acted.body && ContentCoding.gunzip(codedAfter.body) == plainAfter.body)
            let tag = try #require(codedAfter.headers["ETag"])
            let notModified = try read(gzip + [("If-None-Match", tag)])
            #expect(notModified.status == 304 && notModified.headers["Content-Length"] == String(acted.body.count))
        }
    }

    /// `PUT /v1/flags/evaluate` would make a flag the evaluate route hides: every name that a
    /// literal route segment takes where a PUT route has a name parameter is refused, 422, with
    /// the reserved names; other names are stored.
    @Test func routeNamesAreReserved() throws {
        let test = try TestApp()
        let routes = test.app.routes
        let flag = #"{"variants":{"on":true,"off":false},"defaultVariant":"off"}"#
        let experiment = #"{"variants":[{"key":"a","weight":0.5},{"key":"b","weight":0.5}]}"#
        let flow = #"{"name":"NAME","kind":"stacked","initial":["x.first"]}"#
        var refused = 0
        for put in routes where put.method == "PUT" {
            let segments = put.pattern.split(separator: "/", omittingEmptySubsequences: false)
            guard let last = segments.last, last.hasPrefix("{") else { continue }
            let parent = segments.dropLast().joined(separator: "/")
            let shadowed = Set(routes.compactMap { route -> String? in
                let other = route.pattern.split(separator: "/", omittingEmptySubsequences: false)
                guard other.count == segments.count, other.dropLast().joined(separator: "/") == parent,
                      let name = other.last, !name.hasPrefix("{") else { return nil }
                return String(name)
            })
            for name in shadowed {
                let path = parent + "/" + name
                let body = put.pattern.hasPrefix("/v1/flags") ? flag : put.pattern.hasPrefix("/v1/experiments") ? experiment
                    : flow.replacingOccurrences(of: "NAME", with: name)
                let response = try test.direct.send("PUT", path, body: body, headers: Self.admin)
                #expect(response.status == 422, "PUT \(path) answered \(response.status)")
                #expect(response.headers["Content-Type"] == "application/problem+json")
                #expect(response.json["code"].stringValue == "reserved-name")
                #expect(response.json["reserved"].arrayValue?.contains(.string(name)) == true)
                refused += 1
            }
        }
        #expect(refused >= 1)
        #expect(try test.direct.send("PUT", "/v1/flags/evaluated", body: flag, headers: Self.admin).status == 201)
        // The evaluate route still evaluates.
        #expect(try test.direct.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"u"}"#, headers: Self.admin).status == 200)
    }

    /// A stale If-Match (412) and an unavailable database (503) answer problems with a `code`,
    /// like every other problem.
    @Test func preconditionAndUnavailableProblemsHaveCodes() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "u-codes")
        let stale = try client.act(session, #"{"type":"onboarding.showSecond"}"#, headers: [("If-Match", "\"99\"")])
        #expect(stale.status == 412)
        #expect(stale.json["code"].stringValue == "version-mismatch")
        let notFound = try test.direct.send("GET", "/no/such/route")
        #expect(notFound.json["code"].stringValue == "not-found")
        let wrongMethod = try test.direct.send("DELETE", "/healthz")
        #expect(wrongMethod.json["code"].stringValue == "method-not-allowed")
        try test.store.close()
        let health = try test.direct.send("GET", "/healthz")
        #expect(health.status == 503)
        #expect(health.json["code"].stringValue == "database-unavailable")
        let create = try test.direct.send("POST", "/v1/sessions", body: #"{"userId":"u-late"}"#)
        #expect(create.status == 503)
        #expect(create.json["code"].stringValue?.isEmpty == false, "\(create.text)")
    }

    /// Every problem type FlowStack names has its code (the URN's last segment), and the
    /// list of codes in docs/api.md (HTTP and the API) names each one.
    @Test func everyProblemTypeHasADocumentedCode() throws {
        let readme = try String(contentsOf: Repository.path("docs/api.md"), encoding: .utf8)
        #expect(Set(ProblemType.all).count == ProblemType.all.count)
        for type in ProblemType.all {
            let code = ProblemDetails(status: 400, detail: "x", type: type).code
            #expect(type == ProblemType.prefix + code)
            #expect(readme.contains("`\(code)`"), "docs/api.md does not list the code \(code)")
        }
    }
}

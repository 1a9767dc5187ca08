// Routing without a socket: path parameters, 404, 405 with Allow, HEAD.
import HTTPServer
import Testing

struct RouterTests {
    static let router: Router = {
        var router = Router()
        router.add("GET", "/v1/sessions/{id}") { .text("get \($0.pathParameters["id"] ?? "-") \($0.route ?? "-")") }
        router.add("POST", "/v1/sessions/{id}/actions") { .text("post \($0.pathParameters["id"] ?? "-")") }
        router.add("DELETE", "/v1/sessions/{id}") { _ in Response(status: 204) }
        router.add("GET", "/healthz") { _ in .text("ok") }
        return router
    }()

    /// A `{name}` segment captures its value, and the request knows the pattern that matched.
    @Test func capturesPathParameters() {
        let response = Self.router.handle(Request(method: "GET", path: "/v1/sessions/s-42"))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "get s-42 /v1/sessions/{id}")
        let post = Self.router.handle(Request(method: "POST", path: "/v1/sessions/abc/actions"))
        #expect(String(decoding: post.body, as: UTF8.self) == "post abc")
    }

    /// Paths that match no pattern, including empty segments and trailing slashes, are 404 problems.
    @Test(arguments: ["/nope", "/v1/sessions", "/v1/sessions/", "/v1/sessions//actions", "/healthz/", "", "/v1/sessions/a/b/c"])
    func unknownPathIs404(path: String) {
        let response = Self.router.handle(Request(method: "GET", path: path))
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    /// A path whose %-escapes decode to bytes that are not UTF-8 is refused with a 400 problem,
    /// whatever route it would reach: decoded lossily, `%FF%FE` and the overlong `%C0%AF` would
    /// both become U+FFFD and name the same id.
    @Test(arguments: ["/v1/sessions/%FF%FE", "/v1/sessions/%C0%AF", "/v1/sessions/a%80b/actions", "/v1/sessions/%ED%A0%80",
                      "/healthz%FF", "/nope/%FE"])
    func pathsThatAreNotUTF8Are400(path: String) {
        for method in ["GET", "POST", "DELETE"] {
            let response = Self.router.handle(Request(method: method, path: path))
            #expect(response.status == 400, "\(method) \(path)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
        }
    }

    /// Escapes that are UTF-8 are decoded, `%2F` stays inside its segment, and a lone `%` is kept.
    @Test func utf8EscapesAreDecoded() {
        for (path, id) in [("/v1/sessions/%C3%A9", "é"), ("/v1/sessions/a%2Fb", "a/b"), ("/v1/sessions/100%", "100%"),
                           ("/v1/sessions/%F0%9F%98%80", "😀")] {
            let response = Self.router.handle(Request(method: "GET", path: path))
            #expect(String(decoding: response.body, as: UTF8.self) == "get \(id) /v1/sessions/{id}", "\(path)")
        }
    }

    /// A known path with another method is 405 and lists the allowed methods.
    @Test func wrongMethodIs405WithAllow() {
        let response = Self.router.handle(Request(method: "PUT", path: "/v1/sessions/s-1"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD, DELETE")
        #expect(response.headers["content-type"] == "application/problem+json")
    }

    /// HEAD is served by the GET route.
    @Test func headUsesGetRoute() {
        #expect(Self.router.handle(Request(method: "HEAD", path: "/healthz")).status == 200)
    }

    /// `dispatch` names the pattern the path matched in the same pass: the served route's, the
    /// path's for a 405, none for a 404.
    @Test func dispatchNamesThePattern() {
        #expect(Self.router.dispatch(Request(method: "GET", path: "/v1/sessions/s-1")).pattern == "/v1/sessions/{id}")
        #expect(Self.router.dispatch(Request(method: "POST", path: "/v1/sessions/s-1/actions")).pattern == "/v1/sessions/{id}/actions")
        let wrongMethod = Self.router.dispatch(Request(method: "PATCH", path: "/v1/sessions/s-1"))
        #expect(wrongMethod.response.status == 405)
        #expect(wrongMethod.pattern == "/v1/sessions/{id}")
        #expect(Self.router.dispatch(Request(method: "GET", path: "/nope")).pattern == nil)
        #expect(Self.router.pattern(forPath: "/v1/sessions/x/actions") == "/v1/sessions/{id}/actions")
        #expect(Self.router.pattern(forPath: "healthz") == nil)
    }

    /// `dispatch` gives the served route's index in `patterns` (HEAD the GET route's), and none
    /// for a 404, a 405 or a path that is not UTF-8.
    @Test func dispatchGivesTheServedRoutesIndex() throws {
        let patterns = Self.router.patterns
        for (method, path, served) in [("GET", "/v1/sessions/s-1", "GET /v1/sessions/{id}"),
                                        ("HEAD", "/v1/sessions/s-1", "GET /v1/sessions/{id}"),
                                        ("DELETE", "/v1/sessions/s-1", "DELETE /v1/sessions/{id}"),
                                        ("POST", "/v1/sessions/s-1/actions", "POST /v1/sessions/{id}/actions"),
                                        ("GET", "/healthz", "GET /healthz")] {
            let dispatched = Self.router.dispatch(Request(method: method, path: path))
            let route = try #require(dispatched.route, "\(method) \(path)")
            #expect("\(patterns[route].method) \(patterns[route].pattern)" == served, "\(method) \(path)")
            #expect(patterns[route].pattern == dispatched.pattern)
        }
        for (method, path) in [("PATCH", "/v1/sessions/s-1"), ("GET", "/nope"), ("GET", "/v1/sessions/%FF")] {
            #expect(Self.router.dispatch(Request(method: method, path: path)).route == nil, "\(method) \(path)")
        }
    }

    /// Only the served route's parameters are decoded and set: a route tried before it that
    /// shares its first segments (`{id}`, then another literal), or that matches the whole path
    /// with another method, leaves nothing behind.
    @Test func onlyTheServedRoutesParametersAreSet() {
        var router = Router()
        router.add("GET", "/v1/{kind}/x") { _ in .text("x") }
        router.add("POST", "/v1/{kind}/y") { _ in .text("post") }
        router.add("GET", "/v1/{other}/y/{name}") { _ in .text("y") }
        router.add("GET", "/v1/{id}/y") { request in
            .text("\(request.pathParameters.count) \(request.pathParameters["id"] ?? "-") \(request.pathParameters["kind"] ?? "-")")
        }
        #expect(String(decoding: router.handle(Request(method: "GET", path: "/v1/a%20b/y")).body, as: UTF8.self) == "1 a b -")
    }

    /// Path parameters read, replace and remove by name, and compare as dictionaries do.
    @Test func pathParametersActAsASmallDictionary() {
        var parameters = PathParameters()
        #expect(parameters.isEmpty && parameters.count == 0 && parameters["id"] == nil)
        parameters["id"] = "s-1"
        parameters["name"] = "n"
        parameters["third"] = "t"
        #expect(parameters.count == 3 && parameters["id"] == "s-1" && parameters["name"] == "n" && parameters["third"] == "t")
        parameters["name"] = "m"
        #expect(parameters["name"] == "m" && parameters.count == 3)
        #expect(parameters == ["third": "t", "id": "s-1", "name": "m"])
        #expect(parameters != ["third": "t", "id": "s-1", "name": "n"])
        #expect(parameters != ["third": "t", "id": "s-2", "name": "m"])
        #expect(parameters != ["id": "s-1", "name": "m", "other": "t"])
        #expect(parameters != ["id": "s-1", "name": "m"])
        parameters["id"] = nil
        #expect(parameters["id"] == nil && parameters["name"] == "m" && parameters["third"] == "t" && parameters.count == 2)
        parameters["third"] = nil
        parameters["missing"] = nil
        #expect(parameters == ["name": "m"])
        parameters["name"] = nil
        #expect(parameters.isEmpty && parameters == PathParameters())
    }

    /// Segments are decoded one by one: an escaped literal still matches, an escaped slash stays
    /// inside its parameter, and a path without its leading slash matches nothing.
    @Test func segmentsAreDecodedAlone() {
        #expect(Self.router.handle(Request(method: "GET", path: "/heal%74hz")).status == 200)
        let escapedSlash = Self.router.handle(Request(method: "GET", path: "/v1/sessions/a%2Fb"))
        #expect(String(decoding: escapedSlash.body, as: UTF8.self) == "get a/b /v1/sessions/{id}")
        #expect(Self.router.handle(Request(method: "GET", path: "/v1/sessions/a/b")).status == 404)
        #expect(Self.router.handle(Request(method: "GET", path: "healthz")).status == 404)
        #expect(Self.router.handle(Request(method: "GET", path: "/v1/sessions/%C3%A9")).body == Array("get é /v1/sessions/{id}".utf8))
    }
}

struct ProblemDetailsTests {
    /// However many field errors a request causes, the answer lists 50 and counts the rest.
    @Test func capsFieldErrors() {
        let errors = (0..<500).map { ProblemDetails.FieldError(pointer: "/\($0)", detail: "bad") }
        let text = String(decoding: ProblemDetails(status: 400, detail: "d", errors: errors).json, as: UTF8.self)
        #expect(text.components(separatedBy: "\"pointer\"").count - 1 == 50)
        #expect(text.hasSuffix(#""errorsOmitted":450}"#))
    }

    /// Problem documents escape what they quote, so a hostile path cannot break the JSON.
    @Test func escapesStrings() {
        let problem = ProblemDetails(status: 400, detail: "bad \"x\"\n\u{01}\\", errors: [.init(pointer: "/a", detail: "b")])
        let text = String(decoding: problem.json, as: UTF8.self)
        #expect(text == #"{"type":"about:blank","title":"Bad Request","status":400,"detail":"bad \"x\"\n\u0001\\","code":"malformed-request","errors":[{"pointer":"/a","detail":"b"}]}"#)
    }
}

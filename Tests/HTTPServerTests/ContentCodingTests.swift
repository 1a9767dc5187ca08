// Honest 304s, gzip negotiation and ETags per coding, through a real libmicrohttpd socket.
import Foundation
@testable import HTTPServer
import HTTPTestClient
import Testing

/// A router with a tagged JSON document over the compression threshold, a small one, a 304
/// that does not say what it stands for, and an event stream.
private let codingRouter: Router = {
    var router = Router()
    router.add("GET", "/doc") { request in
        var response = Response.json(CodingFixtures.large)
        response.headers["ETag"] = "\"v7\""
        if let tags = request.headers["If-None-Match"], tags.contains("\"v7\"") { return .notModified(response) }
        if let tag = request.headers["If-Match"], !tag.contains("\"v7\"") && tag != "*" { return .problem(412, "stale") }
        return response
    }
    router.add("GET", "/small") { _ in
        var response = Response.json(Array(#"{"ok":true}"#.utf8))
        response.headers["ETag"] = "\"s1\""
        return response
    }
    router.add("GET", "/bare304") { _ in
        var response = Response(status: 304)
        response.headers["ETag"] = "\"b\""
        return response
    }
    router.add("GET", "/binary") { _ in .bytes(CodingFixtures.large, contentType: "application/octet-stream") }
    return router
}()

enum CodingFixtures {
    /// About 6 KiB of JSON: compressible, and over the 1 KiB threshold.
    static let large: [UInt8] = Array(("[" + (0..<200).map { #"{"id":\#($0),"name":"item"}"# }.joined(separator: ",") + "]").utf8)
}

private func header(_ response: (status: Int, headers: [(String, String)], body: [UInt8]), _ name: String) -> String? {
    response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
}

private func server() throws -> LiveServer { try LiveServer(router: codingRouter) }

@Suite(.serialized)
struct ContentCodingTests {
    /// A 304 says the length of the 200 it stands for (RFC 9110 §8.6), not 0, sends no body,
    /// and keeps the connection: the next answer on it is whole.
    @Test func notModifiedCarriesTheLengthOfTheFullAnswer() throws {
        let live = try server()
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /doc HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"v7\"\r\n\r\n")
        let notModified = try connection.readResponse()
        #expect(notModified.status == 304)
        #expect(header(notModified, "Content-Length") == String(CodingFixtures.large.count))
        #expect(header(notModified, "Content-Type") == nil)
        #expect(header(notModified, "ETag") == "\"v7\"")
        #expect(header(notModified, "Connection") == nil)
        try connection.send("GET /doc HTTP/1.1\r\nHost: t\r\n\r\n")
        let full = try connection.readResponse()
        #expect(full.status == 200)
        #expect(full.body == CodingFixtures.large)
    }

    /// A 304 that does not say what it stands for has no Content-Length at all (and closes the
    /// connection, the only framing libmicrohttpd 0.9.75 offers for it); never `Content-Length: 0`.
    @Test func bareNotModifiedHasNoContentLength() throws {
        let live = try server()
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /bare304 HTTP/1.1\r\nHost: t\r\n\r\n")
        let answer = try connection.readResponse()
        #expect(answer.status == 304)
        #expect(header(answer, "Content-Length") == nil)
        #expect(header(answer, "Transfer-Encoding") == nil)
        #expect(answer.body.isEmpty)
    }

    /// With gzip accepted, a large JSON answer is compressed: Content-Encoding, Vary, a coded
    /// ETag, and a body that decompresses to the original bytes.
    @Test func largeAnswersAreGzipped() throws {
        let live = try server()
        let answer = try SocketSender(port: live.port).send("GET", "/doc", headers: [("Accept-Encoding", "gzip, deflate, br")])
        #expect(answer.status == 200)
        #expect(answer.headers["Content-Encoding"] == "gzip")
        #expect(answer.headers["Vary"] == "Accept-Encoding")
        #expect(answer.headers["ETag"] == "\"v7-gz\"")
        #expect(answer.headers["Content-Length"] == String(answer.body.count))
        #expect(answer.body.count < CodingFixtures.large.count / 4)
        #expect(ContentCoding.gunzip(answer.body) == CodingFixtures.large)
    }

    /// Without gzip accepted (no header, `gzip;q=0`, only other codings, `identity;q=0` alone),
    /// the body is sent as it is, still with `Vary` and the plain ETag.
    @Test(arguments: [nil, "gzip;q=0", "br, deflate", "*;q=0", "gzip;q=0, *", "identity;q=0", "gzip;q=abc"])
    func gzipOnlyWhenAccepted(_ acceptEncoding: String?) throws {
        let live = try server()
        let headers = acceptEncoding.map { [("Accept-Encoding", $0)] } ?? []
        let answer = try SocketSender(port: live.port).send("GET", "/doc", headers: headers)
        #expect(answer.headers["Content-Encoding"] == nil)
        #expect(answer.headers["Vary"] == "Accept-Encoding")
        #expect(answer.headers["ETag"] == "\"v7\"")
        #expect(answer.body == CodingFixtures.large)
    }

    /// q-values and the wildcard choose gzip when they give it a weight above 0.
    @Test(arguments: ["gzip", "GZIP;q=0.5", "x-gzip", "*", "identity;q=0, *;q=0.1", "br;q=1, gzip;q=0.001"])
    func gzipWhenWeighted(_ acceptEncoding: String) throws {
        #expect(ContentCoding.acceptsGzip(acceptEncoding))
    }

    /// Headers without weights or a wildcard are read in place; they must be answered as the
    /// weighing parser answers them, which the q-value tests above check.
    @Test func unweightedHeadersReadInPlaceAsWeighed() {
        let parts = ["gzip", "GZip", "x-gzip", "X-GZIP", "deflate", "br", "identity", "gzipx", "xgzip", "gz", " ", "\t", "", "zstd"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...5, using: &generator)
            let elements = (0..<count).map { _ in
                (Bool.random(using: &generator) ? " " : "") + parts.randomElement(using: &generator)! + (Bool.random(using: &generator) ? "\t" : "")
            }
            let header = elements.joined(separator: Bool.random(using: &generator) ? "," : ", ")
            #expect(ContentCoding.acceptsGzip(header) == ContentCoding.acceptsGzipWeighing(header), "\(header.debugDescription)")
        }
        for header in ["gzip", " gzip ,", ",,gzip,,", "deflate, br", "gzip, deflate, br, zstd", "", ",", "br,x-gzip", "GZIP"] {
            #expect(ContentCoding.acceptsGzip(header) == ContentCoding.acceptsGzipWeighing(header), "\(header.debugDescription)")
        }
        #expect(ContentCoding.acceptsGzip("gzip, deflate, br"))
        #expect(!ContentCoding.acceptsGzip("deflate, br"))
    }

    /// Which media types are worth compressing: the type before any parameter, any case,
    /// spaces around it ignored; event streams never.
    @Test(arguments: [
        ("application/json", true), ("application/problem+json", true), ("Application/JSON; charset=utf-8", true),
        (" application/json ;charset=utf-8", true), ("\tTEXT/html", true), ("text/plain; charset=utf-8", true),
        ("application/yaml", true), ("application/javascript", true), ("image/svg+xml", true),
        ("application/vnd.api+JSON", true), ("text/", true),
        ("text/event-stream", false), ("Text/Event-Stream; charset=utf-8", false), ("application/octet-stream", false),
        ("image/png", false), ("application/jsonx", false), ("application/jso", false), ("json", false), ("+json ", true),
        ("", false), (";", false), ("   ", false), ("application/json-seq", false), ("text", false), ("application/xjson", false),
        ("application/järnväg+json", true), ("tëxt/html", false),
    ])
    func compressibleTypes(_ contentType: String, _ expected: Bool) {
        #expect(ContentCoding.isCompressible(contentType) == expected)
    }

    /// Small answers and types that do not compress are untouched; small JSON still says Vary.
    @Test func smallAndBinaryAnswersAreNotCompressed() throws {
        let live = try server()
        let sender = SocketSender(port: live.port)
        let small = try sender.send("GET", "/small", headers: [("Accept-Encoding", "gzip")])
        #expect(small.headers["Content-Encoding"] == nil)
        #expect(small.headers["ETag"] == "\"s1\"")
        #expect(small.headers["Vary"] == "Accept-Encoding")
        #expect(small.text == #"{"ok":true}"#)
        let binary = try sender.send("GET", "/binary", headers: [("Accept-Encoding", "gzip")])
        #expect(binary.headers["Content-Encoding"] == nil)
        #expect(binary.headers["Vary"] == nil)
        #expect(binary.body == CodingFixtures.large)
    }

    /// If-None-Match with either variant's tag gives 304, with the tag and length of the
    /// variant this client would get; If-Match accepts the coded tag too.
    @Test func eitherVariantRevalidates() throws {
        let live = try server()
        let connection = try RawConnection(port: live.port)
        // Under 8 KiB: compressed at each request, at that level.
        let gzipped = try #require(ContentCoding.gzip(CodingFixtures.large, level: CompressedBodies.levelPerRequest))
        for tag in ["\"v7-gz\"", "\"v7\"", "W/\"v7-gz\""] {
            try connection.send("GET /doc HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nIf-None-Match: \(tag)\r\n\r\n")
            let answer = try connection.readResponse()
            #expect(answer.status == 304, "If-None-Match: \(tag)")
            #expect(header(answer, "ETag") == "\"v7-gz\"")
            #expect(header(answer, "Content-Length") == String(gzipped.count))
            #expect(header(answer, "Content-Encoding") == nil)
        }
        try connection.send("GET /doc HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"v7-gz\"\r\n\r\n")
        let identity = try connection.readResponse()
        #expect(identity.status == 304)
        #expect(header(identity, "ETag") == "\"v7\"")
        #expect(header(identity, "Content-Length") == String(CodingFixtures.large.count))
        let matched = try SocketSender(port: live.port).send("GET", "/doc", headers: [("If-Match", "\"v7-gz\"")])
        #expect(matched.status == 200)
    }

    /// Large tagged bodies are compressed once and kept, but a kept form is used only for the
    /// same bytes: two sessions' states share the tag "1" and must each get their own body.
    @Test func keptCompressedBodiesNeedTheSameBytes() throws {
        let first = Array(String(repeating: #"{"session":"a","n":1},"#, count: 600).utf8)
        let second = Array(String(repeating: #"{"session":"b","n":2},"#, count: 600).utf8)
        for body in [first, second, first, second] {
            var response = Response.json(body)
            response.headers["ETag"] = "\"1\""
            let coded = ContentCoding.negotiated(response, acceptEncoding: "gzip", threshold: 1024)
            #expect(coded.headers["Content-Encoding"] == "gzip")
            #expect(ContentCoding.gunzip(coded.body) == body)
        }
    }

    /// Tags: the suffix goes inside the quotes, weak or strong, and comes off again.
    @Test func codedTags() {
        #expect(ContentCoding.gzipTag("\"abc\"") == "\"abc-gz\"")
        #expect(ContentCoding.gzipTag("W/\"abc\"") == "W/\"abc-gz\"")
        #expect(ContentCoding.strippingCodedTags("\"a-gz\", W/\"b-gz\", \"c\"") == "\"a\", W/\"b\", \"c\"")
        #expect(ContentCoding.strippingCodedTags("\"a\"") == nil)
    }
}

/// Every problem document carries a stable `code`.
struct ProblemCodeTests {
    /// A problem with no code of its own takes its type URN's last segment, else its status's;
    /// a given code wins; each is written in the document.
    @Test func everyProblemHasACode() throws {
        #expect(ProblemDetails(status: 404, detail: "x", type: "urn:flowstack:problem:not-found").code == "not-found")
        #expect(ProblemDetails(status: 503, detail: "x").code == "unavailable")
        var given = ProblemDetails(status: 409, detail: "x", type: "urn:flowstack:problem:stale-source")
        given.extensions = [("code", "\"stale-source\"")]
        #expect(given.code == "stale-source")
        for status in [400, 401, 403, 404, 405, 406, 409, 411, 412, 413, 415, 422, 428, 429, 431, 500, 503] {
            let problem = ProblemDetails(status: status, detail: "x")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(problem.json)) as? [String: Any])
            #expect(json["code"] as? String == problem.code)
            #expect(!problem.code.hasPrefix("http-"), "status \(status) has no code of its own")
        }
    }
}

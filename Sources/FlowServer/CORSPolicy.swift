// Cross-origin requests from browsers (CORS) to the routes a web app calls: OFREP and sessions.
import Foundation
import HTTPServer

/// Which browser origins may call the routes a web app uses (`--cors-origins`).
///
/// ```swift
/// var cors = CORSOptions()
/// cors.origins = try CORSOptions.parse("https://app.example.com, http://localhost:3000")
/// ```
/// Empty (the default): no CORS headers at all, as before.
public struct CORSOptions: Sendable {
    /// Allowed origins, normalized (`https://app.example.com`, `http://localhost:3000`), or
    /// `["*"]` for any origin.
    public var origins: [String] = []

    public init() {}

    /// Why a list of origins was refused.
    public struct InvalidOrigin: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses a comma-separated list of origins (`scheme://host[:port]`, no path) or `*`.
    /// Origins are compared as browsers send them: lowercase, without a default port.
    public static func parse(_ list: String) throws(InvalidOrigin) -> [String] {
        var origins: [String] = []
        for entry in list.split(separator: ",") {
            let text = entry.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            if text == "*" {
                origins.append("*")
                continue
            }
            guard let origin = normalize(text) else {
                throw InvalidOrigin(description: "an allowed origin is scheme://host[:port] with no path, such as https://app.example.com, or *; got '\(text)'.")
            }
            origins.append(origin)
        }
        if origins.contains("*") && origins.count > 1 {
            throw InvalidOrigin(description: "* allows every origin; give it alone, not with a list.")
        }
        return origins
    }

    /// `scheme://host[:port]` lowercased, a trailing slash and a default port dropped; nil when
    /// it is not an http(s) origin.
    static func normalize(_ text: String) -> String? {
        var origin = text.lowercased()
        if origin.hasSuffix("/") { origin.removeLast() }
        let scheme: String
        if origin.hasPrefix("https://") { scheme = "https" } else if origin.hasPrefix("http://") { scheme = "http" } else { return nil }
        let authority = origin.dropFirst(scheme.count + 3)
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ \\".contains($0) }),
              authority.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }) else { return nil }
        if scheme == "https", authority.hasSuffix(":443") { origin.removeLast(4) }
        if scheme == "http", authority.hasSuffix(":80") { origin.removeLast(3) }
        return origin
    }
}

/// Answers preflights and adds CORS headers for allowed origins on the routes a web app calls
/// with a client key or a session token: `/ofrep/v1/…` and `/v1/sessions…` (event streams
/// included). Admin routes never get CORS headers: the admin token belongs on servers, never
/// in a browser page. The GrowthBook payload keeps its own `Access-Control-Allow-Origin: *`.
///
/// Credentials are bearer tokens and keys in headers, never cookies, so no
/// `Access-Control-Allow-Credentials` is sent and `*` (any origin) is safe here: a page of
/// another site gets nothing it could not get with curl, since it must hold the key or token.
/// The request's origin is echoed rather than `*`, with `Vary: Origin` on every answer of
/// these routes (also to disallowed origins), so caches keep answers apart.
struct CORSPolicy: Sendable {
    let anyOrigin: Bool
    let origins: Set<String>

    /// Nil when no origin is allowed (CORS off).
    init?(_ options: CORSOptions) {
        guard !options.origins.isEmpty else { return nil }
        anyOrigin = options.origins.contains("*")
        origins = Set(options.origins)
    }

    /// Request headers the routes read.
    static let allowedHeaders = "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID, X-API-Key, X-Request-Id"
    /// Answer headers a page may read, beyond the CORS-safelisted ones.
    static let exposedHeaders = "ETag, Location, Retry-After, X-Request-Id, Idempotent-Replayed, WWW-Authenticate, Allow"
    /// How long a browser may keep a preflight's answer (Chrome caps it at 2 hours).
    static let maxAgeSeconds = 7200

    /// Whether `path` is one of the routes CORS applies to.
    static func covers(_ path: String) -> Bool {
        path == "/v1/sessions" || path.hasPrefix("/v1/sessions/") || path.hasPrefix("/ofrep/v1/")
    }

    /// The request's `Origin` when it is allowed.
    func allowedOrigin(_ request: Request) -> String? {
        guard let origin = request.headers["Origin"] else { return nil }
        if anyOrigin { return origin }
        let normalized = origin.lowercased()
        return origins.contains(normalized) ? origin : nil
    }

    /// The answer to a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
    /// from an allowed origin to a path with routes (`methods`: the methods its routes take);
    /// nil for any other request, which is routed as usual (an `OPTIONS` then gets 405).
    func preflight(_ request: Request, methods: String?) -> Response? {
        guard request.method == "OPTIONS", request.headers["Access-Control-Request-Method"] != nil,
              let origin = allowedOrigin(request), let methods else { return nil }
        var response = Response(status: 204)
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Methods"] = methods
        response.headers["Access-Control-Allow-Headers"] = Self.allowedHeaders
        response.headers["Access-Control-Max-Age"] = String(Self.maxAgeSeconds)
        response.headers["Vary"] = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
        return response
    }

    /// `response` with `Vary: Origin`, and for an allowed origin `Access-Control-Allow-Origin`
    /// and `Access-Control-Expose-Headers`; an answer given later gets them when it is given.
    func decorate(_ response: Response, for request: Request) -> Response {
        let origin = allowedOrigin(request)
        if let later = response.deferred {
            let decorated = DeferredResponse()
            later.whenComplete { answer in decorated.complete(Self.headers(answer, origin: origin)) }
            return .later(decorated)
        }
        return Self.headers(response, origin: origin)
    }

    private static func headers(_ response: Response, origin: String?) -> Response {
        var response = response
        if let vary = response.headers["Vary"] {
            if !vary.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "origin" }) {
                response.headers["Vary"] = vary + ", Origin"
            }
        } else {
            response.headers["Vary"] = "Origin"
        }
        if let origin {
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = exposedHeaders
        }
        return response
    }
}

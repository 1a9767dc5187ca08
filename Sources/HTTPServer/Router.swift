// Routes requests by method and path pattern, with `{name}` path parameters, 404 and 405.

/// A handler: one request in, one response out. It runs on a server thread and must not block long.
public typealias Handler = @Sendable (Request) -> Response

/// Maps `METHOD /path/{param}` to handlers.
///
/// ```swift
/// var router = Router()
/// router.add("GET", "/sessions/{id}") { request in
///     .text(request.pathParameters["id"] ?? "")
/// }
/// router.handle(Request(method: "GET", path: "/sessions/s-1")).status // 200
/// ```
/// An unknown path answers 404; a known path with another method answers 405 with `Allow`.
/// `HEAD` is served by the `GET` route of the same path.
public struct Router: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        let handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    /// Adds a route. `pattern` is a path whose segments are literals or `{name}`.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = Self.split(pattern).map { part -> Segment in
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .literal(String(part))
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    /// The patterns served, with their methods, in the order added.
    public var patterns: [(method: String, pattern: String)] {
        routes.map { ($0.method, $0.pattern) }
    }

    /// Routes `request` to its handler, or answers 404 / 405 as a problem document.
    public func handle(_ request: Request) -> Response {
        let parts = Self.split(request.path)
        var allowed: [String] = []
        var matchedPattern: String?
        for route in routes {
            guard let parameters = Self.match(route.segments, parts) else { continue }
            let serves = route.method == request.method || (request.method == "HEAD" && route.method == "GET")
            if serves {
                var routed = request
                routed.pathParameters = parameters
                routed.route = route.pattern
                return route.handler(routed)
            }
            matchedPattern = route.pattern
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        guard matchedPattern != nil else {
            return .problem(404, "No route for \(request.method) \(request.path).")
        }
        var response = Response.problem(
            405, "\(request.method) is not allowed on \(request.path); use \(allowed.joined(separator: ", ")).")
        response.headers["Allow"] = allowed.joined(separator: ", ")
        return response
    }

    /// The pattern that `method` and `path` would be routed to, for metrics labels.
    public func pattern(forPath path: String) -> String? {
        let parts = Self.split(path)
        return routes.first { Self.match($0.segments, parts) != nil }?.pattern
    }

    /// Splits a path, as sent (still percent-encoded), into segments; each is decoded only when
    /// matched, so `%2F` stays inside its segment. A leading slash is required; empty segments
    /// are kept, so `/a//b` and `/a/` never match `/a/{x}/b` or `/a`.
    static func split(_ path: String) -> [Substring] {
        guard path.hasPrefix("/") else { return [Substring(path)] }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    }

    static func match(_ segments: [Segment], _ parts: [Substring]) -> [String: String]? {
        guard segments.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let literal):
                guard PercentDecoding.decode(part, plusIsSpace: false) == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = PercentDecoding.decode(part, plusIsSpace: false)
            }
        }
        return parameters
    }
}

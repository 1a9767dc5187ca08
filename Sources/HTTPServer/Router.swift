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
/// An unknown path answers 404; a known path with another method answers 405 with `Allow`; a
/// path whose `%HH` escapes are not UTF-8 (`%FF%FE`, the overlong `%C0%AF`) answers 400 on
/// every route, rather than naming whatever the lossy decoding would make of it.
/// `HEAD` is served by the `GET` route of the same path.
public struct Router: Sendable {
    enum Segment: Sendable, Equatable {
        /// A literal segment, kept as UTF-8 bytes: a request's segment is compared byte for byte
        /// and decoded only when it holds a `%` escape.
        case literal([UInt8])
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
        let parts = pattern.hasPrefix("/") ? pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false) : [Substring(pattern)]
        let segments = parts.map { part -> Segment in
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .literal(Array(part.utf8))
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    /// The patterns served, with their methods, in the order added.
    public var patterns: [(method: String, pattern: String)] {
        routes.map { ($0.method, $0.pattern) }
    }

    /// Routes `request` to its handler, or answers 404 / 405 as a problem document.
    public func handle(_ request: Request) -> Response {
        dispatch(request).response
    }

    /// Routes `request` like `handle`, and also says which pattern its path matched (the served
    /// route's, or for a 405 the path's most specific one, whose methods `Allow` lists), nil
    /// when none did: the label for
    /// metrics, found in the same pass. `route` is the served route's index in `patterns` (nil
    /// for a 404, a 405 or a path that is not UTF-8), for tables made once per route.
    public func dispatch(_ request: Request) -> (response: Response, pattern: String?, route: Int?) {
        var path = request.path
        let found = path.withUTF8 { bytes in
            PercentDecoding.isValidUTF8(path: bytes) ? find(method: request.method, path: bytes) : .notUTF8
        }
        switch found {
        case .notUTF8:
            return (.problem(400, "The path \(request.path) is not valid UTF-8 once its %-escapes are decoded; "
                        + "encode each id as the %-escaped bytes of its UTF-8 (é is %C3%A9)."), nil, nil)
        case .served(let index, let parameters):
            let route = routes[index]
            var routed = request
            routed.pathParameters = parameters
            routed.route = route.pattern
            return (route.handler(routed), route.pattern, index)
        case .notFound:
            return (.problem(404, "No route for \(request.method) \(request.path)."), nil, nil)
        case .wrongMethod(let pattern, let allowed):
            let list = allowed.joined(separator: ", ")
            var response = Response.problem(405, "\(request.method) is not allowed on \(request.path); use \(list).")
            response.headers["Allow"] = list
            return (response, pattern, nil)
        }
    }

    /// The pattern that `path` would be routed to, for metrics labels.
    public func pattern(forPath path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            guard let parts = Self.segmentRanges(bytes) else { return nil }
            return routes.first { Self.matches($0.segments, parts, in: bytes) }?.pattern
        }
    }

    private enum Found {
        case served(Int, PathParameters)
        case notFound
        case wrongMethod(pattern: String, allowed: [String])
        /// The path's escapes decode to bytes that are not UTF-8: refused before any route is tried.
        case notUTF8
    }

    /// A wrong method's `Allow` names the methods of the resource the path names: the routes of
    /// its most specific matching pattern (a literal segment wins over a parameter, left to
    /// right), as the API's description lists them. A parameter route that also matches still
    /// serves its method (`PUT /v1/flags/{key}` answers for `/v1/flags/evaluate`, refusing the
    /// name) but is not advertised for that path.
    private func find(method: String, path bytes: UnsafeBufferPointer<UInt8>) -> Found {
        guard let parts = Self.segmentRanges(bytes) else { return .notFound }
        var allowed: [String] = []
        var owner: Route?
        // By index, and the segment count first: a request is compared with every route before
        // its own, and copying each route out of the array retained its four references.
        // Literals only, until one route serves the request: its parameters alone are decoded.
        for index in routes.indices where routes[index].segments.count == parts.count {
            guard Self.matches(routes[index].segments, parts, in: bytes) else { continue }
            let route = routes[index]
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .served(index, Self.parameters(route.segments, parts, in: bytes))
            }
            if let current = owner {
                let order = Self.specificity(route.segments, current.segments)
                if order < 0 { continue }
                if order > 0 { owner = route; allowed = [] }
            } else {
                owner = route
            }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        guard let owner else { return .notFound }
        return .wrongMethod(pattern: owner.pattern, allowed: allowed)
    }

    /// Compares two patterns of the same length by the first segment where one has a literal and
    /// the other a parameter: 1 when `lhs` has the literal (it is more specific), -1 when `rhs`
    /// has it, 0 when neither does.
    static func specificity(_ lhs: [Segment], _ rhs: [Segment]) -> Int {
        for (left, right) in zip(lhs, rhs) {
            switch (left, right) {
            case (.literal, .parameter): return 1
            case (.parameter, .literal): return -1
            default: continue
            }
        }
        return 0
    }

    /// The byte ranges of a path's segments, as sent (still percent-encoded); each is decoded only
    /// when matched, so `%2F` stays inside its segment. A leading slash is required (nil without
    /// one); empty segments are kept, so `/a//b` and `/a/` never match `/a/{x}/b` or `/a`.
    static func segmentRanges(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>]? {
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(6)
        var start = 1
        for index in 1..<bytes.count where bytes[index] == UInt8(ascii: "/") {
            ranges.append(start..<index)
            start = index + 1
        }
        ranges.append(start..<bytes.count)
        return ranges
    }

    /// Whether `parts` match `segments`: the same count, and each literal equal to its part
    /// (decoded first when it holds a `%` escape); a parameter matches any part but an empty one.
    static func matches(_ segments: [Segment], _ parts: [Range<Int>], in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard segments.count == parts.count else { return false }
        for (segment, range) in zip(segments, parts) {
            let part = UnsafeBufferPointer(rebasing: bytes[range])
            switch segment {
            case .literal(let literal):
                if PercentDecoding.needsDecoding(part, plusIsSpace: false) {
                    guard Array(PercentDecoding.decode(part, plusIsSpace: false).utf8) == literal else { return false }
                } else {
                    guard part.elementsEqual(literal) else { return false }
                }
            case .parameter:
                guard !part.isEmpty else { return false }
            }
        }
        return true
    }

    /// The decoded values of the parameter segments of a route that `matches` the path.
    static func parameters(_ segments: [Segment], _ parts: [Range<Int>], in bytes: UnsafeBufferPointer<UInt8>) -> PathParameters {
        var parameters = PathParameters()
        for (segment, range) in zip(segments, parts) {
            if case .parameter(let name) = segment {
                parameters[name] = PercentDecoding.decode(UnsafeBufferPointer(rebasing: bytes[range]), plusIsSpace: false)
            }
        }
        return parameters
    }
}

// Typed requests: what a route reads from an HTTP request (path, query, headers, body), parsed
// once into a value before the route runs, with a 4xx problem for whatever does not parse.
import HTTPServer
import JSON

/// The request of one route, as a value: each member parsed from the HTTP request once.
///
/// ```swift
/// struct ReleaseByID: RouteRequest {
///     let id: Int
///     init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
///         id = try request.releaseId()
///     }
/// }
/// ```
/// Members are read in the order a client's mistakes should be reported (the query, then the
/// credentials, then the headers, then the body), so a request with two faults hears of the same
/// one it always did.
protocol RouteRequest: SendableMetatype {
    /// Reads the request; throws the 4xx problem of the first member that does not parse.
    init(_ request: Request, limits: BodyLimits) throws(ResponseError)
}

/// A route with nothing to read beyond the request itself keeps it whole (a stream, a route
/// that checks its credential before anything else).
extension Request: RouteRequest {
    init(_ request: Request, limits: BodyLimits) {
        self = request
    }
}

extension Request {
    /// A `{name}` path segment, decoded (empty if the pattern has none: the router fills every one).
    func parameter(_ name: String) -> String {
        pathParameters[name] ?? ""
    }
}

extension Router {
    /// Adds a route from a typed request to a typed answer: the router parses `Input` (its
    /// problem is the answer when it fails), the handler answers or throws a problem.
    ///
    /// ```swift
    /// router.route("GET", "/v1/releases/{id}", limits: limits) { (request: ReleaseByID) throws(ResponseError) in
    ///     ReleaseAnswer(try releases.release(request.id))
    /// }
    /// ```
    mutating func route<Input: RouteRequest, Answer: ResponseEncodable>(
        _ method: String, _ pattern: String, limits: BodyLimits,
        _ handler: @escaping @Sendable (Input) throws(ResponseError) -> Answer
    ) {
        route(method, pattern) { request throws(ResponseError) in
            try handler(try Input(request, limits: limits)).response()
        }
    }

    /// `adminRoute` with a typed request and answer: the credential and its role are checked
    /// first (401, 403), then the request is parsed, then the handler runs as the credential.
    mutating func adminRoute<Input: RouteRequest, Answer: ResponseEncodable>(
        _ method: String, _ pattern: String, _ admin: AdminAuthorization, role: AdminRole? = nil, limits: BodyLimits,
        _ handler: @escaping @Sendable (Input) throws(ResponseError) -> Answer
    ) {
        adminRoute(method, pattern, admin, role: role) { request throws(ResponseError) in
            try handler(try Input(request, limits: limits)).response()
        }
    }
}

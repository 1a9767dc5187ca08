// An HTTP request as a handler sees it: method, path, query, headers and the whole body.

/// One HTTP request, with its body already gathered (and bounded by the server's limit).
///
/// Handlers receive it whether it came through a socket or was built in a test:
/// ```swift
/// let response = router.handle(Request(method: "GET", path: "/healthz"))
/// ```
public struct Request: Sendable {
    public var method: String
    /// The path as sent (percent-encoded), without the query string; the router decodes each
    /// segment, and `pathParameters` hold decoded values.
    public var path: String
    /// Query parameters in the order sent, decoded (`+` is a space); a name without `=` has an
    /// empty value.
    public var query: [(name: String, value: String)]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Values of the `{name}` segments of the route that matched; set by the router.
    public var pathParameters: [String: String]
    /// The `X-Request-Id` of this request: the client's when it sent a usable one, else generated.
    public var requestId: String
    /// The route pattern that matched (`/v1/sessions/{id}`), set by the router; nil when none did.
    public var route: String?
    /// The address of the client's end of the connection (a proxy's, behind one); nil in tests
    /// that build requests without a socket.
    public var peer: IPAddress?

    public init(
        method: String,
        path: String,
        query: [(name: String, value: String)] = [],
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [],
        requestId: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.pathParameters = [:]
        self.requestId = requestId
        self.route = nil
    }

    /// The first query value named `name`.
    public func queryValue(_ name: String) -> String? {
        for item in query where item.name == name { return item.value }
        return nil
    }
}

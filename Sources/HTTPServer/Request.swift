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
    public var pathParameters: PathParameters
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

/// The values of a route's `{name}` segments, by name: `request.pathParameters["id"]`.
///
/// A route has a segment or two, so they are kept in order and found by comparing names: a
/// dictionary hashed each name twice a request (stored, then read) and allocated its table. The
/// first is kept inline, so the usual route (one `{id}`) allocates nothing for it.
public struct PathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var first: (name: String, value: String)?
    private var rest: [(name: String, value: String)] = []

    public init() {}

    /// A name given twice keeps its last value (a route's pattern never repeats one).
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The value of the segment `name`; setting one already there replaces it, setting nil removes it.
    public subscript(name: String) -> String? {
        get {
            if let first, first.name == name { return first.value }
            for pair in rest where pair.name == name { return pair.value }
            return nil
        }
        set {
            if let current = first, current.name == name {
                if let newValue {
                    first = (name, newValue)
                } else {
                    first = rest.isEmpty ? nil : rest.removeFirst()
                }
            } else if let index = rest.firstIndex(where: { $0.name == name }) {
                if let newValue { rest[index].value = newValue } else { rest.remove(at: index) }
            } else if let newValue {
                if first == nil { first = (name, newValue) } else { rest.append((name, newValue)) }
            }
        }
    }

    public var isEmpty: Bool { first == nil }
    public var count: Int { first == nil ? 0 : 1 + rest.count }

    /// Equal when they hold the same names with the same values, in any order (as dictionaries are).
    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if let first = lhs.first, rhs[first.name] != first.value { return false }
        return lhs.rest.allSatisfy { rhs[$0.name] == $0.value }
    }
}

// An HTTP response: status, headers and body bytes, with constructors for the common kinds.

/// What a handler answers.
///
/// ```swift
/// Response.json(Array(#"{"status":"ok"}"#.utf8))
/// ```
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Set when the answer comes later (`Response.later`); status, headers and body are then unused.
    public private(set) var deferred: DeferredResponse?
    /// Set when the body is written over time (`Response.stream`); `body` is then unused.
    public private(set) var stream: ResponseStream?
    /// For a 304 made by `Response.notModified(_:)`: the representation a 200 would have
    /// carried, never sent; its length is the 304's `Content-Length` (RFC 9110 §8.6).
    public internal(set) var representation: Representation?
    /// For a 401: why the credential was refused, when the handler knows; never sent. A
    /// limiter of failed credentials counts guesses, not a lapsed credential its holder shows.
    public var credentialRefusal: CredentialRefusal?
    /// The gzip form of `body`, kept by the handler with the body and made at most once for
    /// every answer that carries it (see `CompressedForm`); nil to compress at each answer.
    public var compressedForm: CompressedForm?

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.deferred = nil
        self.stream = nil
        self.representation = nil
        self.credentialRefusal = nil
        self.compressedForm = nil
    }

    /// A response whose body `stream` writes while the client stays connected (chunked).
    public static func stream(_ stream: ResponseStream, status: Int = 200, headers: HTTPHeaders) -> Response {
        var response = Response(status: status, headers: headers)
        response.stream = stream
        return response
    }

    /// A response that stands for `answer`, given later from another thread.
    public static func later(_ answer: DeferredResponse) -> Response {
        if let given = answer.response { return given }
        var response = Response(status: 0)
        response.deferred = answer
        return response
    }

    /// This response, or, when it stands for a later answer, that answer (waiting for it).
    public func settled() -> Response {
        deferred?.wait() ?? self
    }

    /// A response with a body of the given content type.
    public static func bytes(_ body: [UInt8], contentType: String, status: Int = 200) -> Response {
        var headers = HTTPHeaders(capacity: 4)
        headers.add(name: "Content-Type", value: contentType)
        return Response(status: status, headers: headers, body: body)
    }

    /// An `application/json` response whose body is already encoded.
    public static func json(_ body: [UInt8], status: Int = 200) -> Response {
        bytes(body, contentType: "application/json", status: status)
    }

    /// A `text/plain` response.
    public static func text(_ body: String, status: Int = 200) -> Response {
        bytes(Array(body.utf8), contentType: "text/plain; charset=utf-8", status: status)
    }
}

/// Why a 401 refused the credential it was shown.
public enum CredentialRefusal: Sendable, Equatable {
    /// The credential opens nothing: a mistake, or a guess.
    case unknown
    /// The credential was genuine and has lapsed (an idle session's token): not a guess.
    case expired
}

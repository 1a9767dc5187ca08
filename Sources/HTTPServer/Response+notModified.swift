// 304 Not Modified answers that know the 200 they stand for, so Content-Length tells the truth.

extension Response {
    /// The body and content type a 304 stands for: what a 200 to the same request would carry.
    public struct Representation: Sendable {
        public var body: [UInt8]
        public var contentType: String?
    }

    /// The 304 answer to a conditional GET whose full answer is `full`: its headers (ETag,
    /// Cache-Control, Vary, …) without the content type, no body, and `Content-Length` the
    /// length of `full`'s body as it would be sent (compressed when it would be).
    ///
    /// ```swift
    /// let full = Response.json(body)
    /// if Conditional.noneMatch(request, etag) { return .notModified(full) }
    /// ```
    public static func notModified(_ full: Response) -> Response {
        var headers = HTTPHeaders(capacity: full.headers.fields.count)
        for field in full.headers where !HTTPHeaders.equalNames(field.name, "Content-Type") {
            headers.add(name: field.name, value: field.value)
        }
        var response = Response(status: 304, headers: headers)
        response.representation = Representation(body: full.body, contentType: full.headers["Content-Type"])
        response.compressedForm = full.compressedForm  // its compressed length, made once too
        return response
    }
}

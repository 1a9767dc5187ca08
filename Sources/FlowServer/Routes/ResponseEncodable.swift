// Answers that encode themselves: a route returns a value, and the value knows its status, its
// headers and how its body is written, so the wire format of each answer lives in one place.
import HTTPServer
import JSON

/// What a route answers: a value that turns itself into a `Response`.
///
/// A route returns a typed answer (a `ReleaseAnswer`, a `SessionCreated`) rather than bytes it
/// wrote by hand; a problem is thrown as a `ResponseError`. Hummingbird's `ResponseGenerator`
/// is the model.
protocol ResponseEncodable: SendableMetatype {
    /// The response this answer is sent as.
    func response() -> Response
}

/// A response is already an answer: an answer that comes later (`Response.later`), a stream,
/// or a `304 Not Modified` goes back as it is.
extension Response: ResponseEncodable {
    func response() -> Response { self }
}

/// An answer whose body is a JSON document it writes itself.
///
/// ```swift
/// struct Greeting: JSONAnswer {
///     let name: String
///     func encode(into writer: inout JSONWriter) {
///         writer.beginObject(); writer.writeKey("hello"); writer.writeString(name); writer.endObject()
///     }
/// }
/// ```
/// `response()` writes `Content-Type: application/json`, then `ETag` when `etag` is set, then
/// `headers`, in that order.
protocol JSONAnswer: ResponseEncodable {
    /// 200 unless the answer says otherwise (201 for something made).
    var status: Int { get }
    /// The entity tag of what the body shows (`"4"` for a session at version 4), nil for none.
    var etag: String? { get }
    /// Headers beyond `Content-Type` and `ETag` (`Location`, `Cache-Control`).
    var headers: [(name: String, value: String)] { get }
    /// Bytes the body is expected to take, so the writer rarely grows.
    var capacity: Int { get }
    /// Writes the body.
    func encode(into writer: inout JSONWriter)
}

extension JSONAnswer {
    var status: Int { 200 }
    var etag: String? { nil }
    var headers: [(name: String, value: String)] { [] }
    var capacity: Int { 256 }

    /// The body alone, for an answer embedded in another document.
    func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        encode(into: &writer)
        return writer.takeBytes()
    }

    func response() -> Response {
        let extra = headers
        var fields = HTTPHeaders(capacity: 2 + extra.count)
        fields.add(name: "Content-Type", value: "application/json")
        if let etag { fields.add(name: "ETag", value: etag) }
        for header in extra { fields[header.name] = header.value }
        return Response(status: status, headers: fields, body: encoded())
    }
}

/// `204 No Content`: done, nothing to show.
struct NoContent: ResponseEncodable {
    func response() -> Response { Response(status: 204) }
}

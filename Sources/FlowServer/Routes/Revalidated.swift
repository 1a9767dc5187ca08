// Conditional GETs as a value: an answer, and whether the client's copy of it is still good.
import HTTPServer

/// An answer to a request that may carry `If-None-Match`: `304 Not Modified` (with the headers
/// a 200 would have carried) when the client's copy is current, the answer itself otherwise.
struct Revalidated<Answer: ResponseEncodable>: ResponseEncodable {
    let answer: Answer
    /// The client's tag names what the answer shows.
    let notModified: Bool

    func response() -> Response {
        notModified ? .notModified(answer.response()) : answer.response()
    }
}

/// A request's answer that comes once its session's turn has run (an action, a batch, a delete):
/// the connection waits without holding a thread.
extension DeferredResponse: ResponseEncodable {
    func response() -> Response { .later(self) }
}

/// Reading `If-None-Match` against an answer's tag.
enum IfNoneMatch {
    /// Whether `header` names `etag` (weakly, as RFC 9110 §13.1.2 compares), or is `*`; false
    /// without a header or with one that is not a list of entity tags.
    static func lists(_ etag: String, in header: String?) -> Bool {
        guard let header, let match = IfMatch(header) else { return false }
        return match.any || match.tags.contains { tag in
            (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }
}

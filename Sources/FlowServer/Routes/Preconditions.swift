// The conditional and idempotency headers of a write: `If-Match` and `Idempotency-Key`, parsed
// once, each with its 400 when it does not read.
import HTTPServer

/// What a write asks to hold before it is applied, and how a retry of it is recognised.
///
/// ```swift
/// let preconditions = try Preconditions(request.headers)
/// preconditions.ifMatch?.matches(4)        // the version the client saw
/// preconditions.idempotencyKey             // "tap-17": the same key, the same answer
/// ```
struct Preconditions: Sendable {
    /// `If-Match`: `*` or the entity tags of the versions the write may apply to; nil when absent.
    let ifMatch: IfMatch?
    /// `Idempotency-Key`: 1 to 255 visible ASCII characters; nil when absent.
    let idempotencyKey: String?

    /// Reads both headers, `If-Match` first.
    init(_ headers: HTTPHeaders) throws(ResponseError) {
        ifMatch = try Self.ifMatch(headers)
        idempotencyKey = try Self.idempotencyKey(headers)
    }

    static func ifMatch(_ headers: HTTPHeaders) throws(ResponseError) -> IfMatch? {
        guard let header = headers["If-Match"] else { return nil }
        guard let parsed = IfMatch(header) else {
            throw ResponseError(.problem(400, "If-Match must be * or entity tags such as \"4\"; found \(header).",
                                         type: ProblemType.malformed))
        }
        return parsed
    }

    static func idempotencyKey(_ headers: HTTPHeaders) throws(ResponseError) -> String? {
        guard var key = headers["Idempotency-Key"] else { return nil }
        // Over the bytes themselves: through `String.UTF8View`'s iterator, some 30 instructions a byte.
        guard (1...255).contains(key.utf8.count), key.withUTF8({ $0.allSatisfy { $0 > 0x20 && $0 < 0x7F } }) else {
            throw ResponseError(.problem(400, "Idempotency-Key must be 1 to 255 visible ASCII characters.",
                                         type: ProblemType.malformed))
        }
        return key
    }
}

// RFC 9457 problem documents, the body of every error answer.

/// An `application/problem+json` document (RFC 9457).
///
/// ```swift
/// ProblemDetails(status: 404, title: "Not Found", detail: "No route for GET /nope").response
/// ```
public struct ProblemDetails: Sendable {
    /// One field-level problem: where (a JSON Pointer into the request body, or a parameter name) and what.
    public struct FieldError: Sendable, Equatable {
        public var pointer: String
        public var detail: String
        public init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }
    }

    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    public var errors: [FieldError]
    /// Extension members (RFC 9457 §3.2), each a name and its value as JSON text, such as
    /// `("code", "\"stale-source\"")`.
    public var extensions: [(name: String, json: String)] = []

    /// At most this many field errors are written; `errorsOmitted` counts the rest.
    public static let maxErrors = 50

    /// `type` defaults to `about:blank`, as RFC 9457 says when the status alone says what happened.
    public init(status: Int, title: String? = nil, detail: String, type: String = "about:blank", errors: [FieldError] = []) {
        self.type = type
        self.title = title ?? HTTPStatus.reason(status)
        self.status = status
        self.detail = detail
        self.errors = errors
    }

    /// The encoded document.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96 + detail.utf8.count)
        out.append(contentsOf: #"{"type":"#.utf8)
        Self.appendString(type, to: &out)
        out.append(contentsOf: #","title":"#.utf8)
        Self.appendString(title, to: &out)
        out.append(contentsOf: #","status":"#.utf8)
        out.append(contentsOf: String(status).utf8)
        out.append(contentsOf: #","detail":"#.utf8)
        Self.appendString(detail, to: &out)
        if !extensions.contains(where: { $0.name == "code" }) {
            out.append(contentsOf: #","code":"#.utf8)
            Self.appendString(code, to: &out)
        }
        if !errors.isEmpty {
            out.append(contentsOf: #","errors":["#.utf8)
            // The answer stays small whatever the request: the first problems say what to fix.
            for (index, error) in errors.prefix(Self.maxErrors).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #"{"pointer":"#.utf8)
                Self.appendString(error.pointer, to: &out)
                out.append(contentsOf: #","detail":"#.utf8)
                Self.appendString(error.detail, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
            if errors.count > Self.maxErrors {
                out.append(contentsOf: #","errorsOmitted":"#.utf8)
                out.append(contentsOf: String(errors.count - Self.maxErrors).utf8)
            }
        }
        for member in extensions {
            out.append(UInt8(ascii: ","))
            Self.appendString(member.name, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: member.json.utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The stable, machine-readable `code` member every problem carries: the one given in
    /// `extensions`, else the last segment of a URN `type` (`urn:flowstack:problem:not-found` →
    /// `not-found`), else the status's (`ProblemDetails.code(forStatus:)`).
    public var code: String {
        for member in extensions where member.name == "code" {
            // Given as JSON text: a plain string literal (codes never need escapes).
            return String(member.json.dropFirst().dropLast())
        }
        if type.hasPrefix("urn:"), let last = type.split(separator: ":").last, !last.isEmpty { return String(last) }
        return Self.code(forStatus: status)
    }

    /// The code of a problem that names no more specific one, by status.
    public static func code(forStatus status: Int) -> String {
        switch status {
        case 400: "malformed-request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not-found"
        case 405: "method-not-allowed"
        case 406: "not-acceptable"
        case 409: "conflict"
        case 411: "length-required"
        case 412: "precondition-failed"
        case 413: "body-too-large"
        case 415: "unsupported-media-type"
        case 422: "unprocessable"
        case 428: "precondition-required"
        case 429: "rate-limited"
        case 431: "headers-too-large"
        case 503: "unavailable"
        case 500..<600: "internal-error"
        default: "http-\(status)"
        }
    }

    /// The response that carries this problem.
    /// The problem as an answer. A 503 says when to try again (`Retry-After: 1`): every 503
    /// FlowStack gives is a passing state (a database that does not answer, a stopping server).
    public var response: Response {
        var response = Response.bytes(json, contentType: "application/problem+json", status: status)
        if status == 503 { response.headers["Retry-After"] = "1" }
        return response
    }

    /// Appends `value` as a JSON string literal.
    static func appendString(_ value: String, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension Response {
    /// A problem answer: `Response.problem(404, "No session s-1")`.
    public static func problem(_ status: Int, _ detail: String, title: String? = nil, type: String = "about:blank",
                               errors: [ProblemDetails.FieldError] = [],
                               extensions: [(name: String, json: String)] = []) -> Response {
        var problem = ProblemDetails(status: status, title: title, detail: detail, type: type, errors: errors)
        problem.extensions = extensions
        return problem.response
    }
}

/// Reason phrases of the statuses FlowStack answers with.
public enum HTTPStatus {
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 409: "Conflict"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "HTTP \(status)"
        }
    }
}

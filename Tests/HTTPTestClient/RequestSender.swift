// One protocol for sending test requests, directly to a handler or through a live socket.
import HTTPServer

/// Sends a request and returns the response; tests written against it run both without a
/// socket (`DirectSender`) and through libmicrohttpd (`SocketSender`).
public protocol RequestSender: Sendable {
    func send(_ request: Request) throws -> Response
}

extension RequestSender {
    /// Sends `method path` with an optional body and headers.
    public func send(_ method: String, _ path: String, body: String? = nil, headers: [(String, String)] = []) throws -> Response {
        var request = Request(method: method, path: path)
        if let question = path.firstIndex(of: "?") {
            request.path = String(path[..<question])
            request.query = path[path.index(after: question)...].split(separator: "&").map { item in
                let parts = item.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = Array(body.utf8)
            if request.headers["Content-Type"] == nil { request.headers["Content-Type"] = "application/json" }
        }
        return try send(request)
    }
}

/// Calls the handler in-process, as the server would after reading the request.
public struct DirectSender: RequestSender {
    let handler: Handler
    public init(_ handler: @escaping Handler) { self.handler = handler }
    public func send(_ request: Request) throws -> Response {
        var response = handler(request).settled()
        if request.method == "HEAD" { response.body = [] }
        return response
    }
}

/// Sends over a new loopback connection to a running `HTTPServer`.
public struct SocketSender: RequestSender {
    public let port: Int
    public init(port: Int) { self.port = port }

    public func send(_ request: Request) throws -> Response {
        let connection = try RawConnection(port: port)
        var target = request.path
        if !request.query.isEmpty {
            target += "?" + request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        }
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for field in request.headers { head += "\(field.name): \(field.value)\r\n" }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "\r\n"
        do {
            try connection.send(Array(head.utf8) + request.body)
        } catch let failure as RawConnection.Failure where failure.cutOff {
            // The server answered and closed before it read the whole body (a 413 on the
            // Content-Length): its answer is in the socket's buffer, read below.
        }
        let raw = try connection.readResponse(headRequest: request.method == "HEAD")
        var headers = HTTPHeaders()
        for (name, value) in raw.headers { headers.add(name: name, value: value) }
        return Response(status: raw.status, headers: headers, body: raw.body)
    }
}

extension Response {
    /// The body as UTF-8 text, for assertions.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

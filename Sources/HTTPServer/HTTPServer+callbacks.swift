// The C callbacks libmicrohttpd calls on its threads, and the per-request exchange they fill.
import CMicroHTTPD

/// One request as it is being received: filled across libmicrohttpd's calls, freed on completion.
final class Exchange {
    let method: String
    let path: String
    /// Set once, when the request's headers have all been read (`access`).
    var headers = HTTPHeaders()
    var query: [(name: String, value: String)] = []
    var body: [UInt8] = []
    /// A response was queued (or, with `Content-Length` over the limit, queued before the body).
    var responded = false
    /// Bytes of a chunked body dropped because the body went over the limit.
    var discarded = 0
    /// Counted in the server's requests in flight (from the handler's start to the end of the
    /// answer); a request still uploading at shutdown is not waited for.
    var counted = false
    /// The request's id, once its handler ran.
    var requestId: String?
    /// Set when the handler's answer comes later: the connection is suspended until it is given.
    var later: DeferredResponse?

    init(method: String, path: String) {
        self.method = method
        self.path = path
    }
}

/// A connection pointer handed to the thread that resumes it (libmicrohttpd allows resuming from any thread).
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

// These are file-level constants, not closures of main.swift: libmicrohttpd calls them on its
// own threads, where main-actor isolated code would trap.

let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, exchangeSlot in
    guard let cls, let connection, let exchangeSlot, let uploadDataSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    return server.access(connection: connection, url: url, method: method,
                         uploadData: uploadData, uploadDataSize: uploadDataSize, exchangeSlot: exchangeSlot)
}

let requestCompleted: MHD_RequestCompletedCallback = { cls, _, exchangeSlot, _ in
    guard let cls, let exchangeSlot, let opaque = exchangeSlot.pointee else { return }
    exchangeSlot.pointee = nil
    let exchange = Unmanaged<Exchange>.fromOpaque(opaque).takeRetainedValue()
    if exchange.counted {
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        server.inFlight.subtract(1, ordering: .releasing)
    }
}

/// A connection closed (libmicrohttpd tells of each one it started); the listener counted it when
/// it handed it over.
let connectionNotified: MHD_NotifyConnectionCallback = { cls, _, _, code in
    guard let cls, code == .CONNECTION_NOTIFY_CLOSED else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    server.connections.subtract(1, ordering: .relaxed)
}

/// Adds each header to the `HTTPHeaders` that `cls` points to: a local of the caller's, not
/// the exchange's own, whose every change was a checked access to a class's property.
private let collectHeader: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    cls.assumingMemoryBound(to: HTTPHeaders.self).pointee.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
    return .YES
}

private let collectQueryItem: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let exchange = Unmanaged<Exchange>.fromOpaque(cls).takeUnretainedValue()
    exchange.query.append((PercentDecoding.decode(String(cString: key), plusIsSpace: true),
                           value.map { PercentDecoding.decode(String(cString: $0), plusIsSpace: true) } ?? ""))
    return .YES
}

extension HTTPServer {
    /// One call of libmicrohttpd's access handler: first the headers, then body chunks, then the
    /// end of the body, when the handler runs.
    func access(
        connection: OpaquePointer,
        url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?,
        uploadDataSize: UnsafeMutablePointer<Int>,
        exchangeSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let opaque = exchangeSlot.pointee else {
            let exchange = Exchange(method: method.map { String(cString: $0) } ?? "GET",
                                    path: url.map(PercentDecoding.path(fromRaw:)) ?? "/")
            exchangeSlot.pointee = Unmanaged.passRetained(exchange).toOpaque()
            var headers = HTTPHeaders(capacity: 8)
            withUnsafeMutablePointer(to: &headers) { _ = MHD_get_connection_values(connection, .HEADER_KIND, collectHeader, $0) }
            stripCodedTags(&headers)
            exchange.headers = headers
            if let problem = Self.framingProblem(headers) {
                exchange.responded = true
                var response = Response.problem(400, problem)
                response.headers["Connection"] = "close"
                return queue(response, for: exchange, on: connection)
            }
            if let length = headers["Content-Length"], let bytes = Int(length), bytes > configuration.maxBodyBytes {
                exchange.responded = true
                return queue(tooLarge(declared: bytes), for: exchange, on: connection)
            }
            return .YES
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(opaque).takeUnretainedValue()
        let size = uploadDataSize.pointee
        if size > 0 {
            uploadDataSize.pointee = 0
            if exchange.discarded > 0 || exchange.body.count + size > configuration.maxBodyBytes {
                // libmicrohttpd accepts a response only before the body or after all of it, so a
                // chunked body over the limit is read and dropped, then answered 413; a client
                // that keeps sending far past the limit is disconnected instead.
                exchange.body = []
                exchange.discarded += size
                return exchange.discarded > Self.discardLimit(configuration.maxBodyBytes) ? .NO : .YES
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                    exchange.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
                }
            }
            return .YES
        }
        if exchange.responded {
            // Called again after a resume: the answer the connection waited for is there.
            if let later = exchange.later, let answer = later.response {
                exchange.later = nil
                return queue(answer, for: exchange, requestId: exchange.requestId, on: connection)
            }
            return .YES
        }
        exchange.responded = true
        if exchange.discarded > 0 {
            return queue(tooLarge(declared: nil), for: exchange, on: connection)
        }
        MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectQueryItem,
                                  Unmanaged.passUnretained(exchange).toOpaque())
        var request = Request(method: exchange.method, path: exchange.path, query: exchange.query,
                              headers: exchange.headers, body: exchange.body)
        request.requestId = requestId(for: exchange)
        request.peer = flowstack_client_address(connection).flatMap { IPAddress($0) }
        exchange.body = []
        exchange.counted = true
        inFlight.add(1, ordering: .relaxed)
        exchange.requestId = request.requestId
        let response = handler(request)
        if let later = response.deferred, let answer = later.response {
            // Answered while the handler ran (a refused or replayed action): no suspension.
            return queue(answer, for: exchange, requestId: request.requestId, on: connection)
        }
        if let later = response.deferred {
            exchange.later = later
            suspend(connection, until: later)
            return .YES
        }
        return queue(response, for: exchange, requestId: request.requestId, on: connection)
    }

    /// Suspends the connection until `later` is given, so that no thread waits for it (an action
    /// waiting for its commit); libmicrohttpd then calls the access handler again, which queues
    /// the answer.
    private func suspend(_ connection: OpaquePointer, until later: DeferredResponse) {
        MHD_suspend_connection(connection)
        let key = ObjectIdentifier(later)
        suspended.withLock { $0[key] = later }
        let handle = ConnectionHandle(pointer: connection)
        later.whenComplete { [self] _ in
            suspended.withLock { _ = $0.removeValue(forKey: key) }
            resume(handle)
        }
    }

    /// Resumes a suspended connection, unless the daemon is stopping.
    ///
    /// No lock around the resume (the committing thread resumes many connections while HTTP
    /// threads suspend others): shutdown sets `stopped`, then waits for `resuming` to drain; a
    /// thread that counted itself in before reading `stopped` as false finishes its resume
    /// before the daemon stops, any later one sees `stopped`.
    func resume(_ connection: ConnectionHandle) {
        resuming.add(1, ordering: .sequentiallyConsistent)
        if !stopped.load(ordering: .sequentiallyConsistent) { MHD_resume_connection(connection.pointer) }
        resuming.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Why the headers leave the body's length unclear, or nil. libmicrohttpd decodes only
    /// `Transfer-Encoding: chunked`: with any other coding it would read until the client closes,
    /// and with both headers, or two different lengths, it picks one where a proxy in front may
    /// have picked the other. RFC 9112 §6.1 and §6.3 have such requests refused, and the
    /// connection closed, as the rest of its bytes cannot be framed.
    static func framingProblem(_ headers: HTTPHeaders) -> String? {
        // Most requests carry neither header, or one Content-Length: answered without allocating.
        if headers.firstIndex(named: "Transfer-Encoding") == nil && headers.count(named: "Content-Length") <= 1 { return nil }
        let codings = headers.values("Transfer-Encoding")
        let lengths = headers.values("Content-Length")
        if !codings.isEmpty {
            guard codings.count == 1, codings[0].lowercased() == "chunked" else {
                return "Transfer-Encoding \(codings.joined(separator: ", ")) is not supported; send the body with Content-Length or Transfer-Encoding: chunked."
            }
            guard lengths.isEmpty else {
                return "Content-Length and Transfer-Encoding together leave the body's length unclear; send one of them."
            }
        }
        if Set(lengths).count > 1 {
            return "The Content-Length fields disagree (\(lengths.joined(separator: ", "))); send one."
        }
        return nil
    }

    /// How much of an over-limit chunked body is read (to answer 413) before the connection is closed.
    static func discardLimit(_ maxBody: Int) -> Int {
        max(maxBody, 16 << 20)
    }

    private func tooLarge(declared: Int?) -> Response {
        let limit = configuration.maxBodyBytes
        let detail = declared.map { "The body of \($0) bytes is over the limit of \(limit) bytes." }
            ?? "The body is over the limit of \(limit) bytes."
        var response = Response.problem(413, detail)
        response.headers["Connection"] = "close"
        return response
    }

    private func requestId(for exchange: Exchange) -> String {
        if let sent = exchange.headers["X-Request-Id"], RequestIdGenerator.isUsable(sent) { return sent }
        return requestIds.next()
    }

    private func queue(_ response: consuming Response, for exchange: Exchange, requestId: String? = nil,
                       on connection: OpaquePointer) -> MHD_Result {
        if !exchange.counted {
            exchange.counted = true
            inFlight.add(1, ordering: .relaxed)
        }
        var response = consume response
        code(&response, for: exchange)
        let mhdResponse: OpaquePointer?
        if response.status == 304 {
            mhdResponse = notModifiedResponse(response)
        } else if let stream = response.stream, exchange.method != "HEAD" {
            stream.attach(to: connection, server: self)
            let key = ObjectIdentifier(stream)
            streams.withLock { $0[key] = stream }
            let context = Unmanaged.passRetained(stream)
            mhdResponse = MHD_create_response_from_callback(
                UInt64.max, Self.streamBlockSize, streamReader, context.toOpaque(), streamReleased)
            if mhdResponse == nil {
                context.release()
                streams.withLock { _ = $0.removeValue(forKey: key) }
                stream.closed()
            }
        } else {
            if let stream = response.stream { stream.closed() }
            let body = response.body
            mhdResponse = body.withUnsafeBytes { raw in
                flowstack_response_copy(raw.count, raw.baseAddress)
            }
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers {
            // withCString lends a native string's own bytes; passing the String itself would
            // make a C copy of each name and value first.
            _ = field.name.withCString { name in
                field.value.withCString { value in MHD_add_response_header(mhdResponse, name, value) }
            }
        }
        _ = (requestId ?? requestIdFor(exchange)).withCString { MHD_add_response_header(mhdResponse, "X-Request-Id", $0) }
        if quiescing.load(ordering: .relaxed) {
            // Stopping: tell keep-alive clients to reconnect (to the next instance) after this answer.
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        return MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
    }

    private func requestIdFor(_ exchange: Exchange) -> String { requestId(for: exchange) }
}

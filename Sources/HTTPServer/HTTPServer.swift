// libmicrohttpd under a small Swift API: start, serve handlers on its thread pool, stop gracefully.
import CMicroHTTPD
import Locking
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why a server could not start.
public struct HTTPServerError: Error, CustomStringConvertible {
    public let description: String
}

/// An HTTP/1.1 server on libmicrohttpd, in thread-pool + epoll mode.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 0
/// let server = HTTPServer(configuration: configuration, handler: router.handle)
/// try server.start()
/// print(server.port)       // the ephemeral port bound
/// server.shutdown()         // stop accepting, finish requests in flight, close
/// ```
/// The request body is gathered in memory up to `maxBodyBytes`; a larger one is answered 413
/// as soon as it is known (from `Content-Length`, or while a chunked body arrives). One whose
/// length the headers leave unclear is answered 400 before its body, and its connection closed.
public final class HTTPServer: Sendable {
    public let configuration: ServerConfiguration
    let handler: Handler
    let requestIds = RequestIdGenerator()
    /// Requests between the start of their handler and the end of their answer.
    let inFlight = Atomic<Int>(0)
    /// Connections open: counted when handed to libmicrohttpd, uncounted at its close notice. (One
    /// it drops before starting it, for want of memory for its pool, would stay counted.)
    let connections = Atomic<Int>(0)
    /// Set when shutdown begins: answers then close their connection.
    let quiescing = Atomic<Bool>(false)
    private let state = Mutex<State>(State())
    /// Answers that suspended connections wait for, so that shutdown can give the ones still
    /// missing after the grace period.
    let suspended = PThreadMutex<[ObjectIdentifier: DeferredResponse]>([:])
    /// Streamed responses being served, so that shutdown can end them.
    let streams = PThreadMutex<[ObjectIdentifier: ResponseStream]>([:])
    /// Bytes libmicrohttpd asks a stream for at most per call.
    static let streamBlockSize = 16 * 1024
    /// Set before the daemon stops; from then on no connection is resumed.
    let stopped = Atomic<Bool>(false)
    /// Threads between reading `stopped` as false and returning from `MHD_resume_connection`:
    /// shutdown waits for them before stopping the daemon.
    let resuming = Atomic<Int>(0)

    struct State: @unchecked Sendable {
        var daemon: OpaquePointer?
        var context: Unmanaged<HTTPServer>?
        var listener: Listener?
        var port: Int = 0
    }

    public init(configuration: ServerConfiguration, handler: @escaping Handler) {
        self.configuration = configuration
        self.handler = handler
    }

    /// The port bound, once started.
    public var port: Int { state.withLock { $0.port } }

    /// Streamed responses open now.
    public var openStreams: Int { streams.withLock { $0.count } }

    /// Requests being read, handled or answered now.
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// Client connections open now.
    public var openConnections: Int { connections.load(ordering: .relaxed) }

    /// Binds and starts serving on libmicrohttpd's threads; returns at once.
    public func start() throws {
        try state.withLock { state in
            guard state.daemon == nil else { return }
            let address = try SocketAddress.resolve(host: configuration.host, port: configuration.port)
            let listener: Listener
            do {
                listener = try Listener(address: address, backlog: configuration.listenBacklog)
            } catch {
                throw HTTPServerError(description:
                    "could not listen on \(configuration.host):\(configuration.port): \(error) (address in use, or not an address of this machine?)")
            }
            let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
                | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            let context = Unmanaged.passRetained(self)
            let daemon = flowstack_start_daemon(
                flags,
                accessHandler, context.toOpaque(),
                requestCompleted, context.toOpaque(),
                connectionNotified, context.toOpaque(),
                UInt32(clamping: max(1, configuration.threads)),
                UInt32(clamping: max(0, configuration.connectionTimeoutSeconds)),
                // Each worker may hold them all: the listener keeps the whole server within the
                // limit, and a worker given more than its share must not close what it was given.
                UInt32(clamping: min(max(1, configuration.connectionLimit), Int(UInt32.max)) * max(1, min(configuration.threads, 4096))),
                UInt32(clamping: max(0, configuration.perIPConnectionLimit)),
                max(4096, configuration.connectionMemoryBytes))
            guard let daemon else {
                listener.stop()
                context.release()
                throw HTTPServerError(description: "could not start libmicrohttpd's daemon on \(configuration.host):\(configuration.port)")
            }
            let limit = max(1, configuration.connectionLimit)
            do {
                try listener.start(daemon: daemon, isFull: { [weak self] in
                    (self?.openConnections ?? 0) >= limit
                }, admitted: { [weak self] in
                    self?.connections.add(1, ordering: .relaxed)
                })
            } catch {
                listener.stop()
                MHD_stop_daemon(daemon)
                context.release()
                throw error
            }
            state.daemon = daemon
            state.context = context
            state.listener = listener
            state.port = listener.port
        }
    }

    /// Stops gracefully: stops accepting, waits up to `gracePeriod` for requests being handled to
    /// be answered (a request still uploading its body is not waited for), then closes every
    /// connection. Answers sent meanwhile say `Connection: close`. Safe to call more than once.
    public func shutdown(gracePeriod: Duration = .seconds(10)) {
        let (daemon, context, listener) = state.withLock { state -> (OpaquePointer?, Unmanaged<HTTPServer>?, Listener?) in
            defer { state.daemon = nil; state.context = nil; state.listener = nil }
            return (state.daemon, state.context, state.listener)
        }
        guard let daemon else { return }
        quiescing.store(true, ordering: .relaxed)
        // New clients are refused from here on; connections open go on until answered.
        listener?.stop()
        // Streams never end by themselves: end them now, after what they have queued.
        for stream in streams.withLock({ Array($0.values) }) { stream.finish() }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: gracePeriod)
        while inFlight.load(ordering: .acquiring) > 0 && clock.now < deadline {
            usleep(2_000)
        }
        // Answers still awaited (work that outlived the grace period) become 503s now, so their
        // connections resume and close before the daemon stops; the work's own answer, if it
        // comes later, is dropped. A 503 acknowledges nothing.
        let waiting = suspended.withLock { Array($0.values) }
        if !waiting.isEmpty {
            var closing = Response.problem(503, "The server is stopping; try again.", title: "Service Unavailable",
                                           extensions: [("code", #""server-stopping""#)])
            closing.headers["Connection"] = "close"
            for later in waiting { later.complete(closing) }
            let drained = clock.now.advanced(by: .seconds(1))
            while inFlight.load(ordering: .acquiring) > 0 && clock.now < drained { usleep(2_000) }
        }
        stopped.store(true, ordering: .sequentiallyConsistent)
        while resuming.load(ordering: .sequentiallyConsistent) > 0 { usleep(100) }
        MHD_stop_daemon(daemon)
        context?.release()
    }
}

/// Makes request ids: a random per-process prefix and a counter, cheap and unique enough to grep.
final class RequestIdGenerator: Sendable {
    /// This process's random part, in lowercase hex: at most 8 bytes.
    private let prefix: [UInt8]
    private let counter = Atomic<UInt64>(0)

    init() {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        prefix = Array(String(value & 0xFFFF_FFFF, radix: 16).utf8)
    }

    /// `prefix-n`, `n` in lowercase hex, as `String(n, radix: 16)` writes it; written in one
    /// buffer (up to 15 bytes, as most are, it is a small string and allocates nothing).
    func next() -> String {
        Self.format(prefix: prefix, counter.add(1, ordering: .relaxed).newValue)
    }

    static func format(prefix: [UInt8], _ n: UInt64) -> String {
        let digits = max(1, (UInt64.bitWidth - n.leadingZeroBitCount + 3) / 4)
        let count = prefix.count + 1 + digits
        return String(unsafeUninitializedCapacity: count) { buffer in
            for (index, byte) in prefix.enumerated() { buffer[index] = byte }
            buffer[prefix.count] = UInt8(ascii: "-")
            var rest = n
            for index in stride(from: count - 1, through: prefix.count + 1, by: -1) {
                let digit = UInt8(truncatingIfNeeded: rest & 0xF)
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                rest >>= 4
            }
            return count
        }
    }

    /// A client's id is kept when it is 1...128 visible ASCII characters; anything else is replaced.
    static func isUsable(_ id: String) -> Bool {
        let bytes = id.utf8
        return !bytes.isEmpty && bytes.count <= 128 && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

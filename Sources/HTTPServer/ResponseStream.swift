// A response body written over time (Server-Sent Events), whose connection waits without a
// thread while there is nothing to send.
import CMicroHTTPD
import Locking
#if canImport(Glibc)
import Glibc
#endif

/// A response body that others write to while the client is connected, such as a stream of
/// Server-Sent Events. The handler returns `Response.stream(stream, headers:)`; any thread then
/// calls `write(_:replacingQueued:)`, `finish()` or `abort()`.
///
/// ```swift
/// let stream = ResponseStream(queueLimit: 64 * 1024) { print("client gone") }
/// events.subscribe(stream)
/// return .stream(stream, headers: ["Content-Type": "text/event-stream"])
/// ```
/// Served by `HTTPServer` as a chunked body read through a libmicrohttpd callback: while the
/// queue is empty the connection is suspended, so an idle stream holds no thread, only its
/// connection's memory. Written bytes wait in a queue bounded by `queueLimit`: a client that
/// reads slower than the stream is written is cut off (`abort`) rather than allowed to grow it.
/// A client that stops reading altogether is closed by the server's connection timeout.
/// A suspended connection does not notice its client leaving: the next write finds out.
public final class ResponseStream: Sendable {
    private struct State {
        /// Written bytes not yet handed to libmicrohttpd; the first may be partly sent.
        var chunks: [[UInt8]] = []
        /// Bytes of `chunks[0]` already sent.
        var offset = 0
        var queuedBytes = 0
        /// The last chunk was written as replaceable, and a newer replaceable one may take its place.
        var replaceableTail = false
        var ending = Ending.none
        /// The connection is suspended waiting for bytes: the next write resumes it.
        var suspended = false
        var connection: ConnectionHandle?
        var server: HTTPServer?
        /// The response is gone (sent to its end, or its connection closed).
        var closed = false
    }

    private enum Ending {
        case none, finish, abort
    }

    /// Most bytes queued for a client before it is cut off.
    public let queueLimit: Int
    private let state = PThreadMutex(State())
    private let onClose: @Sendable () -> Void

    /// - Parameters:
    ///   - queueLimit: bytes written but not yet sent, at most; a write past it aborts the stream.
    ///   - onClose: runs once when the response is over: finished, aborted, or its client gone.
    public init(queueLimit: Int = 256 * 1024, onClose: @escaping @Sendable () -> Void = {}) {
        self.queueLimit = max(1, queueLimit)
        self.onClose = onClose
    }

    /// Whether the stream still takes writes.
    public var isOpen: Bool { state.withLock { !$0.closed && $0.ending == .none } }

    /// Queues `bytes` for the client. With `replacingQueued`, they replace the last chunk if
    /// that one was also written replacing and not a byte of it is sent yet (a newer whole
    /// state makes an older unsent one useless). Returns false when the stream no longer takes
    /// writes; a write that would pass `queueLimit` aborts the stream and returns false.
    @discardableResult
    public func write(_ bytes: [UInt8], replacingQueued: Bool = false) -> Bool {
        let (accepted, wake) = state.withLock { state -> (Bool, ConnectionHandle?) in
            guard !state.closed, state.ending == .none else { return (false, nil) }
            if replacingQueued, state.replaceableTail, let last = state.chunks.last,
               state.chunks.count > 1 || state.offset == 0 {
                state.queuedBytes -= last.count
                state.chunks.removeLast()
            }
            // One chunk on its way and this one are always taken, however large (a state
            // document over the limit can still be streamed); beyond that, the limit holds.
            guard state.chunks.count <= 1 || state.queuedBytes + bytes.count <= queueLimit else {
                state.ending = .abort
                return (false, Self.takeSuspended(&state))
            }
            state.chunks.append(bytes)
            state.queuedBytes += bytes.count
            state.replaceableTail = replacingQueued
            return (true, Self.takeSuspended(&state))
        }
        if let wake { resume(wake) }
        return accepted
    }

    /// Queues `bytes` only when nothing is waiting to be sent (a heartbeat: useless behind data).
    public func writeIfIdle(_ bytes: [UInt8]) {
        let wake = state.withLock { state -> ConnectionHandle? in
            guard !state.closed, state.ending == .none, state.chunks.isEmpty else { return nil }
            state.chunks.append(bytes)
            state.queuedBytes += bytes.count
            state.replaceableTail = false
            return Self.takeSuspended(&state)
        }
        if let wake { resume(wake) }
    }

    /// Ends the body after what is queued (the chunked encoding's last chunk is sent).
    public func finish() { end(.finish) }

    /// Closes the connection now, without sending what is queued.
    public func abort() { end(.abort) }

    private func end(_ ending: Ending) {
        let wake = state.withLock { state -> ConnectionHandle? in
            guard !state.closed, state.ending == .none else { return nil }
            state.ending = ending
            return Self.takeSuspended(&state)
        }
        if let wake { resume(wake) }
    }

    /// Aborts the stream when its client has left: while the connection is suspended nothing
    /// reads its socket, so a peek tells whether the client closed it (end of file) or reset it.
    /// Without this, a closed client would be found only by the second write after it left.
    /// Returns true when the client is gone.
    @discardableResult
    public func abortIfClientLeft() -> Bool {
        let wake = state.withLock { state -> ConnectionHandle? in
            guard state.suspended, !state.closed, state.ending == .none, let connection = state.connection else { return nil }
            let descriptor = flowstack_connection_fd(connection.pointer)
            guard descriptor >= 0 else { return nil }
            var byte: UInt8 = 0
            let peeked = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            guard peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) else { return nil }
            state.ending = .abort
            return Self.takeSuspended(&state)
        }
        if let wake { resume(wake) }
        return wake != nil
    }

    private static func takeSuspended(_ state: inout State) -> ConnectionHandle? {
        guard state.suspended else { return nil }
        state.suspended = false
        return state.connection
    }

    private func resume(_ connection: ConnectionHandle) {
        guard let server = state.withLock({ $0.server }) else { return }
        server.resume(connection)
    }

    // MARK: Served by HTTPServer

    /// Binds the stream to the connection it answers, before its response is queued.
    func attach(to connection: OpaquePointer, server: HTTPServer) {
        state.withLock { state in
            state.connection = ConnectionHandle(pointer: connection)
            state.server = server
        }
    }

    /// libmicrohttpd asks for up to `capacity` bytes: gives what is queued, or ends the body, or
    /// suspends the connection until the next write. Called on the connection's thread.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        state.withLock { state -> Int in
            if state.ending == .abort { return Self.endWithError }
            var written = 0
            while written < buffer.count, !state.chunks.isEmpty {
                let chunk = state.chunks[0]
                let count = min(buffer.count - written, chunk.count - state.offset)
                chunk.withUnsafeBytes { source in
                    let from = UnsafeRawBufferPointer(rebasing: source[state.offset..<(state.offset + count)])
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)]).copyMemory(from: from)
                }
                written += count
                state.offset += count
                if state.offset == chunk.count {
                    state.chunks.removeFirst()
                    state.offset = 0
                    state.queuedBytes -= chunk.count
                    if state.chunks.isEmpty { state.replaceableTail = false }
                }
            }
            if written > 0 { return written }
            if state.ending == .finish { return Self.endOfStream }
            guard let connection = state.connection else { return Self.endWithError }
            // Suspended under the lock: a write can only see `suspended` once the suspension
            // is done, so every resume follows its suspend.
            state.suspended = true
            MHD_suspend_connection(connection.pointer)
            return 0
        }
    }

    /// The response is gone; runs `onClose` once.
    func closed() {
        let (first, server) = state.withLock { state -> (Bool, HTTPServer?) in
            defer { state.closed = true; state.chunks = []; state.queuedBytes = 0; state.server = nil; state.connection = nil }
            return (!state.closed, state.server)
        }
        guard first else { return }
        server?.streams.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
        onClose()
    }

    static let endOfStream = -1
    static let endWithError = -2
}

let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return ResponseStream.endWithError }
    let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeUnretainedValue()
    return stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
}

let streamReleased: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeRetainedValue()
    stream.closed()
}

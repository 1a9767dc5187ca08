// A small HTTP/1.1 client for the nodes of one cluster: a node forwards a request to the node
// that owns its session, over kept-alive loopback or LAN connections. Blocking; no TLS.
import CMicroHTTPD  // the socket constants: with the shim including <sys/socket.h>, Swift may find them only through it
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Sends requests to other nodes (`http://host:port` addresses) and reads their answers whole.
///
/// Only what a node's answer to a forwarded request can be is read: a status line, headers and a
/// body of `Content-Length` bytes, or chunked, or up to the connection's end. Connections are
/// kept for `keepIdle` after an answer and used again (fewer than the peer's own idle timeout,
/// so the peer does not close one under a request).
///
/// ```swift
/// let peers = PeerClient()
/// let answer = try peers.send(request, to: "http://10.0.0.12:8080", extraHeaders: [("X-FlowStack-Forwarded", "1")])
/// ```
public final class PeerClient: Sendable {
    /// Why a request was not answered: `sent` says whether it may have reached the peer.
    public struct Failure: Error, CustomStringConvertible {
        public let sent: Bool
        public let description: String
    }

    private struct Idle {
        var fd: Int32
        var since: ContinuousClock.Instant
    }

    private let idle = Mutex<[String: [Idle]]>([:])
    let timeout: Duration
    let keepIdle: Duration
    /// Answers larger than this are refused (a peer's answer is a session's state, a few KB).
    let maxBody: Int

    public init(timeout: Duration = .milliseconds(4500), keepIdle: Duration = .seconds(5), maxBody: Int = 16 << 20) {
        self.timeout = timeout
        self.keepIdle = keepIdle
        self.maxBody = maxBody
    }

    deinit {
        for list in idle.withLock({ $0.values }) { for connection in list { close(connection.fd) } }
    }

    /// Sends `request` (its method, path, query, the headers but hop-by-hop ones, the body) to
    /// `peer`, plus `extraHeaders`, and returns the peer's answer. A kept connection is used
    /// again only when the peer has not closed it (checked before sending); the request is never
    /// sent twice.
    public func send(_ request: Request, to peer: String, extraHeaders: [(String, String)] = []) throws(Failure) -> Response {
        guard let (host, port) = Self.hostAndPort(peer) else {
            throw Failure(sent: false, description: "\(peer) is not an http://host:port address")
        }
        let bytes = Self.encode(request, host: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)", extraHeaders: extraHeaders)
        let key = "\(host):\(port)"
        let fd: Int32
        if let kept = takeIdle(key) {
            fd = kept
        } else {
            fd = try connect(host: host, port: port)
        }
        return try exchange(bytes, fd: fd, key: key)
    }

    private func exchange(_ bytes: [UInt8], fd: Int32, key: String) throws(Failure) -> Response {
        var reader = Reader(fd: fd, maxBody: maxBody)
        do throws(Failure) {
            try Self.writeAll(bytes, fd: fd)
            let (response, keep) = try reader.readResponse()
            if keep {
                idle.withLock { $0[key, default: []].append(Idle(fd: fd, since: .now)) }
            } else {
                close(fd)
            }
            return response
        } catch {
            close(fd)
            throw error
        }
    }

    private func takeIdle(_ key: String) -> Int32? {
        let now = ContinuousClock.now
        var stale: [Int32] = []
        let fd = idle.withLock { table -> Int32? in
            var list = table[key] ?? []
            while let last = list.popLast() {
                if now - last.since < keepIdle, Self.isOpen(last.fd) {
                    table[key] = list
                    return last.fd
                }
                stale.append(last.fd)
            }
            table[key] = list
            return nil
        }
        for old in stale { close(old) }
        return fd
    }

    /// True when a kept connection is still open and has nothing unread: the peer closed it
    /// when a read that does not wait finds its end (0), or bytes nobody asked for.
    static func isOpen(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    private func connect(host: String, port: Int) throws(Failure) -> Int32 {
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(host: host, port: port)
        } catch {
            throw Failure(sent: false, description: "cannot resolve \(host): \(error)")
        }
        let fd = socket(address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(sent: false, description: "socket() failed: errno \(errno)") }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(address.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let connected = address.withSockaddr { pointer in Glibc.connect(fd, pointer, length) }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure(sent: false, description: "cannot connect to \(host):\(port): errno \(code)")
        }
        return fd
    }

    private static func writeAll(_ bytes: [UInt8], fd: Int32) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(sent: offset > 0, description: "write failed: errno \(errno)")
            }
            offset += written
        }
    }

    /// `http://host:port` (a trailing slash allowed) as its host and port; 80 without one.
    public static func hostAndPort(_ address: String) -> (String, Int)? {
        guard address.hasPrefix("http://") else { return nil }
        var rest = address.dropFirst("http://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            let host = String(rest[rest.index(after: rest.startIndex)..<close])
            let tail = rest[rest.index(after: close)...]
            guard tail.isEmpty || tail.hasPrefix(":") else { return nil }
            guard let port = tail.isEmpty ? 80 : Int(tail.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return nil }
        guard let port = parts.count == 2 ? Int(parts[1]) : 80, (1...65535).contains(port) else { return nil }
        return (String(parts[0]), port)
    }

    /// Headers that belong to one connection, not to the request (RFC 9110 §7.6.1), and the
    /// ones this client sets itself.
    static let dropped: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                                       "upgrade", "host", "content-length", "expect", "date"]

    static func encode(_ request: Request, host: String, extraHeaders: [(String, String)]) -> [UInt8] {
        var head = "\(request.method) \(request.path)"
        if !request.query.isEmpty {
            head += "?" + request.query.map { PercentEncoding.query($0.name) + "=" + PercentEncoding.query($0.value) }.joined(separator: "&")
        }
        head += " HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(request.body.count)\r\n"
        for (name, value) in request.headers where !dropped.contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        for (name, value) in extraHeaders { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + request.body
    }

    /// Reads one answer from a connection.
    struct Reader {
        let fd: Int32
        let maxBody: Int
        var buffer: [UInt8] = []
        var start = 0
        var received = false

        init(fd: Int32, maxBody: Int) {
            self.fd = fd
            self.maxBody = maxBody
        }

        /// Reads more bytes; false at the connection's end.
        mutating func fill() throws(Failure) -> Bool {
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received = true
                    buffer += chunk[0..<count]
                    return true
                }
                if count == 0 { return false }
                if errno == EINTR { continue }
                throw Failure(sent: true, description: errno == EAGAIN ? "the peer did not answer in time" : "read failed: errno \(errno)")
            }
        }

        /// The bytes up to the next CRLF, without it.
        mutating func line() throws(Failure) -> String {
            while true {
                if let end = buffer[start...].firstIndex(of: 10) {
                    var bytes = buffer[start..<end]
                    if bytes.last == 13 { bytes = bytes.dropLast() }
                    start = end + 1
                    return String(decoding: bytes, as: UTF8.self)
                }
                guard buffer.count - start < 65_536 else { throw Failure(sent: true, description: "a header line too long") }
                guard try fill() else { throw Failure(sent: true, description: "the peer closed the connection before answering") }
            }
        }

        mutating func bytes(_ count: Int) throws(Failure) -> [UInt8] {
            while buffer.count - start < count {
                guard try fill() else { throw Failure(sent: true, description: "the peer closed the connection mid-answer") }
            }
            defer { start += count }
            return Array(buffer[start..<start + count])
        }

        mutating func readResponse() throws(Failure) -> (Response, keepAlive: Bool) {
            let status = try line()
            let fields = status.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let code = Int(fields[1]), (100...599).contains(code) else {
                throw Failure(sent: true, description: "not an HTTP answer: \(status.prefix(60))")
            }
            var headers = HTTPHeaders()
            var length: Int?
            var chunked = false
            var keepAlive = fields[0] == "HTTP/1.1"
            while true {
                let header = try line()
                if header.isEmpty { break }
                guard let colon = header.firstIndex(of: ":") else { continue }
                let name = String(header[..<colon])
                let value = String(header[header.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
                switch name.lowercased() {
                case "content-length": length = Int(value)
                case "transfer-encoding": chunked = value.lowercased().contains("chunked")
                case "connection":
                    if value.lowercased().contains("close") { keepAlive = false }
                default:
                    if !PeerClient.dropped.contains(name.lowercased()) { headers.add(name: name, value: value) }
                }
            }
            var body: [UInt8] = []
            if chunked {
                while true {
                    let sizeLine = try line()
                    guard let field = sizeLine.split(separator: ";", omittingEmptySubsequences: false).first,
                          let size = Int(field.trimmingSpaces, radix: 16), size >= 0, size <= maxBody - body.count else {
                        throw Failure(sent: true, description: "a bad chunk size")
                    }
                    if size == 0 {
                        while try !line().isEmpty {}
                        break
                    }
                    body += try bytes(size)
                    _ = try line()
                }
            } else if let length {
                guard length >= 0, length <= maxBody else { throw Failure(sent: true, description: "a bad or too large Content-Length") }
                body = try bytes(length)
            } else if code != 204 && code != 304 {
                keepAlive = false
                while try fill() {
                    guard buffer.count - start <= maxBody else { throw Failure(sent: true, description: "an answer too large") }
                }
                body = Array(buffer[start...])
            }
            // A connection with bytes left over (more than the answer said) is not used again.
            return (Response(status: code, headers: headers, body: body), keepAlive && start == buffer.count)
        }
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}

/// Percent-encoding of a query's names and values as a URL carries them.
enum PercentEncoding {
    static func query(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}

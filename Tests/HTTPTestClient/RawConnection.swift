// A blocking TCP connection to a loopback server, for tests that need exact control of the bytes.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain socket to `127.0.0.1:port` with a receive timeout.
///
/// ```swift
/// let connection = try RawConnection(port: server.port)
/// try connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
/// let response = try connection.readResponse()
/// ```
public final class RawConnection {
    public let descriptor: Int32

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// A send the server cut off (EPIPE, ECONNRESET): it may have answered first (a 413
        /// before the body), and its answer can still be read.
        public var cutOff = false
    }

    public init(port: Int, timeout: Duration = .seconds(30)) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds),
                              tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(description: "connect to port \(port) failed: errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else {
                let code = errno
                throw Failure(description: "send failed: errno \(code)", cutOff: code == EPIPE || code == ECONNRESET)
            }
            offset += written
        }
    }

    /// Reads bytes until the server closes the connection or the timeout passes; true when it closed.
    public func waitForClose() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Reads one HTTP response with a `Content-Length` body (what libmicrohttpd sends for buffers).
    public func readResponse(headRequest: Bool = false) throws -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Int?
        while headerEnd == nil {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw Failure(description: "connection closed or timed out before a response (\(data.count) bytes read)") }
            data.append(contentsOf: buffer[0..<count])
            headerEnd = Self.find([13, 10, 13, 10], in: data)
        }
        guard let end = headerEnd, let head = String(bytes: data[0..<end], encoding: .utf8) else {
            throw Failure(description: "unreadable response head")
        }
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(head)")
        }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        // A 304 has no body whatever its Content-Length says (the length of the 200 it stands for).
        let length = headRequest || status == 304 ? 0 : (headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0)
        var body = Array(data[(end + 4)...])
        while body.count < length {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw Failure(description: "connection closed mid-body") }
            body.append(contentsOf: buffer[0..<count])
        }
        return (status, headers, Array(body.prefix(length)))
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }
}

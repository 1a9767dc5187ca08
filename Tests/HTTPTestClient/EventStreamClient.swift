// A Server-Sent Events client over a raw socket: reads a chunked text/event-stream as it comes.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One `GET` of an event stream, read event by event.
///
/// ```swift
/// let stream = try EventStreamClient(port: server.port, path: "/v1/sessions/s_1/events",
///                                    headers: [("Authorization", "Bearer …")])
/// let first = try stream.next()       // id, event name and data of the first event
/// ```
/// Events are dispatched as browsers do: a block without `data` is not an event (its comments
/// and `retry` are kept in `comments` and `retry`). `next()` returns nil once the server ended
/// the body (the chunked encoding's last chunk) or closed the connection.
public final class EventStreamClient {
    public struct Event: Sendable, Equatable {
        public var id: String?
        public var event: String?
        public var data: String
    }

    public let connection: RawConnection
    public let status: Int
    public let headers: [(String, String)]
    /// The body of a response that is not a stream (a problem), read whole.
    public private(set) var body: [UInt8] = []
    public private(set) var comments: [String] = []
    public private(set) var retry: Int?
    /// The server ended the body (last chunk) or closed the connection.
    public private(set) var ended = false
    /// The body ended with the chunked encoding's last chunk, as a stream ends cleanly.
    public private(set) var endedCleanly = false
    private var raw: [UInt8] = []
    private var text: [UInt8] = []

    public init(port: Int, path: String, method: String = "GET", headers: [(String, String)] = [],
                timeout: Duration = .seconds(30)) throws {
        connection = try RawConnection(port: port, timeout: timeout)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try connection.send(request + "\r\n")
        var data: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            let bytes = try Self.receive(connection)
            guard !bytes.isEmpty else { throw RawConnection.Failure(description: "closed before a response head") }
            data += bytes
            headEnd = RawConnection.find([13, 10, 13, 10], in: data)
        }
        let end = headEnd ?? 0
        let head = String(decoding: data[0..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw RawConnection.Failure(description: "bad status line in \(head)")
        }
        self.status = status
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        self.headers = headers
        raw = Array(data[(end + 4)...])
        if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }) {
            while raw.count < length {
                let bytes = try Self.receive(connection)
                guard !bytes.isEmpty else { break }
                raw += bytes
            }
            body = Array(raw.prefix(length))
            raw = []
            ended = true
        }
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The next event, waiting for it up to the connection's timeout (then throws); nil once the
    /// stream ended.
    public func next() throws -> Event? {
        while true {
            if let event = takeEvent() { return event }
            if ended { return nil }
            if dechunk() { continue }
            let bytes = try Self.receive(connection)
            if bytes.isEmpty {
                ended = true
                continue
            }
            raw += bytes
        }
    }

    /// Events until the one with id `version` (inclusive); throws if the stream ends first.
    public func events(through version: Int) throws -> [Event] {
        var events: [Event] = []
        while let event = try next() {
            events.append(event)
            if let id = event.id.flatMap(Int.init), id >= version { return events }
        }
        throw RawConnection.Failure(description: "the stream ended before version \(version): \(events.map { $0.id ?? "-" })")
    }

    /// Moves one whole chunk from `raw` to `text`; false when `raw` holds no whole chunk.
    private func dechunk() -> Bool {
        guard let lineEnd = RawConnection.find([13, 10], in: raw) else { return false }
        let sizeText = String(decoding: raw[0..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
        guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
            ended = true
            return false
        }
        if size == 0 {
            ended = true
            endedCleanly = true
            raw = []
            return true
        }
        let start = lineEnd + 2
        guard raw.count >= start + size + 2 else { return false }
        text += raw[start..<(start + size)]
        raw.removeFirst(start + size + 2)
        return true
    }

    /// Parses one event block out of `text`, skipping blocks that dispatch nothing.
    private func takeEvent() -> Event? {
        while let end = RawConnection.find([10, 10], in: text) {
            let block = String(decoding: text[0..<end], as: UTF8.self)
            text.removeFirst(end + 2)
            var event = Event(id: nil, event: nil, data: "")
            var hasData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
                    continue
                }
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let field = String(parts[0])
                var value = parts.count > 1 ? String(parts[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                switch field {
                case "id": event.id = value
                case "event": event.event = value
                case "data":
                    event.data += hasData ? "\n" + value : value
                    hasData = true
                case "retry": retry = Int(value)
                default: break
                }
            }
            if hasData { return event }
        }
        return nil
    }

    private static func receive(_ connection: RawConnection) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(connection.descriptor, &buffer, buffer.count, 0)
        if count < 0 {
            if errno == ECONNRESET { return [] }
            throw RawConnection.Failure(description: "no event within the timeout (errno \(errno))")
        }
        return Array(buffer[0..<count])
    }
}

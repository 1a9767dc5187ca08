// EventStream: one connection to a session's Server-Sent Events, read as it arrives.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One event of `text/event-stream`: `id`, `event` (`state`, `deleted`) and `data`.
struct ServerSentEvent: Sendable, Equatable {
    var id: String?
    var event: String
    var data: String
}

/// Splits a byte stream into events (lines `field: value`, an empty line ends an event; lines
/// starting with `:` are comments).
struct EventStreamParser: Sendable {
    private var buffer: [UInt8] = []
    private var id: String?
    private var event = ""
    private var data: [String] = []

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        buffer.append(contentsOf: bytes)
        var events: [ServerSentEvent] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(buffer[..<newline])
            buffer.removeSubrange(...newline)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.isEmpty {
                if !data.isEmpty || !event.isEmpty {
                    events.append(ServerSentEvent(id: id, event: event.isEmpty ? "message" : event, data: data.joined(separator: "\n")))
                }
                event = ""
                data = []
                continue
            }
            if line.first == UInt8(ascii: ":") { continue }
            let text = String(decoding: line, as: UTF8.self)
            let field: Substring
            var value: Substring
            if let colon = text.firstIndex(of: ":") {
                field = text[..<colon]
                value = text[text.index(after: colon)...]
                if value.first == " " { value = value.dropFirst() }
            } else {
                field = Substring(text)
                value = ""
            }
            switch field {
            case "id": id = String(value)
            case "event": event = String(value)
            case "data": data.append(String(value))
            default: break
            }
        }
        return events
    }
}

/// A live `GET …/events` request: hands each event to `onEvent` and calls `onEnd` once when the
/// stream closes or fails (with the HTTP status when the server refused it).
final class EventStreamConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var parser = EventStreamParser()
    private var ended = false
    private var status: Int?
    private var session: URLSession?
    private let onEvent: @Sendable (ServerSentEvent) -> Void
    private let onEnd: @Sendable (_ status: Int?) -> Void

    init(request: URLRequest, onEvent: @escaping @Sendable (ServerSentEvent) -> Void, onEnd: @escaping @Sendable (_ status: Int?) -> Void) {
        self.onEvent = onEvent
        self.onEnd = onEnd
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        lock.withLock { self.session = session }
        session.dataTask(with: request).resume()
    }

    func cancel() {
        let session = lock.withLock { () -> URLSession? in
            defer { self.session = nil }
            return self.session
        }
        session?.invalidateAndCancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        lock.withLock { status = code }
        completionHandler(code == 200 ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = lock.withLock { parser.feed(data) }
        for event in events { onEvent(event) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let (first, code) = lock.withLock { () -> (Bool, Int?) in
            defer { ended = true }
            return (!ended, status)
        }
        session.finishTasksAndInvalidate()
        if first { onEnd(code) }
    }
}

// HTTPTransport: one request to the server (FlowTransport; URLSession's), what came back, and retries.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

/// One request to the server: what ``FlowTransport`` sends.
public struct FlowRequest: Sendable, Equatable {
    public var method: String
    /// The path, from `/` (`/v1/sessions/s_…/actions`).
    public var path: String
    /// The query, without `?` (`predict=true`), when there is one.
    public var query: String?
    public var headers: [String: String]
    /// A JSON body, when there is one.
    public var body: [UInt8]?

    public init(method: String, path: String, query: String? = nil, headers: [String: String] = [:], body: [UInt8]? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// An answer, whatever its status: the status, the headers that matter here, and the body.
/// `retryAfter` is the wait a `Retry-After` header asked for.
public struct FlowAnswer: Sendable, Equatable {
    public var status: Int
    public var etag: String?
    public var contentType: String?
    public var retryAfter: Duration?
    public var body: [UInt8]

    public init(status: Int, etag: String? = nil, contentType: String? = nil, retryAfter: Duration? = nil, body: [UInt8]) {
        self.status = status
        self.etag = etag
        self.contentType = contentType
        self.retryAfter = retryAfter
        self.body = body
    }

    /// The longest wait a `Retry-After` is honoured for: a client waits no longer than that.
    public static let longestRetryAfter: Duration = .seconds(300)

    /// A `Retry-After` header's wait (delay-seconds, or an HTTP date after `now`), at most
    /// ``longestRetryAfter``; nil when there is none or it does not read.
    public static func retryAfter(_ header: String?, now: Date = Date()) -> Duration? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        let wait: Duration
        if text.allSatisfy(\.isASCIIDigitCharacter) {
            guard let seconds = Int(text.prefix(9)) else { return nil }
            wait = .seconds(seconds)
        } else {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            guard let date = formatter.date(from: text) else { return nil }
            wait = .milliseconds(max(0, Int((date.timeIntervalSince(now) * 1000).rounded())))
        }
        return min(wait, longestRetryAfter)
    }

    var json: JSONValue? { body.isEmpty ? nil : try? JSONParser.parse(body) }
    var reply: ClientMachine.Reply { .answer(status: status, body: body) }
}

/// How the client reaches the server: one request, one answer of any status; throws
/// ``Unreachable`` when there is no answer at all. ``URLSessionTransport`` is the one an app
/// uses; tests and the client simulation give their own.
public protocol FlowTransport: Sendable {
    func send(_ request: FlowRequest) async throws -> FlowAnswer
}

/// No answer from the server: the connection was refused or cut, the request timed out, or what
/// came back was not HTTP. What it was sending may or may not have been applied: the client sends
/// it again under the same idempotency keys. `FlowSession.start` throws it when there is no
/// working server and nothing kept to start from ("offline at first launch").
public struct Unreachable: Error, Sendable, CustomStringConvertible {
    public var detail: String
    public init(detail: String) { self.detail = detail }
    public var description: String { "server unreachable: \(detail)" }
}

/// Sends requests with URLSession, after the simulated latency if one is set.
public final class URLSessionTransport: FlowTransport {
    public let server: URL
    let session: URLSession
    let timeout: TimeInterval
    let latency: Duration

    public init(server: URL, timeout: TimeInterval = 10, latency: Duration = .zero) {
        self.server = server
        self.timeout = timeout
        self.latency = latency
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    func url(_ path: String, query: String? = nil) -> URL {
        var text = server.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if let query { text += "?" + query }
        return URL(string: text) ?? server
    }

    public func send(_ flowRequest: FlowRequest) async throws -> FlowAnswer {
        if latency > .zero { try await Task.sleep(for: latency) }
        var request = URLRequest(url: url(flowRequest.path, query: flowRequest.query), cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: timeout)
        request.httpMethod = flowRequest.method
        for (name, value) in flowRequest.headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body = flowRequest.body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: Unreachable(detail: "no response"))
                    }
                }
                task.resume()
            }
        } catch let error as Unreachable {
            throw error
        } catch {
            throw Unreachable(detail: "\(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw Unreachable(detail: "not an HTTP answer") }
        return FlowAnswer(status: http.statusCode, etag: http.value(forHTTPHeaderField: "ETag"),
                          contentType: http.value(forHTTPHeaderField: "Content-Type"),
                          retryAfter: FlowAnswer.retryAfter(http.value(forHTTPHeaderField: "Retry-After")), body: Array(data))
    }
}

/// How often and how long to retry a request the server did not answer.
///
/// ```swift
/// RetryPolicy(attempts: 4, initialDelay: .milliseconds(100), maximumDelay: .seconds(2))
/// ```
public struct RetryPolicy: Sendable, Equatable {
    /// Tries per request (the first and the retries after an unknown outcome) before the client
    /// goes offline and waits for the server.
    public var attempts: Int
    public var initialDelay: Duration
    public var maximumDelay: Duration

    public init(attempts: Int = 3, initialDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(2)) {
        self.attempts = max(1, attempts)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait before try `attempt` (1 for the first retry): doubling, capped.
    public func delay(before attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, attempt) where delay < maximumDelay { delay = delay * 2 }
        return min(delay, maximumDelay)
    }
}

extension Character {
    /// `0`…`9`, and nothing else (no other script's digits).
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

// HTTPTransport: one request to the server with URLSession, and what came back.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

/// An answer: status, headers that matter here, and the body.
struct HTTPAnswer: Sendable {
    var status: Int
    var etag: String?
    var body: [UInt8]

    var json: JSONValue? { body.isEmpty ? nil : try? JSONParser.parse(body) }
}

/// The server could not be reached (connection refused, reset, timed out), or answered
/// 429/502/503/504 (502 and 504: a load balancer whose node died or hung with the request):
/// worth retrying with the same idempotency key.
struct Unreachable: Error, Sendable, CustomStringConvertible {
    var detail: String
    var description: String { "server unreachable: \(detail)" }
}

/// Sends requests with URLSession, after the simulated latency if one is set.
final class HTTPTransport: Sendable {
    let server: URL
    let session: URLSession
    let timeout: TimeInterval
    let latency: Duration

    init(server: URL, timeout: TimeInterval, latency: Duration) {
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

    /// Sends one request; 429, 502, 503, 504 and transport errors throw ``Unreachable``.
    func send(_ method: String, _ path: String, query: String? = nil, headers: [String: String] = [:],
              body: [UInt8]? = nil) async throws -> HTTPAnswer {
        if latency > .zero { try await Task.sleep(for: latency) }
        var request = URLRequest(url: url(path, query: query), cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
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
        // Busy or unavailable: the same request (and idempotency key) goes again after a backoff.
        if [429, 502, 503, 504].contains(http.statusCode) { throw Unreachable(detail: "status \(http.statusCode)") }
        let etag = http.value(forHTTPHeaderField: "ETag")
        return HTTPAnswer(status: http.statusCode, etag: etag, body: Array(data))
    }
}

/// How often and how long to retry a request the server did not answer.
///
/// ```swift
/// RetryPolicy(attempts: 4, initialDelay: .milliseconds(100), maximumDelay: .seconds(2))
/// ```
public struct RetryPolicy: Sendable, Equatable {
    /// Tries per request before the client goes offline (and queues).
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

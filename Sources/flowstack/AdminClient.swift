// AdminClient: the admin API of a running server, for `flows diff`, `flows pull` and `flows push`.
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

/// Where the server is and which environment variable holds its admin token. The token never
/// comes from the command line, where `ps` and shell histories would show it.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server's base URL (http://host:port); default: $FLOWSTACK_SERVER.")
    var server: String?

    @Option(help: "The environment variable that holds the admin token.")
    var tokenEnv: String = "FLOWSTACK_ADMIN_TOKEN"

    /// The client these options describe; a usage error when the URL or the token is missing.
    func client(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminClient {
        guard let text = server ?? environment["FLOWSTACK_SERVER"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ValidationError("give the server with --server URL (or FLOWSTACK_SERVER)")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else {
            throw ValidationError("--server must be an http:// or https:// URL such as http://localhost:8080; found \(text)")
        }
        guard let token = environment[tokenEnv], !token.isEmpty else {
            throw ValidationError("set \(tokenEnv) to the server's admin token (the token is never taken from the command line)")
        }
        return AdminClient(server: url, token: token)
    }
}

/// Sends admin requests one at a time and waits for each answer; every failure becomes a
/// ``FailureMessage`` with the tool's exit status: 4 when the server did not answer or answered
/// 5xx (trying later may work), 3 when it refused the token or the request, 1 when it found
/// problems in what was sent (422).
struct AdminClient {
    let server: URL
    let token: String
    var timeout: TimeInterval = 60

    struct Answer {
        var status: Int
        var body: [UInt8]
        var json: JSONValue? { try? JSONParser.parse(body, limits: .storedData) }
    }

    /// The URL of `path` on the server (the server URL may carry a path prefix).
    func url(_ path: String) -> String {
        var text = server.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text + path
    }

    /// A path segment with everything but unreserved characters percent-encoded.
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Sends one request; `what` names it in messages ("reading the live flows").
    func send(_ method: String, _ path: String, body: [UInt8]? = nil, what: String) throws(FailureMessage) -> Answer {
        guard let url = URL(string: url(path)) else { throw FailureMessage("\(what): cannot make a URL of \(self.url(path))", status: .usage) }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: RefuseRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: request) { data, response, error in
            outcome.set(data: data, response: response, error: error)
            done.signal()
        }.resume()
        done.wait()
        let (data, response, error) = outcome.get()
        if let error {
            throw FailureMessage("\(what): cannot reach \(server.absoluteString): \(error.localizedDescription)", status: .unavailable)
        }
        guard let http = response as? HTTPURLResponse else {
            throw FailureMessage("\(what): \(server.absoluteString) did not answer with HTTP", status: .unavailable)
        }
        let answer = Answer(status: http.statusCode, body: Array(data ?? Data()))
        if (300..<400).contains(answer.status) {
            let location = http.value(forHTTPHeaderField: "Location") ?? "nowhere"
            throw FailureMessage("\(what): \(server.absoluteString) answered \(answer.status), a redirect to \(location); "
                                 + "not followed, so the admin token goes only to the server given: use that URL as --server",
                                 status: .cannotUse)
        }
        guard (200..<300).contains(answer.status) else { throw refusal(answer, what: what) }
        return answer
    }

    /// Sends a request whose answer must be a JSON document.
    func json(_ method: String, _ path: String, body: JSONValue? = nil, what: String) throws(FailureMessage) -> JSONValue {
        var bytes: [UInt8]?
        if let body {
            var writer = JSONWriter()
            writer.writeValue(body)
            bytes = writer.takeBytes()
        }
        let answer = try send(method, path, body: bytes, what: what)
        guard let json = answer.json else {
            throw FailureMessage("\(what): the answer of \(method) \(path) is not JSON; is \(server.absoluteString) a FlowStack server?")
        }
        return json
    }

    /// A refusal in words, from the problem document when there is one, with its exit status.
    func refusal(_ answer: Answer, what: String) -> FailureMessage {
        let problem = answer.json
        var text = "\(what): the server answered \(answer.status)"
        if let title = problem?["title"]?.stringValue { text += ": \(title)" }
        if let detail = problem?["detail"]?.stringValue, detail != problem?["title"]?.stringValue { text += ": \(detail)" }
        if let code = problem?["code"]?.stringValue { text += " (\(code))" }
        for error in problem?["errors"]?.arrayValue ?? [] {
            let pointer = error["pointer"]?.stringValue ?? ""
            text += "\n  \(pointer.isEmpty ? "/" : pointer): \(error["detail"]?.stringValue ?? error.jsonText)"
        }
        switch answer.status {
        case 401:
            return FailureMessage(text + "\n  the admin token was refused: set \(tokenHint) to the server's admin token", status: .cannotUse)
        case 422: return FailureMessage(text, status: .checkFailed)
        case 500...: return FailureMessage(text, status: .unavailable)
        default: return FailureMessage(text, status: .cannotUse)
        }
    }

    var tokenHint = "FLOWSTACK_ADMIN_TOKEN (or the variable --token-env names)"
}

/// What a data task's completion handler hands back to the waiting thread.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    private var response: URLResponse?
    private var error: (any Error)?

    func set(data: Data?, response: URLResponse?, error: (any Error)?) {
        lock.lock()
        defer { lock.unlock() }
        self.data = data
        self.response = response
        self.error = error
    }

    func get() -> (Data?, URLResponse?, (any Error)?) {
        lock.lock()
        defer { lock.unlock() }
        return (data, response, error)
    }
}

/// Never follows a redirect. A request to the server carries the admin token, and Foundation on
/// Linux copies every header, `Authorization` included, onto the redirected request whatever its
/// host: a `301` from a proxy or a mistyped `--server` would hand the token to another host. The
/// 3xx comes back as the answer instead, and the command says where it pointed.
final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}

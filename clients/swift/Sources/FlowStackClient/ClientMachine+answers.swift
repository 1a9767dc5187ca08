// ClientMachine+answers: what an answer means — a reply read as success, refusal, mismatch, gone or unknown, for a post, a batch or a reload.

import FlowEngine
import JSON

extension ClientMachine {
    /// The answer (or the lack of one) to `command`, read by the rules above.
    public mutating func handle(_ reply: Reply, to command: Command) -> [ClientEvent] {
        switch command {
        case .post(let item): return handlePost(reply, item)
        case .batch(let items): return handleBatch(reply, items)
        case .reload: return handleReload(reply)
        case .create, .pause: return []  // a new session is read by the driver (`restarted`), a pause has none
        }
    }

    /// What an answer is, before what it means for the queue.
    enum Answer {
        case success(JSONValue)
        /// 409, 422, 400, 413 and other 4xx with a problem document: the server will not take it.
        case refusal(status: Int, problem: JSONValue)
        /// 412 with a problem document.
        case versionMismatch(JSONValue)
        /// 401 or 404 with a problem document: the session is gone.
        case gone(status: Int, problem: JSONValue)
        /// Anything else: a 5xx, 429, 408, a proxy's page, a body that is not JSON.
        case unknown(String)
    }

    /// Sorts an answer: only the server's own problem documents refuse; a success must carry a
    /// JSON object, and anything unexpected is an unknown outcome.
    static func classify(_ reply: Reply, success: Int = 200) -> Answer {
        guard case .answer(let status, let body) = reply else {
            if case .noAnswer(let detail) = reply { return .unknown("no answer: \(detail)") }
            return .unknown("no answer")
        }
        let json = body.isEmpty ? nil : try? JSONParser.parse(body)
        let object = json.flatMap { $0.objectValue != nil ? $0 : nil }
        if status == success {
            guard let object else { return .unknown("status \(status) with a body that is not a JSON object") }
            return .success(object)
        }
        // A problem document names its status; a proxy's or a crashed node's page does not.
        guard let problem = object, problem["status"]?.integerValue == status || problem["type"]?.stringValue != nil else {
            return .unknown("status \(status)\(body.isEmpty ? "" : " with a body that is not a problem document")")
        }
        switch status {
        case 412: return .versionMismatch(problem)
        case 401, 404: return .gone(status: status, problem: problem)
        case 408, 425, 429: return .unknown("status \(status)")
        case 400..<500: return .refusal(status: status, problem: problem)
        default: return .unknown("status \(status)")
        }
    }

    mutating func handlePost(_ reply: Reply, _ item: QueuedAction) -> [ClientEvent] {
        inFlight = 0
        switch Self.classify(reply) {
        case .success(let json):
            guard let (state, predictions) = try? Self.read(json) else { return unknownOutcome("status 200 with a body that is not a state") }
            return answered(key: item.key, state: state, predictions: predictions)
        case .refusal(let status, let problem):
            return refused(key: item.key, status: status, problem: problem)
        case .versionMismatch(let problem):
            return refused(key: item.key, status: 412, problem: problem)
        case .gone(let status, let problem):
            return sessionGone(status: status, problem: problem)
        case .unknown(let detail):
            return unknownOutcome(detail)
        }
    }

    mutating func handleBatch(_ reply: Reply, _ items: [QueuedAction]) -> [ClientEvent] {
        inFlight = 0
        switch Self.classify(reply) {
        case .success(let json):
            guard let stateJSON = json["state"], let state = try? NavigationState(json: stateJSON),
                  let results = json["results"]?.arrayValue else { return unknownOutcome("status 200 with a body that is not a batch's answer") }
            var done = Set<String>()
            for result in results {
                guard let key = result["key"]?.stringValue, let status = result["status"]?.stringValue else { continue }
                if status == "applied" || status == "skipped" { done.insert(key) }
            }
            // JSONValue is ExpressibleByNilLiteral: spell the Optional out, or `nil` reads as JSON null.
            let refusal = json["refused"].flatMap { $0.isNull ? JSONValue?.none : $0 }
            return batchAnswered(sent: items.count, done: done, refusal: refusal, state: state)
        case .refusal(let status, let problem):
            // The batch as a whole was refused (400: malformed): nothing in it was applied.
            return refused(key: items[0].key, status: status, problem: problem)
        case .versionMismatch(let problem):
            return refused(key: items[0].key, status: 412, problem: problem)
        case .gone(let status, let problem):
            return sessionGone(status: status, problem: problem)
        case .unknown(let detail):
            return unknownOutcome(detail)
        }
    }

    mutating func handleReload(_ reply: Reply) -> [ClientEvent] {
        inFlight = 0
        switch Self.classify(reply) {
        case .success(let json):
            guard let (state, predictions) = try? Self.read(json) else { return unknownOutcome("status 200 with a body that is not a state") }
            return reloaded(state, predictions: predictions)
        case .gone(let status, let problem):
            return sessionGone(status: status, problem: problem)
        case .refusal(let status, _):
            return unknownOutcome("status \(status) to a read")
        case .versionMismatch:
            return unknownOutcome("status 412 to a read")
        case .unknown(let detail):
            return unknownOutcome(detail)
        }
    }

    /// A state document with its predictions.
    static func read(_ json: JSONValue) throws -> (NavigationState, [(action: FlowAction, state: NavigationState)]) {
        let state = try NavigationState(json: json)
        var predictions: [(action: FlowAction, state: NavigationState)] = []
        for item in json["predictions"]?.arrayValue ?? [] {
            guard let action = item["action"], let next = item["state"] else { continue }
            predictions.append((try FlowAction(json: action), try NavigationState(json: next)))
        }
        return (state, predictions)
    }

    /// No usable answer: the taps stay queued under the same keys; after a pause the same request
    /// goes again, and after `retry.attempts` tries in a row the client is offline until the
    /// driver sees the server answer again (``reachable()``).
    mutating func unknownOutcome(_ detail: String) -> [ClientEvent] {
        inFlight = 0
        failures += 1
        streak += 1
        lastFailure = detail
        if failures >= retry.attempts {
            pauseOwed = nil
            if offline { return [] }
            offline = true
            return [.offline]
        }
        pauseOwed = retry.delay(before: streak)
        return []
    }

    /// The server asked for a wait before the next try (`Retry-After` on a 429 or a 503): the
    /// pause owed is at least that long. Offline, the driver's probe waits it.
    public mutating func retryAfter(_ wait: Duration) {
        if let owed = pauseOwed, wait > owed { pauseOwed = wait }
    }
}

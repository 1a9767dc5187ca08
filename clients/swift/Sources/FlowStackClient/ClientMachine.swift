// ClientMachine: a client's confirmed, shown and queued state, what every answer means, and what
// to do next, with no I/O.
import FlowEngine
import JSON

/// An action the client showed ahead of the server (or is waiting on) and has not yet seen confirmed.
///
/// `version` is the version the action was applied on (the `If-Match` it is posted with);
/// `key` its idempotency key, the same on every retry and in a batch after the app restarts.
public struct QueuedAction: Sendable, Equatable {
    public var key: String
    public var version: Int
    public var action: FlowAction
    /// The state the client showed for it; nil when it had no way to predict it (it waits, or it
    /// was restored after a restart and not yet replayed on a bundle).
    public var expected: NavigationState?
    /// When the tap happened on the client (RFC 3339), sent with a batch as `at`.
    public var at: String?

    public init(key: String, version: Int, action: FlowAction, expected: NavigationState? = nil, at: String? = nil) {
        self.key = key
        self.version = version
        self.action = action
        self.expected = expected
        self.at = at
    }

    /// `{key, version, action, at?}`: a batch item as `POST …/actions/batch` takes it, and as the
    /// store keeps a queued tap.
    func writeBatchItem(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("key")
        writer.writeString(key)
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("action")
        writer.writeValue(action.json)
        if let at {
            writer.writeKey("at")
            writer.writeString(at)
        }
        writer.endObject()
    }

    /// The tap as the store keeps it: without the state it showed (replayed on the bundle when read).
    var kept: QueuedAction { QueuedAction(key: key, version: version, action: action, at: at) }
}

/// The server disagreed with what the client showed: the client now shows `to`.
///
/// `from` is what was on screen, `to` what is right; `taps` lists the taps the server did not
/// take (refused, or dropped because they were made on a state that turned out wrong), with
/// their idempotency keys, and `problem` the server's reason when it gave one.
public struct Correction: Sendable, Equatable {
    public var from: NavigationState
    public var to: NavigationState
    /// The taps not taken, oldest first.
    public var taps: [QueuedAction]
    public var problem: JSONValue?
    public var reason: Reason

    /// The actions of the taps not taken.
    public var refused: [FlowAction] { taps.map(\.action) }

    public enum Reason: String, Sendable, Equatable {
        /// The answer to a posted action differs from the state shown (the user's state changed elsewhere).
        case differentAnswer
        /// Another device acted first (412): the client read the server's state and adopted it.
        case versionMismatch
        /// The server refused an action (409, 422 or 400): the client rolled back to the server's state.
        case refused
    }
}

/// A session the server no longer knows (deleted, expired, or its token refused), replaced by a
/// new one for the same user: what it answered, the new session's state, and the taps queued on
/// the old one, which are not sent (they were made on a session that is gone).
public struct Restart: Sendable, Equatable {
    /// Why, in words: "session s_… is gone (404); 2 queued tap(s) were dropped; started a new one".
    public var reason: String
    /// The new session's first state: what the app shows now.
    public var state: NavigationState
    /// The taps made on the old session and never stored by the server.
    public var dropped: [QueuedAction]
    /// The status and problem the server answered for the old session.
    public var status: Int
    public var problem: JSONValue?
}

/// What the client reports as the session moves.
public enum ClientEvent: Sendable, Equatable {
    /// The server confirmed a state the client showed (or, for a tap that waited, answered it).
    case confirmed(NavigationState)
    /// The server's state differs from what was shown, or it refused taps; the client now shows `to`.
    case corrected(Correction)
    /// Another device made a version; the client now shows it.
    case remote(NavigationState)
    /// The server cannot be reached (or keeps failing): taps are applied locally and queued.
    case offline
    /// The server is reachable again; queued taps are being sent.
    case online
    /// The session had expired or was deleted (at start, or while in use); a new one was started,
    /// its state is what the app shows now, and the taps queued on the old one were dropped.
    case restarted(Restart)
}

/// A tap the client could not show: no bundle, no prediction for it, and the server said no.
public struct ActionRefused: Error, Sendable, Equatable, CustomStringConvertible {
    public var action: FlowAction
    public var status: Int
    public var problem: JSONValue?
    public var description: String {
        "\(action.type) refused (\(status)): \(problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue ?? "no detail")"
    }
}

/// The turns of a FlowStack client as a value: what it shows, what the server confirmed, what is
/// queued, what each answer means, and, for each event, what to do next. The ``FlowSession``
/// driver performs the I/O and hands every answer back as it came (status and bytes); the tests
/// and the client simulation drive this directly.
///
/// ```swift
/// var machine = ClientMachine(confirmed: answer)
/// machine.loaded(bundle.state)
/// let shown = try machine.tap(FlowAction(type: "onboarding.showSecond", from: "e3"), key: "k1")
/// let command = machine.nextCommand()          // .post(the queued tap)
/// machine.handle(.answer(status: 200, body: bytes), to: command!)   // [.confirmed(…)]
/// ```
///
/// The rules every answer goes through (DESIGN.md, "the client's contract"):
/// - a tap leaves the queue only when the server's answer says it is stored (200, `applied` or
///   `skipped` in a batch), or when the server refused it or a tap before it (409, 412, 422, 400
///   problems), and then it is named in a ``Correction``;
/// - any other answer (a 5xx, 429, a body that is not what the route answers, no answer at all)
///   is an unknown outcome: the same request goes again under the same keys after a pause, and
///   after ``RetryPolicy/attempts`` tries the client goes offline and waits for the server;
/// - taps made while a request is on the wire stay queued and go next;
/// - a 401 or 404 problem for the session itself means it is gone: a new one is created and the
///   queued taps are reported in a ``Restart``.
public struct ClientMachine: Sendable {
    /// The last state the server answered.
    public private(set) var confirmed: NavigationState
    /// What the app shows: `confirmed` with the queued taps applied.
    public private(set) var shown: NavigationState
    /// The local engine at `shown`, when the session's bundle is loaded and still valid.
    public private(set) var engine: SessionState?
    /// The local engine at `confirmed`, for rolling back (and for the store to keep).
    public private(set) var confirmedEngine: SessionState?
    /// The engine after each queued tap, to move `confirmedEngine` on as answers confirm them.
    private var enginesAfter: [String: SessionState] = [:]
    /// The server's predictions for `confirmed`, used when there is no engine; kept until the
    /// answer that replaces them.
    public private(set) var predictions: [(action: FlowAction, state: NavigationState)]
    /// Taps shown (or waiting) and not yet answered, oldest first.
    public private(set) var queue: [QueuedAction] = []
    /// How many of the oldest queued taps are on the wire.
    public private(set) var inFlight = 0
    /// True while the server cannot be reached (or keeps failing, or the app said so).
    public private(set) var offline = false
    /// True when the local engine is gone and the bundle must be fetched again.
    public private(set) var needsBundle = true
    /// Set when the server said the session is gone: the next command creates a new one.
    public private(set) var gone: (status: Int, problem: JSONValue?)?
    /// How requests that got no usable answer are retried.
    public var retry: RetryPolicy
    /// Unknown outcomes in a row (reset by any answer that says what happened).
    public private(set) var failures = 0
    /// What the last unknown outcome was ("status 500", "no answer: timed out", …).
    public private(set) var lastFailure: String?
    /// The most taps one batch carries (the server takes at most 100).
    public static let batchLimit = 100

    private var pauseOwed: Duration?
    /// Keys of queued taps that have been on the wire (their action can no longer change).
    private var sent = Set<String>()
    private var reloadPending: JSONValue??

    public init(confirmed: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = [], retry: RetryPolicy = RetryPolicy()) {
        self.confirmed = confirmed
        self.shown = confirmed
        self.predictions = predictions
        self.retry = retry
    }

    /// What the driver must do next.
    public enum Command: Sendable, Equatable {
        /// Post one action with `If-Match: "<version>"` and its idempotency key.
        case post(QueuedAction)
        /// Post these actions as one batch (the oldest queued, at most ``ClientMachine/batchLimit``).
        case batch([QueuedAction])
        /// Read the session's state again: a 412 said something else acted.
        case reload
        /// Create a new session for the same user: the server said this one is gone.
        case create
        /// Wait this long, then ask again: the last request had an unknown outcome.
        case pause(Duration)
    }

    /// What came back for a command: the status and body as they came, or nothing.
    public enum Reply: Sendable, Equatable {
        case answer(status: Int, body: [UInt8])
        /// No answer: connection refused or cut, timed out, not HTTP.
        case noAnswer(String)
    }

    /// What a tap did.
    public enum TapResult: Sendable, Equatable {
        /// Shown at once: the state the engine (or a prediction) gave.
        case shown(NavigationState)
        /// No way to predict it: queued, and the caller waits for the answer to `key`.
        case waiting(key: String)
    }

    // MARK: the bundle, and taps kept across a restart

    /// The session's bundle arrived: its state becomes the local engine if it is at the
    /// confirmed version and nothing shown is queued; taps queued without a state shown (kept
    /// across a restart, or waiting) are replayed on it.
    public mutating func loaded(_ bundle: SessionState) {
        guard bundle.version == confirmed.version else { return }
        guard queue.isEmpty || (inFlight == 0 && queue.allSatisfy({ $0.expected == nil }) && queue.first?.version == bundle.version) else { return }
        confirmedEngine = bundle
        engine = bundle
        needsBundle = false
        if !queue.isEmpty { replayQueue(on: bundle) }
    }

    /// Taps queued before the app restarted, put back in the queue (shown once the bundle loads
    /// and they replay on it).
    public mutating func restore(_ queued: [QueuedAction]) {
        queue = queued.map(\.kept)
        if let engine = confirmedEngine, engine.version == confirmed.version { replayQueue(on: engine) }
    }

    /// A client started again while the server cannot be reached, from what the store kept: the
    /// confirmed state, the bundle at that version (when kept), and the queued taps replayed on it,
    /// so it shows what the user last saw; offline, so taps run locally and queue until the
    /// server answers. Without a bundle nothing can be replayed: it shows `confirmed`, the kept
    /// taps stay queued (sent when back), and a new tap waits for the server.
    public static func restoredOffline(confirmed: NavigationState, bundle: SessionState?, queue: [QueuedAction],
                                       retry: RetryPolicy = RetryPolicy()) -> ClientMachine {
        var machine = ClientMachine(confirmed: confirmed, retry: retry)
        machine.restore(queue)
        if let bundle { machine.loaded(bundle) }
        machine.offline = true
        return machine
    }

    /// Replays the queue on the engine as far as it applies; a tap that no longer applies (or was
    /// made on another version) stays queued unshown, and so do those after it: the server
    /// decides them, and a refusal is reported. Nothing is dropped here.
    private mutating func replayQueue(on start: SessionState) {
        var current = start
        for index in queue.indices {
            let item = queue[index]
            guard item.version == current.version, let (next, _) = try? current.applying(item.action),
                  let state = try? NavigationState(next) else { break }
            queue[index].expected = state
            enginesAfter[item.key] = next
            current = next
        }
        engine = queue.allSatisfy({ $0.expected != nil }) ? current : nil
        shown = queue.last(where: { $0.expected != nil })?.expected ?? confirmed
    }

    // MARK: taps

    /// A tap: applied on the local engine (or matched to a prediction) and queued.
    ///
    /// - Throws: the engine's refusal, when the local engine refuses the action (nothing is queued:
    ///   the server would refuse it too).
    public mutating func tap(_ action: FlowAction, key: String, at: String? = nil) throws(FlowError) -> TapResult {
        let version = queue.last.map { $0.version + 1 } ?? confirmed.version
        if let engine, engine.version == version, queue.allSatisfy({ $0.expected != nil }) {
            let (next, _) = try engine.applying(action)
            if let state = try? NavigationState(next) {
                self.engine = next
                enginesAfter[key] = next
                queue.append(QueuedAction(key: key, version: version, action: action, expected: state, at: at))
                shown = state
                return .shown(state)
            }
        }
        if queue.isEmpty, let prediction = predicted(action, version: version) {
            queue.append(QueuedAction(key: key, version: version, action: prediction.action, expected: prediction.state, at: at))
            shown = prediction.state
            return .shown(prediction.state)
        }
        queue.append(QueuedAction(key: key, version: version, action: action, expected: nil, at: at))
        return .waiting(key: key)
    }

    /// The prediction of the last answer for `action`, when it is for the version confirmed: the
    /// action to post (the tap, with `from` the screen the prediction was made from when the tap
    /// named none, since the server keeps the action as posted, in a guard's pending actions for
    /// one) and the state it shows.
    private func predicted(_ action: FlowAction, version: Int) -> (action: FlowAction, state: NavigationState)? {
        guard version == confirmed.version, shown == confirmed,
              let prediction = predictions.first(where: { Self.matches($0.action, action, top: confirmed.top?.id) }) else { return nil }
        var posted = action
        if posted.from == nil { posted.from = prediction.action.from }
        return (posted, prediction.state)
    }

    /// A prediction is for a tap when the type, params and interactivity agree and `from` is
    /// the same screen (a tap without `from` acts on the screen on top).
    private static func matches(_ predicted: FlowAction, _ action: FlowAction, top: String?) -> Bool {
        predicted.type == action.type && predicted.params == action.params && predicted.interactive == action.interactive
            && (predicted.from ?? top) == (action.from ?? top)
    }

    /// The state a queued tap shows, when it shows one (nil while it waits).
    public func expected(forKey key: String) -> NavigationState? {
        queue.first(where: { $0.key == key })?.expected
    }

    // MARK: what to send

    /// The next thing to do, if any: a pause owed after an unknown outcome, a new session for one
    /// that is gone, a reload after a 412, then one action, or the oldest queued ones as a batch
    /// (after being offline, or when taps came faster than answers). Nothing while offline or
    /// while a request is on the wire.
    public mutating func nextCommand(batches: Bool = true) -> Command? {
        guard !offline, inFlight == 0 else { return nil }
        if let pause = pauseOwed {
            pauseOwed = nil
            return .pause(pause)
        }
        if gone != nil {
            inFlight = -1
            return .create
        }
        if reloadPending != nil {
            inFlight = -1
            return .reload
        }
        guard let first = queue.first else { return nil }
        if sent.count > 2 * queue.count + 16 { sent.formIntersection(queue.map(\.key)) }  // keys answered since
        if queue.count > 1 && batches {
            let items = Array(queue.prefix(Self.batchLimit))
            inFlight = items.count
            for item in items { sent.insert(item.key) }
            return .batch(items)
        }
        inFlight = 1
        sent.insert(first.key)
        return .post(first)
    }

    /// True while a request is on the wire.
    public var busy: Bool { inFlight != 0 }

    // MARK: what an answer means

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

    private mutating func handlePost(_ reply: Reply, _ item: QueuedAction) -> [ClientEvent] {
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

    private mutating func handleBatch(_ reply: Reply, _ items: [QueuedAction]) -> [ClientEvent] {
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

    private mutating func handleReload(_ reply: Reply) -> [ClientEvent] {
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
    private mutating func unknownOutcome(_ detail: String) -> [ClientEvent] {
        inFlight = 0
        failures += 1
        lastFailure = detail
        if failures >= retry.attempts {
            pauseOwed = nil
            if offline { return [] }
            offline = true
            return [.offline]
        }
        pauseOwed = retry.delay(before: failures)
        return []
    }

    // MARK: answers that say what happened

    /// The server stored `key` (a post's 200, or its replay) and is at `state`.
    public mutating func answered(key: String, state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return [] }
        let item = queue[index]
        for taken in queue[...index] where taken.key != key { enginesAfter[taken.key] = nil }
        queue.removeFirst(index + 1)
        return settle(state, predictions: predictions, after: item)
    }

    /// The server's answer after `last` was stored: confirmed when it is what was shown; a tap
    /// that showed nothing takes the answer as what to show; any other answer is adopted, and the
    /// taps still queued (made on a state the server did not reach) are reported.
    private mutating func settle(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)],
                                 after last: QueuedAction, refusal: JSONValue? = nil) -> [ClientEvent] {
        confirmed = state
        // When a batch stopped at a refusal, that is why the rest is dropped.
        let reason: Correction.Reason = refusal == nil ? .differentAnswer : refusal?["status"]?.integerValue == 412 ? .versionMismatch : .refused
        if let expected = last.expected {
            guard expected == state else {
                return adopt(state, predictions: predictions, dropped: queue, problem: refusal, reason: reason)
            }
            confirmedEngine = enginesAfter.removeValue(forKey: last.key)
            self.predictions = predictions
            if queue.isEmpty { shown = state }
            showFirstWaiting()
            return [.confirmed(state)]
        }
        // A tap that showed nothing: the answer is what to show. Later taps that showed nothing
        // either still wait on it.
        confirmedEngine = nil
        engine = nil
        needsBundle = true
        enginesAfter = [:]
        guard queue.allSatisfy({ $0.expected == nil }) else {
            return adopt(state, predictions: predictions, dropped: queue, problem: refusal, reason: reason)
        }
        shown = state
        self.predictions = predictions
        showFirstWaiting()
        return [.confirmed(state)]
    }

    /// The oldest queued tap, when it waits right after the confirmed state, is shown from the
    /// answer's predictions if one is for it (so a tap made while the one before it was on the
    /// wire waits one round trip, not two). Its action takes the prediction's `from` only if it
    /// never went out under its key.
    private mutating func showFirstWaiting() {
        guard let first = queue.first, first.expected == nil, !sent.contains(first.key), shown == confirmed,
              let prediction = predicted(first.action, version: first.version) else { return }
        queue[0].action = prediction.action
        queue[0].expected = prediction.state
        shown = prediction.state
    }

    /// The server refused a posted action (or a batch as a whole). A 412 asks for a reload; the
    /// others roll back to the confirmed state, dropping the refused tap and those after it,
    /// which are reported (even when nothing on screen changes: a tap that waited).
    public mutating func refused(key: String, status: Int, problem: JSONValue?) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        if status == 412 {
            reloadPending = .some(problem)
            return []
        }
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return [] }
        let dropped = Array(queue[index...])
        queue.removeSubrange(index...)
        let from = shown
        for item in dropped { enginesAfter[item.key] = nil }
        if queue.isEmpty {
            engine = confirmedEngine
            shown = confirmed
        } else {
            engine = queue.last.flatMap { enginesAfter[$0.key] }
            shown = queue.last(where: { $0.expected != nil })?.expected ?? confirmed
        }
        needsBundle = engine == nil
        return [.corrected(Correction(from: from, to: shown, taps: dropped, problem: problem, reason: .refused))]
    }

    /// The server's state, read after a 412: adopted, the queue dropped and reported.
    public mutating func reloaded(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        let problem = reloadPending ?? nil
        reloadPending = nil
        return adopt(state, predictions: predictions, dropped: queue, problem: problem, reason: .versionMismatch)
    }

    /// The answer to a batch of the `sent` oldest queued taps: `done` the keys applied or skipped
    /// (already applied), `refusal` the problem that stopped it, `state` the session after it.
    /// Taps made while it was on the wire stay queued (they follow the last one sent).
    public mutating func batchAnswered(sent: Int, done: Set<String>, refusal: JSONValue?, state: NavigationState) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        let sentItems = queue.prefix(sent)
        let taken = sentItems.prefix(while: { done.contains($0.key) }).count
        if taken == 0 && refusal == nil {
            // Nothing taken and no reason given: the same batch goes again.
            return unknownOutcome("a batch answered with nothing applied and no refusal")
        }
        var events: [ClientEvent] = []
        if taken > 0 {
            let last = queue[taken - 1]
            for item in queue.prefix(taken - 1) { enginesAfter[item.key] = nil }
            queue.removeFirst(taken)
            events = settle(state, predictions: [], after: last, refusal: refusal)
            if case .corrected = events.first { return events }  // adopted: the queue is already dropped
        }
        guard let refusal else { return events }
        let reason: Correction.Reason = refusal["status"]?.integerValue == 412 ? .versionMismatch : .refused
        guard state == confirmed, confirmedEngine == nil || confirmedEngine?.version == state.version else {
            return events + adopt(state, predictions: [], dropped: queue, problem: refusal, reason: reason)
        }
        // The server is where the client last confirmed: roll back to it, the engine with it.
        let from = shown
        let dropped = queue
        queue = []
        enginesAfter = [:]
        shown = confirmed
        engine = confirmedEngine
        needsBundle = engine == nil
        return events + [.corrected(Correction(from: from, to: shown, taps: dropped, problem: refusal, reason: reason))]
    }

    /// A version from the event stream. Adopted when nothing of this client's is pending and it
    /// is newer than the confirmed one; while taps are pending, their answers settle it.
    public mutating func received(_ state: NavigationState) -> [ClientEvent] {
        guard state.version > confirmed.version, queue.isEmpty, inFlight == 0, gone == nil else { return [] }
        confirmed = state
        let from = shown
        shown = state
        engine = nil
        confirmedEngine = nil
        needsBundle = true
        predictions = []
        return from == state ? [] : [.remote(state)]
    }

    /// The server said the session is gone: the next command creates a new one.
    private mutating func sessionGone(status: Int, problem: JSONValue?) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        gone = (status, problem)
        return []
    }

    /// The session is gone (``gone``, or found gone at start) and `state` is the new one's: it is
    /// shown, and the taps queued on the old one are reported as dropped.
    public mutating func restarted(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = [],
                                   oldSession: String, status: Int? = nil, problem: JSONValue? = nil) -> [ClientEvent] {
        let status = status ?? gone?.status ?? 404
        let problem = problem ?? gone?.problem
        let dropped = queue
        self = ClientMachine(confirmed: state, predictions: predictions, retry: retry)
        let reason = "session \(oldSession) is gone (\(status))"
            + (dropped.isEmpty ? "" : "; \(dropped.count) queued tap(s) were dropped") + "; started a new one"
        return [.restarted(Restart(reason: reason, state: state, dropped: dropped, status: status, problem: problem))]
    }

    /// The answer to ``Command/create`` could not be read (no answer, a 5xx): the same goes again.
    public mutating func createFailed(_ detail: String) -> [ClientEvent] {
        unknownOutcome(detail)
    }

    /// A request the driver could not make (a route the server lacks): its taps stay queued.
    public mutating func unsent() { inFlight = 0 }

    /// The server could not be reached (or the app said so): taps run locally and queue.
    public mutating func unreachable() -> [ClientEvent] {
        inFlight = 0
        pauseOwed = nil
        if offline { return [] }
        offline = true
        return [.offline]
    }

    /// The server answers again: what is queued goes next.
    public mutating func reachable() -> [ClientEvent] {
        failures = 0
        guard offline else { return [] }
        offline = false
        return [.online]
    }

    /// Adopts the server's state, dropping the queue (reported unless empty); the local engine is
    /// gone until the bundle is fetched again.
    private mutating func adopt(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)], dropped: [QueuedAction],
                                problem: JSONValue?, reason: Correction.Reason) -> [ClientEvent] {
        let from = shown
        confirmed = state
        shown = state
        queue = []
        enginesAfter = [:]
        engine = nil
        confirmedEngine = nil
        needsBundle = true
        self.predictions = predictions
        if from == state && dropped.isEmpty { return [.confirmed(state)] }
        return [.corrected(Correction(from: from, to: state, taps: dropped, problem: problem, reason: reason))]
    }
}

// ClientMachine: a client's confirmed, shown and queued state, and what to do next, with no I/O.
import FlowEngine
import JSON

/// An action the client showed ahead of the server and has not yet seen confirmed.
///
/// `version` is the version the action was applied on (the `If-Match` it is posted with);
/// `key` its idempotency key, the same on every retry and in a batch after the app restarts.
public struct QueuedAction: Sendable, Equatable {
    public var key: String
    public var version: Int
    public var action: FlowAction
    /// The state the client showed for it; nil when it had no way to predict it (it waited).
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
}

/// The server disagreed with what the client showed: the client now shows `to`.
///
/// `from` is what was on screen, `to` what is right; `refused` lists the taps the server did not
/// take (refused, or dropped because they were made on a state that turned out wrong), with the
/// problem the server gave, when it gave one.
public struct Correction: Sendable, Equatable {
    public var from: NavigationState
    public var to: NavigationState
    public var refused: [FlowAction]
    public var problem: JSONValue?
    public var reason: Reason

    public enum Reason: String, Sendable, Equatable {
        /// The answer to a posted action differs from the state shown (the user's state changed elsewhere).
        case differentAnswer
        /// Another device acted first (412): the client read the server's state and adopted it.
        case versionMismatch
        /// The server refused an action (409 or 422): the client rolled back to the server's state.
        case refused
    }
}

/// What the client reports as the session moves.
public enum ClientEvent: Sendable, Equatable {
    /// The server confirmed a state the client showed (or, for a tap that waited, answered it).
    case confirmed(NavigationState)
    /// The server's state differs from what was shown; the client now shows `to`.
    case corrected(Correction)
    /// Another device made a version; the client now shows it.
    case remote(NavigationState)
    /// The server cannot be reached: taps are applied locally and queued.
    case offline
    /// The server is reachable again; queued taps are being sent.
    case online
    /// The session had expired or was deleted (at start, or while in use); a new one was started
    /// and the taps queued on the old one dropped (`reason` says why).
    case restarted(reason: String)
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
/// queued, and, for each event, what to do next. The ``FlowSession`` driver performs the I/O;
/// the tests drive this directly.
///
/// ```swift
/// var machine = ClientMachine(confirmed: answer)
/// machine.loaded(bundle.state)
/// let shown = try machine.tap(FlowAction(type: "onboarding.showSecond", from: "e3"), key: "k1")
/// machine.nextCommand()              // .post(the queued tap)
/// machine.answered(key: "k1", state: serverAnswer)   // [.confirmed(serverAnswer)]
/// ```
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
    /// The server's predictions for `confirmed`, used when there is no engine.
    public private(set) var predictions: [(action: FlowAction, state: NavigationState)]
    /// Taps shown (or waiting) and not yet answered, oldest first.
    public private(set) var queue: [QueuedAction] = []
    /// How many of the oldest queued taps are on the wire.
    public private(set) var inFlight = 0
    /// True while the server cannot be reached (or the app said so).
    public private(set) var offline = false
    /// True when the local engine is gone and the bundle must be fetched again.
    public private(set) var needsBundle = true

    public init(confirmed: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) {
        self.confirmed = confirmed
        self.shown = confirmed
        self.predictions = predictions
    }

    /// What the driver must do next.
    public enum Command: Sendable, Equatable {
        /// Post one action with `If-Match: "<version>"` and its idempotency key.
        case post(QueuedAction)
        /// Post these actions as one batch.
        case batch([QueuedAction])
        /// Read the session's state (and bundle) again: a 412 said something else acted.
        case reload
    }

    /// What a tap did.
    public enum TapResult: Sendable, Equatable {
        /// Shown at once: the state the engine (or a prediction) gave.
        case shown(NavigationState)
        /// No way to predict it: queued, and the caller waits for the answer to `key`.
        case waiting(key: String)
    }

    private var reloadPending = false

    // MARK: events

    /// The session's bundle arrived: its state becomes the local engine if it is at the
    /// confirmed version and nothing is queued; else it is kept only if queued taps were made on
    /// it (after a restart), which are replayed on it.
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
        queue = queued.map { QueuedAction(key: $0.key, version: $0.version, action: $0.action, expected: nil, at: $0.at) }
        if let engine = confirmedEngine, engine.version == confirmed.version { replayQueue(on: engine) }
    }

    /// A client started again while the server cannot be reached, from what the store kept: the
    /// confirmed state, the bundle at that version (when kept), and the queued taps replayed on it,
    /// so it shows what the user last saw; offline, so taps run locally and queue until the
    /// server answers. Without a bundle nothing can be replayed: it shows `confirmed`, the kept
    /// taps stay queued (sent when back), and a new tap waits for the server.
    public static func restoredOffline(confirmed: NavigationState, bundle: SessionState?, queue: [QueuedAction]) -> ClientMachine {
        var machine = ClientMachine(confirmed: confirmed)
        machine.restore(queue)
        if let bundle { machine.loaded(bundle) }
        machine.offline = true
        return machine
    }

    private mutating func replayQueue(on start: SessionState) {
        var current = start
        var kept: [QueuedAction] = []
        for var item in queue {
            guard item.version == current.version, let (next, _) = try? current.applying(item.action),
                  let state = try? NavigationState(next) else { break }
            item.expected = state
            enginesAfter[item.key] = next
            kept.append(item)
            current = next
        }
        queue = kept
        engine = current
        shown = kept.last?.expected ?? confirmed
    }

    /// A tap: applied on the local engine (or matched to a prediction) and queued.
    ///
    /// - Throws: the engine's refusal, when the local engine refuses the action (nothing is queued:
    ///   the server would refuse it too).
    public mutating func tap(_ action: FlowAction, key: String, at: String? = nil) throws(FlowError) -> TapResult {
        let version = queue.last.map { $0.version + 1 } ?? confirmed.version
        if let engine, engine.version == version {
            let (next, _) = try engine.applying(action)
            if let state = try? NavigationState(next) {
                self.engine = next
                enginesAfter[key] = next
                queue.append(QueuedAction(key: key, version: version, action: action, expected: state, at: at))
                shown = state
                return .shown(state)
            }
        }
        if queue.isEmpty, let prediction = predictions.first(where: { Self.matches($0.action, action, top: shown.top?.id) }) {
            queue.append(QueuedAction(key: key, version: version, action: action, expected: prediction.state, at: at))
            shown = prediction.state
            predictions = []
            return .shown(prediction.state)
        }
        queue.append(QueuedAction(key: key, version: version, action: action, expected: nil, at: at))
        return .waiting(key: key)
    }

    /// A prediction is for a tap when the type, params and interactivity agree and `from` is
    /// the same screen (a tap without `from` acts on the screen on top).
    private static func matches(_ predicted: FlowAction, _ action: FlowAction, top: String?) -> Bool {
        predicted.type == action.type && predicted.params == action.params && predicted.interactive == action.interactive
            && (predicted.from ?? top) == (action.from ?? top)
    }

    /// The next thing to send, if any: one action, or every queued one as a batch (after being
    /// offline, or when taps came faster than answers). Nothing while offline or while a request
    /// is on the wire.
    public mutating func nextCommand(batches: Bool = true) -> Command? {
        if reloadPending {
            reloadPending = false
            return .reload
        }
        guard !offline, inFlight == 0, let first = queue.first else { return nil }
        if queue.count > 1 && batches {
            let items = Array(queue.prefix(100))
            inFlight = items.count
            return .batch(items)
        }
        inFlight = 1
        return .post(first)
    }

    /// The answer to a posted action (or to a retry of it).
    public mutating func answered(key: String, state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) -> [ClientEvent] {
        inFlight = 0
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return [] }
        let item = queue[index]
        queue.removeFirst(index + 1)
        confirmed = state
        if let expected = item.expected, expected == state {
            confirmedEngine = enginesAfter.removeValue(forKey: key)
            if queue.isEmpty {
                shown = state
                self.predictions = predictions
            }
            return [.confirmed(state)]
        }
        if item.expected == nil && queue.isEmpty {
            // A tap that waited: the answer is what to show.
            shown = state
            self.predictions = predictions
            return [.confirmed(state)]
        }
        return adopt(state, predictions: predictions, refused: queue.map(\.action), problem: nil, reason: .differentAnswer)
    }

    /// The server refused a posted action. A 412 asks for a reload; 409/422 roll back to the
    /// confirmed state, dropping the taps made after it.
    public mutating func refused(key: String, status: Int, problem: JSONValue?) -> [ClientEvent] {
        inFlight = 0
        if status == 412 {
            reloadPending = true
            return []
        }
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return [] }
        let dropped = queue[index...].map(\.action)
        let rollback = confirmed
        queue.removeSubrange(index...)
        let from = shown
        engine = confirmedEngine
        enginesAfter = [:]
        shown = rollback
        if from == rollback { return [] }
        return [.corrected(Correction(from: from, to: rollback, refused: dropped, problem: problem, reason: .refused))]
    }

    /// The server's state, read after a 412 (or after the app restarted): adopted, the queue dropped.
    public mutating func reloaded(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) -> [ClientEvent] {
        inFlight = 0
        return adopt(state, predictions: predictions, refused: queue.map(\.action), problem: nil, reason: .versionMismatch)
    }

    /// The answer to a batch: `done` the keys applied or skipped (already applied), `refusal`
    /// the problem that stopped it, `state` the session after it.
    public mutating func batchAnswered(done: Set<String>, refusal: JSONValue?, state: NavigationState) -> [ClientEvent] {
        inFlight = 0
        let last = queue.last(where: { done.contains($0.key) })
        let remaining = queue.filter { !done.contains($0.key) }
        if refusal == nil, remaining.isEmpty, let last, last.expected == nil {
            // Taps restored after a restart that the client could not replay: the server's state is the answer.
            queue = []
            return adopt(state, predictions: [], refused: [], problem: nil, reason: .differentAnswer, quiet: true)
        }
        if refusal == nil, remaining.isEmpty, let last, let expected = last.expected, expected == state {
            confirmedEngine = enginesAfter[last.key]
            enginesAfter = [:]
            queue = []
            confirmed = state
            shown = state
            predictions = []
            return [.confirmed(state)]
        }
        confirmed = state
        let reason: Correction.Reason = refusal == nil ? .differentAnswer : .refused
        if refusal?["status"]?.integerValue == 412 {
            return adopt(state, predictions: [], refused: remaining.map(\.action), problem: refusal, reason: .versionMismatch)
        }
        return adopt(state, predictions: [], refused: remaining.map(\.action), problem: refusal, reason: reason)
    }

    /// A version from the event stream. Adopted when nothing of this client's is pending and it
    /// is newer than the confirmed one; while taps are pending, their answers settle it.
    public mutating func received(_ state: NavigationState) -> [ClientEvent] {
        guard state.version > confirmed.version, queue.isEmpty, inFlight == 0 else { return [] }
        confirmed = state
        let from = shown
        shown = state
        engine = nil
        confirmedEngine = nil
        needsBundle = true
        predictions = []
        return from == state ? [] : [.remote(state)]
    }

    /// A request the driver could not make (a route the server lacks): its taps stay queued.
    public mutating func unsent() { inFlight = 0 }

    /// The server could not be reached after the retries: the taps on the wire go back to the
    /// queue, and the client keeps working locally.
    public mutating func unreachable() -> [ClientEvent] {
        inFlight = 0
        if offline { return [] }
        offline = true
        return [.offline]
    }

    /// The server answers again: what is queued goes next.
    public mutating func reachable() -> [ClientEvent] {
        guard offline else { return [] }
        offline = false
        return [.online]
    }

    /// Adopts the server's state, dropping the queue; the local engine is gone until the bundle
    /// is fetched again.
    private mutating func adopt(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)], refused: [FlowAction],
                                problem: JSONValue?, reason: Correction.Reason, quiet: Bool = false) -> [ClientEvent] {
        let from = shown
        confirmed = state
        shown = state
        queue = []
        enginesAfter = [:]
        engine = nil
        confirmedEngine = nil
        needsBundle = true
        self.predictions = predictions
        if quiet || (from == state && refused.isEmpty) { return [.confirmed(state)] }
        return [.corrected(Correction(from: from, to: state, refused: refused, problem: problem, reason: reason))]
    }
}

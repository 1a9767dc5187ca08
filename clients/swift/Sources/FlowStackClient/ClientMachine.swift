// ClientMachine: a client's confirmed, shown and queued state, what every answer means, and what
// to do next, with no I/O. Here its state and its words (commands, replies); the jobs are in
// ClientMachine+taps, +answers and +outcomes, what it reports in ClientEvent.swift.
import FlowEngine
import JSON

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
    public internal(set) var confirmed: NavigationState
    /// What the app shows: `confirmed` with the queued taps applied.
    public internal(set) var shown: NavigationState
    /// The local engine at `shown`, when the session's bundle is loaded and still valid.
    public internal(set) var engine: SessionState?
    /// The local engine at `confirmed`, for rolling back (and for the store to keep).
    public internal(set) var confirmedEngine: SessionState?
    /// The engine after each queued tap, to move `confirmedEngine` on as answers confirm them.
    var enginesAfter: [String: SessionState] = [:]
    /// The server's predictions for `confirmed`, used when there is no engine; kept until the
    /// answer that replaces them.
    public internal(set) var predictions: [(action: FlowAction, state: NavigationState)]
    /// Taps shown (or waiting) and not yet answered, oldest first.
    public internal(set) var queue: [QueuedAction] = []
    /// How many of the oldest queued taps are on the wire.
    public internal(set) var inFlight = 0
    /// True while the server cannot be reached (or keeps failing, or the app said so).
    public internal(set) var offline = false
    /// True when the local engine is gone and the bundle must be fetched again.
    public internal(set) var needsBundle = true
    /// Set when the server said the session is gone: the next command creates a new one.
    public internal(set) var gone: (status: Int, problem: JSONValue?)?
    /// How requests that got no usable answer are retried.
    public var retry: RetryPolicy
    /// Unknown outcomes in a row since the last try went out online (reset by any answer that
    /// says what happened, and when the server answers again).
    public internal(set) var failures = 0
    /// Unknown outcomes in a row, across going offline and back (reset only by an answer that
    /// says what happened): the backoff grows with it, so a server that answers `/healthz` but
    /// fails every request (a persisting 500) is not asked at the first delay after every probe.
    public internal(set) var streak = 0
    /// What the last unknown outcome was ("status 500", "no answer: timed out", …).
    public internal(set) var lastFailure: String?
    /// The most taps one batch carries (the server takes at most 100).
    public static let batchLimit = 100

    var pauseOwed: Duration?
    /// Keys of queued taps that have been on the wire (their action can no longer change).
    var sent = Set<String>()
    var reloadPending: JSONValue??

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
}

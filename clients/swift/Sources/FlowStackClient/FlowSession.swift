// FlowSession: the client driver, an actor that performs what ClientMachine asks (HTTP, store, events).
import FlowEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

/// One FlowStack session seen from an app: taps show their next screen at once, are posted in
/// the background, confirmed or corrected, queued while offline, and the session follows other
/// devices.
///
/// ```swift
/// let session = try await FlowSession.start(.init(
///     server: URL(string: "https://flows.example.com")!, clientKey: "fsk_…", userId: "ada",
///     client: .init(platform: "ios", appVersion: "2.3.1", features: Screens.registered),
///     store: FileSessionStore(path: support + "/flowstack.json")))
/// var state = try await session.send(FlowAction(type: "onboarding.showSecond"))  // no network wait
/// for await event in await session.events() {          // .confirmed, .corrected, .remote, .offline…
///     if case .corrected(let fix) = event { render(fix.to) }
/// }
/// ```
public actor FlowSession {
    // What the session holds; its jobs are in the extensions FlowSession+starting, +reading,
    // +acting, +turn and +following (and what the app configures in FlowSession+Configuration).
    let configuration: Configuration
    let transport: any FlowTransport
    var stored: StoredSession
    var machine: ClientMachine
    var bundleTag: String?
    var bundleCache: SessionState?
    var bundleTriedAt: Int?
    var batchSupported = true
    var draining = false
    var forcedOffline = false
    var probe: Task<Void, Never>?
    /// The wait the last answer's `Retry-After` asked for (a 429 or 503), until the drain hands it on.
    var lastRetryAfter: Duration?
    /// The least the probe waits before its first try (a `Retry-After` seen as it went offline).
    var probeWait: Duration = .zero
    var waiters: [String: CheckedContinuation<NavigationState, any Error>] = [:]
    var refusals: [String: ActionRefused] = [:]
    var subscribers: [UUID: AsyncStream<ClientEvent>.Continuation] = [:]
    var stateSubscribers: [UUID: AsyncStream<NavigationState>.Continuation] = [:]
    var published: NavigationState
    var settleWaiters: [CheckedContinuation<Void, Never>] = []
    var following = false
    var stream: EventStreamConnection?
    var streamGeneration = 0
    var lastEventId: String?
    var streamFailures = 0
    nonisolated let currentId: SessionIdBox

    /// The bundle the server sent (or the store kept), to write the engine's later versions with.
    struct FetchedBundle {
        var version: Int
        var bytes: [UInt8]
        var tag: String?
        var flowVersions: [String: Int]
        var definitions: [(name: String, json: [UInt8])]
    }

    var fetchedBundle: FetchedBundle?
    /// Set when the engine came from the store: its bundle is revalidated once the drain is idle.
    var revalidateBundle = false
    var persistedConfirmedVersion: Int?
    var persistedBundleVersion: Int?
    /// Saves the store refused in a row; while there are any, a save is tried again with the
    /// retry policy's backoff (`saveRetry`) and by every change.
    var saveFailures = 0
    var saveRetry: Task<Void, Never>?
    /// Set by ``close()``: nothing is sent nor written to the store after it.
    var closed = false
    /// The session's hold on its slot of the store (``SessionKey/slot``), let go by ``close()``
    /// or when the session is dropped; nil when the store has no slot scope.
    let slotClaim: SlotClaim?
    /// Why the store last refused a save (a full disk, a keychain error). The session tries the
    /// save again with the retry policy's backoff until one succeeds: the taps stay queued in
    /// memory and are sent meanwhile, but a tap the store lost would be lost with the app.
    public internal(set) var lastStoreError: (any Error)?
    /// Every event reported so far, oldest first (the last 1,000).
    public internal(set) var history: [ClientEvent] = []
    /// The last time the session was found gone (kept from the last launch, or while in use: an
    /// answer of 401 or 404 for the session itself) and a new one was started: why, the new
    /// state, and the taps that were dropped.
    public internal(set) var lastRestart: Restart?
    /// Why the session was last replaced by a new one (``lastRestart``'s reason).
    public var restartReason: String? { lastRestart?.reason }

    init(configuration: Configuration, transport: any FlowTransport, stored: StoredSession, machine: ClientMachine,
         claim: SlotClaim? = nil) {
        self.configuration = configuration
        self.slotClaim = claim
        self.transport = transport
        self.stored = stored
        self.machine = machine
        self.published = machine.shown
        self.currentId = SessionIdBox(stored.sessionId)
    }
}

/// The session's id, readable from any thread, changed when a gone session is replaced.
final class SessionIdBox: @unchecked Sendable {
    private let lock = NSLock()
    private var id: String
    init(_ id: String) { self.id = id }
    var value: String {
        get { lock.withLock { id } }
        set { lock.withLock { id = newValue } }
    }
}

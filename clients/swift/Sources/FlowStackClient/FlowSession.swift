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
    /// What the app builds: the server, the credentials, who the user is and what the build draws.
    public struct Configuration: Sendable {
        public var server: URL
        /// The app's client key (`fsk_…`), sent as `X-API-Key` when a session is created.
        public var clientKey: String?
        public var userId: String
        /// HMAC-SHA256 of the user id, from the app's backend, when the server verifies user ids.
        public var userHash: String?
        public var attributes: JSONObject
        public var traits: [String: String]
        /// What this build can draw; nil when the app does not say (taken to draw everything).
        public var client: ClientInfo?
        /// Where the session is kept between launches, under the server and the user (``SessionKey``).
        public var store: any SessionStore
        public var retry: RetryPolicy
        /// Seconds before a request counts as unanswered.
        public var timeout: TimeInterval
        /// A delay added before every request, to try the client on a slow network.
        public var simulatedLatency: Duration
        /// Whether to run the session's engine locally (false: server predictions only).
        public var usesBundle: Bool
        /// Whether to show the server's predictions when there is no local engine (false: a tap
        /// without the engine waits for its answer).
        public var usesPredictions: Bool
        /// How requests reach the server; nil for URLSession's (``URLSessionTransport``). Tests and
        /// simulations give their own.
        public var transport: (any FlowTransport)?

        public init(server: URL, clientKey: String? = nil, userId: String, userHash: String? = nil, attributes: JSONObject = [:],
                    traits: [String: String] = [:], client: ClientInfo? = nil, store: any SessionStore = MemorySessionStore(),
                    retry: RetryPolicy = RetryPolicy(), timeout: TimeInterval = 10, simulatedLatency: Duration = .zero,
                    usesBundle: Bool = true, usesPredictions: Bool = true, transport: (any FlowTransport)? = nil) {
            self.server = server
            self.clientKey = clientKey
            self.userId = userId
            self.userHash = userHash
            self.attributes = attributes
            self.traits = traits
            self.client = client
            self.store = store
            self.retry = retry
            self.timeout = timeout
            self.simulatedLatency = simulatedLatency
            self.usesBundle = usesBundle
            self.usesPredictions = usesPredictions
            self.transport = transport
        }

        /// The key the session is kept under.
        var key: SessionKey { SessionKey(server: server, userId: userId) }
    }

    /// `client: {platform, appVersion, features}` at session creation.
    public struct ClientInfo: Sendable, Equatable {
        public var platform: String
        public var appVersion: String
        /// Every screen feature this build registers.
        public var features: [String]
        public init(platform: String, appVersion: String, features: [String]) {
            self.platform = platform
            self.appVersion = appVersion
            self.features = features
        }
    }

    /// The server refused to create or resume a session (a problem document: a 422
    /// `unsupported-client`, a 403…), or answered something that is not a session: the status,
    /// the problem, and what the body began with when it was not a problem.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: Int
        public var problem: JSONValue?
        /// The first bytes of a body that names no problem (up to 200).
        public var body: String?
        public var description: String {
            if let detail = problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue {
                return "FlowStack answered \(status): \(detail)"
            }
            if let body, !body.isEmpty { return "FlowStack answered \(status), not a session nor a problem: \(body)" }
            return "FlowStack answered \(status) with no body"
        }

        init(_ answer: FlowAnswer) {
            status = answer.status
            problem = answer.json.flatMap { $0.objectValue != nil ? $0 : nil }
            let named = problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue
            body = named == nil ? String(decoding: answer.body.prefix(200), as: UTF8.self) : nil
        }
    }

    private let configuration: Configuration
    private let transport: any FlowTransport
    private var stored: StoredSession
    private var machine: ClientMachine
    private var bundleTag: String?
    private var bundleCache: SessionState?
    private var bundleTriedAt: Int?
    private var batchSupported = true
    private var draining = false
    private var forcedOffline = false
    private var probe: Task<Void, Never>?
    private var waiters: [String: CheckedContinuation<NavigationState, any Error>] = [:]
    private var refusals: [String: ActionRefused] = [:]
    private var subscribers: [UUID: AsyncStream<ClientEvent>.Continuation] = [:]
    private var stateSubscribers: [UUID: AsyncStream<NavigationState>.Continuation] = [:]
    private var published: NavigationState
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    private var following = false
    private var stream: EventStreamConnection?
    private var streamGeneration = 0
    private var lastEventId: String?
    /// Every event reported so far, oldest first (the last 1,000).
    public private(set) var history: [ClientEvent] = []
    /// The last time the session was found gone (kept from the last launch, or while in use: an
    /// answer of 401 or 404 for the session itself) and a new one was started: why, the new
    /// state, and the taps that were dropped.
    public private(set) var lastRestart: Restart?
    /// Why the session was last replaced by a new one (``lastRestart``'s reason).
    public var restartReason: String? { lastRestart?.reason }

    private init(configuration: Configuration, transport: any FlowTransport, stored: StoredSession, machine: ClientMachine) {
        self.configuration = configuration
        self.transport = transport
        self.stored = stored
        self.machine = machine
        self.published = machine.shown
        self.currentId = SessionIdBox(stored.sessionId)
    }

    // MARK: starting

    /// Resumes the session kept in `configuration.store` for this server and user, or starts a
    /// new one. A kept session the server no longer knows (a 401 or 404 problem) is replaced by a
    /// new one, and ``lastRestart`` (and a `.restarted` event) says so, with the taps it dropped.
    /// Taps kept in the store are sent, under the keys they were made with.
    ///
    /// When no working server answers (no answer, a 5xx, a body that is not FlowStack's, after
    /// the retries) and the store kept the session's confirmed state, the session starts from the
    /// store alone, offline: the local engine from the kept bundle, the kept taps replayed on it
    /// so the app shows what the user last saw, new taps shown at once and queued, a probe of
    /// `/healthz` with backoff, and the queue sent as batches when the server is back. A
    /// predictions-only client (`usesBundle: false`, or no bundle kept) shows the confirmed
    /// state; its kept taps stay queued (not shown) and are sent when back, and a new tap cannot
    /// be shown until then (`send` throws ``Unreachable``; the tap stays queued).
    ///
    /// - Throws: ``Failure`` when the server refuses to create the session (a 422
    ///   `unsupported-client`: show "update the app"), or ``Unreachable`` when no working server
    ///   answers and there is no kept session to start from ("offline at first launch").
    public static func start(_ configuration: Configuration) async throws -> FlowSession {
        let transport = configuration.transport
            ?? URLSessionTransport(server: configuration.server, timeout: configuration.timeout, latency: configuration.simulatedLatency)
        let key = configuration.key
        var gone: (kept: StoredSession, status: Int, problem: JSONValue)?
        if let kept = try configuration.store.load(key) {
            let (reply, answer) = await attempt(configuration.retry, transport, FlowRequest(
                method: "GET", path: "/v1/sessions/\(kept.sessionId)", query: "predict=true",
                headers: ["Authorization": "Bearer \(kept.token)"]))
            switch ClientMachine.classify(reply) {
            case .success(let json):
                if let (state, predictions) = try? ClientMachine.read(json), state.sessionId == kept.sessionId {
                    var machine = ClientMachine(confirmed: state, predictions: configuration.usesPredictions ? predictions : [],
                                                retry: configuration.retry)
                    machine.restore(kept.queue)
                    // The kept bundle, when it is at the version the server is at: the engine is
                    // there from the first tap, and revalidated (If-None-Match) in the background.
                    let bundle = configuration.usesBundle ? keptBundle(kept, at: state.version) : nil
                    if let bundle { machine.loaded(bundle.read.state) }
                    let session = FlowSession(configuration: configuration, transport: transport, stored: kept, machine: machine)
                    if let bundle {
                        await session.resumedOnline(bundle, tag: kept.bundleTag)
                    } else if !kept.queue.isEmpty && configuration.usesBundle {
                        // Taps kept from before the kill are replayed on the bundle, so they show again at once.
                        await session.loadBundleBeforeSending()
                    }
                    await session.afterStart()
                    return session
                }
                fallthrough
            case .unknown:
                // No working server: start from what the store kept, offline.
                if let session = await restoredOffline(kept, configuration: configuration, transport: transport) { return session }
                if let answer { throw Failure(answer) }
                if case .noAnswer(let detail) = reply { throw Unreachable(detail: detail) }
                throw Unreachable(detail: "no answer")
            case .gone(let status, let problem):
                gone = (kept, status, problem)
            case .refusal, .versionMismatch:
                throw answer.map(Failure.init) ?? Unreachable(detail: "no answer")
            }
        }
        let (reply, answer) = await attempt(configuration.retry, transport, FlowRequest(
            method: "POST", path: "/v1/sessions", query: "predict=true",
            headers: configuration.clientKey.map { ["X-API-Key": $0] } ?? [:], body: createBody(configuration)), success: 201)
        guard let answer else {
            if case .noAnswer(let detail) = reply { throw Unreachable(detail: detail) }
            throw Unreachable(detail: "no answer")
        }
        guard let (id, token, state, predictions) = created(answer, configuration: configuration) else {
            if case .unknown(let detail) = ClientMachine.classify(reply, success: 201) { throw Unreachable(detail: detail) }
            throw Failure(answer)
        }
        let stored = StoredSession(server: key.server, sessionId: id, token: token, userId: configuration.userId)
        try configuration.store.save(stored)
        var machine = ClientMachine(confirmed: state, predictions: predictions, retry: configuration.retry)
        var events: [ClientEvent] = []
        if let gone {
            machine.restore(gone.kept.queue)
            events = machine.restarted(state, predictions: predictions, oldSession: gone.kept.sessionId, status: gone.status, problem: gone.problem)
        }
        let session = FlowSession(configuration: configuration, transport: transport, stored: stored, machine: machine)
        await session.report(events)
        await session.afterStart()
        return session
    }

    /// Sends `request` until it has an answer that says something (a success or a problem
    /// document), or the retry policy's tries are spent: the last reply, and its answer if any.
    private static func attempt(_ policy: RetryPolicy, _ transport: any FlowTransport, _ request: FlowRequest,
                                success: Int = 200) async -> (ClientMachine.Reply, FlowAnswer?) {
        var attempt = 1
        while true {
            var answer: FlowAnswer?
            let reply: ClientMachine.Reply
            do {
                answer = try await transport.send(request)
                reply = answer!.reply
            } catch {
                reply = .noAnswer((error as? Unreachable)?.detail ?? "\(error)")
            }
            if case .unknown = ClientMachine.classify(reply, success: success), attempt < policy.attempts {
                try? await Task.sleep(for: policy.delay(before: attempt))
                attempt += 1
                continue
            }
            return (reply, answer)
        }
    }

    /// A session-creation answer: the new id and token, its state and predictions; nil when it is
    /// not a 201 with all of them.
    private static func created(_ answer: FlowAnswer, configuration: Configuration)
        -> (String, String, NavigationState, [(action: FlowAction, state: NavigationState)])? {
        guard answer.status == 201, let json = answer.json, let id = json["session"]?["id"]?.stringValue,
              let token = json["session"]?["token"]?.stringValue, let stateJSON = json["state"],
              let (state, predictions) = try? ClientMachine.read(stateJSON) else { return nil }
        return (id, token, state, configuration.usesPredictions ? predictions : [])
    }

    /// The bundle the store kept for `kept`, when it reads and is at `version`.
    private static func keptBundle(_ kept: StoredSession, at version: Int? = nil) -> (read: SessionBundle, json: JSONValue, bytes: [UInt8])? {
        guard let bytes = kept.bundle, let json = try? JSONParser.parse(bytes), let read = try? SessionBundle(json: json),
              read.state.sessionId == kept.sessionId, version == nil || read.state.version == version else { return nil }
        return (read, json, bytes)
    }

    /// Resumed online on the kept bundle: it is what the store has, and the first request the
    /// drain makes when idle is its revalidation.
    private func resumedOnline(_ bundle: (read: SessionBundle, json: JSONValue, bytes: [UInt8]), tag: String?) {
        rememberBundle(bundle.read, json: bundle.json, bytes: bundle.bytes, tag: tag)
        persistedBundleVersion = bundle.read.state.version
        revalidateBundle = true
    }

    /// A session made from the store alone: the confirmed state, the bundle (its engine), the
    /// queued taps replayed on it; offline, probing `/healthz`. Nil when the store kept no state
    /// (written by an older version) or what it kept does not read.
    private static func restoredOffline(_ kept: StoredSession, configuration: Configuration, transport: any FlowTransport) async -> FlowSession? {
        guard let document = kept.confirmed, let confirmed = try? NavigationState(json: document),
              confirmed.sessionId == kept.sessionId else { return nil }
        let bundle = configuration.usesBundle ? keptBundle(kept) : nil
        let machine = ClientMachine.restoredOffline(confirmed: confirmed, bundle: bundle?.read.state, queue: kept.queue,
                                                    retry: configuration.retry)
        let session = FlowSession(configuration: configuration, transport: transport, stored: kept, machine: machine)
        await session.resumedOffline(bundle, tag: kept.bundleTag)
        return session
    }

    private func resumedOffline(_ bundle: (read: SessionBundle, json: JSONValue, bytes: [UInt8])?, tag: String?) {
        persistedConfirmedVersion = machine.confirmed.version
        if let bundle {
            rememberBundle(bundle.read, json: bundle.json, bytes: bundle.bytes, tag: tag)
            persistedBundleVersion = bundle.read.state.version
        }
        emit([.offline])
        persist()
        startProbe()
    }

    private func report(_ events: [ClientEvent]) {
        emit(events)
    }

    private func loadBundleBeforeSending() async {
        bundleTriedAt = machine.confirmed.version
        await refreshBundle()
    }

    private func afterStart() {
        persist()
        publish()
        drain()
    }

    private static func createBody(_ configuration: Configuration) -> [UInt8] {
        var members: [JSONObject.Member] = [JSONObject.Member(key: "userId", value: .string(configuration.userId))]
        if let hash = configuration.userHash { members.append(JSONObject.Member(key: "userHash", value: .string(hash))) }
        if !configuration.attributes.isEmpty { members.append(JSONObject.Member(key: "attributes", value: .object(configuration.attributes))) }
        if !configuration.traits.isEmpty {
            members.append(JSONObject.Member(key: "traits", value: .object(JSONObject(configuration.traits.sorted { $0.key < $1.key }
                .map { JSONObject.Member(key: $0.key, value: .string($0.value)) }))))
        }
        if let client = configuration.client {
            members.append(JSONObject.Member(key: "client", value: [
                "platform": .string(client.platform), "appVersion": .string(client.appVersion),
                "features": .array(client.features.map(JSONValue.string)),
            ]))
        }
        var writer = JSONWriter()
        writer.writeValue(.object(JSONObject(uniqueMembers: members)))
        return writer.takeBytes()
    }

    // MARK: what the app reads

    /// What to show now: the confirmed state with the taps not yet confirmed applied.
    public var state: NavigationState { machine.shown }
    /// The last state the server answered.
    public var confirmedState: NavigationState { machine.confirmed }
    /// The session's id (`s_…`); a new one after the session was deleted or expired in use (see
    /// ``lastRestart``).
    public nonisolated var sessionId: String { currentId.value }
    private nonisolated let currentId: SessionIdBox
    /// The session's token, as kept in the store (support asks for it to look a session up).
    public var token: String { stored.token }
    /// Taps shown and not yet confirmed.
    public var pendingCount: Int { machine.queue.count }
    /// The taps not yet confirmed, oldest first, with their keys.
    public var pending: [QueuedAction] { machine.queue }
    /// True while the server cannot be reached (or ``setOffline(_:)`` said so).
    public var isOffline: Bool { machine.offline }
    /// True when taps run on the local engine (the session's bundle is loaded).
    public var hasLocalEngine: Bool { machine.engine != nil }
    /// The session's flag values and experiment variants.
    public var flags: SessionFlags { SessionFlags(machine.shown) }

    /// The actions the screen on top can post now, from the local engine (with their params), or
    /// else from the last answer's predictions (those that need no params), which are for the
    /// confirmed state only: none while a tap shown ahead of them waits for its answer.
    public var availableActions: [AvailableAction] {
        if let engine = machine.engine {
            return FlowEngine.availableActions(in: engine.tree, catalog: engine.catalog, context: engine.context)
        }
        guard machine.shown == machine.confirmed else { return [] }
        var seen = Set<String>()
        return machine.predictions.compactMap { prediction in
            guard seen.insert(prediction.action.type).inserted else { return nil }
            return AvailableAction(type: prediction.action.type, handledBy: prediction.state.handledBy ?? "", interactive: prediction.action.interactive)
        }
    }

    /// A stream of what happens: confirmations, corrections, other devices' versions, offline and
    /// back online, restarts. Each call makes a new stream; it ends when the session is closed.
    public func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream<ClientEvent>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    /// Every state the app should show, in order: the one shown now first, then each change (a
    /// tap shown at once, a correction, another device's version, a new session after a
    /// restart). A renderer follows it and draws `NavigationPlan(from: previous, to: next)`.
    /// Each call makes a new stream; it ends when the session is closed.
    ///
    /// ```swift
    /// var shown: NavigationState?
    /// for await state in await session.states() {
    ///     if let shown { renderer.apply(NavigationPlan(from: shown, to: state)) }
    ///     shown = state
    /// }
    /// ```
    public func states() -> AsyncStream<NavigationState> {
        let (stream, continuation) = AsyncStream<NavigationState>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        continuation.yield(published)
        stateSubscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribeStates(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }
    private func unsubscribeStates(_ id: UUID) { stateSubscribers[id] = nil }

    private func emit(_ events: [ClientEvent]) {
        for event in events {
            switch event {
            case .corrected(let correction):
                // A tap that waited and was not taken: its caller is told why.
                let status = correction.problem?["status"]?.integerValue ?? 409
                for tap in correction.taps where waiters[tap.key] != nil {
                    refusals[tap.key] = ActionRefused(action: tap.action, status: status, problem: correction.problem)
                }
            case .restarted(let restart):
                lastRestart = restart
                for tap in restart.dropped where waiters[tap.key] != nil {
                    refusals[tap.key] = ActionRefused(action: tap.action, status: restart.status, problem: restart.problem)
                }
            default:
                break
            }
            history.append(event)
            for subscriber in subscribers.values { subscriber.yield(event) }
        }
        if history.count > 1000 { history.removeFirst(history.count - 1000) }
        publish()
    }

    /// Sends the state shown to the ``states()`` streams when it changed.
    private func publish() {
        let shown = machine.shown
        guard shown != published else { return }
        published = shown
        for subscriber in stateSubscribers.values { subscriber.yield(shown) }
    }

    // MARK: acting

    /// Applies `action` and returns what to show, at once when the local engine (or a prediction)
    /// can tell; then posts it with `If-Match` and an idempotency key in the background. The
    /// answer confirms it, or corrects it (a `.corrected` event). With neither engine nor
    /// prediction, it waits for the answer.
    ///
    /// ```swift
    /// let next = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
    /// ```
    ///
    /// - Throws: the engine's ``FlowError`` when the local engine refuses it (nothing is posted),
    ///   ``ActionRefused`` when a tap that waited was not taken by the server, or ``Unreachable``
    ///   when a tap that waited cannot be answered because the client is offline (it stays
    ///   queued and is sent when the server is back).
    public func send(_ action: FlowAction) async throws -> NavigationState {
        let key = UUID().uuidString.lowercased()
        let result = try machine.tap(action, key: key, at: Self.timestamp())
        persist()
        publish()
        switch result {
        case .shown(let state):
            drain()
            return state
        case .waiting(let key):
            return try await withCheckedThrowingContinuation { continuation in
                waiters[key] = continuation
                drain()
                resolveWaiters()
            }
        }
    }

    /// Now, as RFC 3339 with milliseconds in UTC (a batch item's `at`).
    private static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }

    /// Simulates losing the network (true) or getting it back (false): while offline, taps are
    /// applied locally and queued; when back, the queue goes in batches.
    public func setOffline(_ offline: Bool) {
        forcedOffline = offline
        if offline {
            emit(machine.unreachable())
            stopStream()
            probe?.cancel()
            probe = nil
        } else {
            emit(machine.reachable())
            if following { connectEvents() }
            drain()
        }
    }

    /// Returns when nothing is queued or on the wire (after coming back online if need be).
    public func settled() async {
        if isSettled { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    private var isSettled: Bool { machine.queue.isEmpty && !draining && machine.gone == nil }

    private func notifySettled() {
        guard isSettled else { return }
        let waiting = settleWaiters
        settleWaiters = []
        for waiter in waiting { waiter.resume() }
    }

    /// Stops following events and probing; the session stays on the server (and in the store,
    /// with the taps not yet confirmed: the next `start` sends them). A tap still waiting for its
    /// answer throws ``Unreachable``, and ``settled()`` returns.
    public func close() {
        following = false
        stopStream()
        probe?.cancel()
        probe = nil
        for (key, waiter) in waiters {
            waiters[key] = nil
            waiter.resume(throwing: Unreachable(detail: "the session was closed; the tap stays queued in the store"))
        }
        let settling = settleWaiters
        settleWaiters = []
        for waiter in settling { waiter.resume() }
        for subscriber in subscribers.values { subscriber.finish() }
        subscribers = [:]
        for subscriber in stateSubscribers.values { subscriber.finish() }
        stateSubscribers = [:]
    }

    private var authorization: [String: String] { ["Authorization": "Bearer \(stored.token)"] }

    /// Writes the store when what it keeps changed: the queue (on every tap), the confirmed
    /// state (when its version moves), the bundle (when the engine at the confirmed version
    /// moves: the fetched bundle as it came, or the engine's state written with its definitions).
    private func persist() {
        var changed = false
        let queue = machine.queue
        if queue.map(\.key) != stored.queue.map(\.key) {
            stored.queue = queue.map(\.kept)
            changed = true
        }
        if persistedConfirmedVersion != machine.confirmed.version {
            persistedConfirmedVersion = machine.confirmed.version
            stored.confirmed = machine.confirmed.document
            changed = true
        }
        if configuration.usesBundle, let engine = machine.confirmedEngine, engine.version == machine.confirmed.version,
           persistedBundleVersion != engine.version, let fetched = fetchedBundle {
            persistedBundleVersion = engine.version
            if fetched.version == engine.version {
                stored.bundle = fetched.bytes
                stored.bundleTag = fetched.tag
            } else {
                var writer = JSONWriter(capacity: fetched.bytes.count + 1024)
                SessionBundle.write(engine, flowVersions: fetched.flowVersions, definitions: fetched.definitions, into: &writer)
                stored.bundle = writer.takeBytes()
                stored.bundleTag = nil
            }
            changed = true
        }
        if changed { try? configuration.store.save(stored) }
    }

    /// The bundle the server sent (or the store kept), to write the engine's later versions with.
    private struct FetchedBundle {
        var version: Int
        var bytes: [UInt8]
        var tag: String?
        var flowVersions: [String: Int]
        var definitions: [(name: String, json: [UInt8])]
    }

    private var fetchedBundle: FetchedBundle?
    /// Set when the engine came from the store: its bundle is revalidated once the drain is idle.
    private var revalidateBundle = false
    private var persistedConfirmedVersion: Int?
    private var persistedBundleVersion: Int?

    private func rememberBundle(_ bundle: SessionBundle, json: JSONValue, bytes: [UInt8], tag: String?) {
        guard let members = json["definitions"]?.objectValue else { return }
        var definitions: [(name: String, json: [UInt8])] = []
        for member in members {
            var writer = JSONWriter(capacity: 1024)
            writer.writeValue(member.value)
            definitions.append((member.key, writer.takeBytes()))
        }
        fetchedBundle = FetchedBundle(version: bundle.state.version, bytes: bytes, tag: tag, flowVersions: bundle.flowVersions,
                                      definitions: definitions)
        bundleTag = tag
        bundleCache = bundle.state
    }

    // MARK: the turn

    private func drain() {
        guard !draining else { return }
        draining = true
        Task { await self.drainLoop() }
    }

    /// Performs what the machine asks, one request at a time, and hands each reply back to it.
    private func drainLoop() async {
        while true {
            if let command = machine.nextCommand(batches: batchSupported) {
                switch command {
                case .pause(let delay):
                    try? await Task.sleep(for: delay)
                case .post(let item):
                    emit(machine.handle(await perform(postRequest(item)), to: command))
                case .batch(let items):
                    let reply = await perform(batchRequest(items))
                    if case .answer(405, _) = reply {
                        // A server without the batch route: the same taps go one by one.
                        batchSupported = false
                        machine.unsent()
                    } else {
                        emit(machine.handle(reply, to: command))
                    }
                case .reload:
                    emit(machine.handle(await perform(FlowRequest(method: "GET", path: "/v1/sessions/\(stored.sessionId)",
                                                                  query: "predict=true", headers: authorization)), to: command))
                case .create:
                    await recreate()
                }
                if machine.offline && !forcedOffline { startProbe() }
                persist()
                publish()
                resolveWaiters()
                continue
            }
            if configuration.usesBundle, !machine.offline,
               revalidateBundle || (machine.needsBundle && machine.queue.allSatisfy({ $0.expected == nil }) && bundleTriedAt != machine.confirmed.version) {
                revalidateBundle = false
                bundleTriedAt = machine.confirmed.version
                await refreshBundle()
                persist()
                publish()
                resolveWaiters()
                continue
            }
            break
        }
        draining = false
        resolveWaiters()
        notifySettled()
    }

    /// Sends one request: the answer as a reply for the machine, or no answer.
    private func perform(_ request: FlowRequest) async -> ClientMachine.Reply {
        do {
            return try await transport.send(request).reply
        } catch {
            return .noAnswer((error as? Unreachable)?.detail ?? "\(error)")
        }
    }

    private func postRequest(_ item: QueuedAction) -> FlowRequest {
        var headers = authorization
        headers["If-Match"] = "\"\(item.version)\""
        headers["Idempotency-Key"] = item.key
        var body = JSONWriter()
        body.writeValue(item.action.json)
        let query = machine.engine == nil && configuration.usesPredictions ? "predict=true" : nil
        return FlowRequest(method: "POST", path: "/v1/sessions/\(stored.sessionId)/actions", query: query, headers: headers, body: body.takeBytes())
    }

    private func batchRequest(_ items: [QueuedAction]) -> FlowRequest {
        var writer = JSONWriter(capacity: 256 * items.count)
        writer.beginObject()
        writer.writeKey("actions")
        writer.beginArray()
        for item in items {
            item.writeBatchItem(into: &writer)
        }
        writer.endArray()
        writer.endObject()
        return FlowRequest(method: "POST", path: "/v1/sessions/\(stored.sessionId)/actions/batch", headers: authorization, body: writer.takeBytes())
    }

    /// Resolves the callers of taps that waited: with the state they show once they show one,
    /// with the server's reason when they were not taken, and with ``Unreachable`` while offline
    /// (the tap stays queued).
    private func resolveWaiters() {
        for (key, waiter) in waiters {
            if let item = machine.queue.first(where: { $0.key == key }) {
                if let expected = item.expected {
                    waiters[key] = nil
                    waiter.resume(returning: expected)
                } else if machine.offline {
                    waiters[key] = nil
                    waiter.resume(throwing: Unreachable(detail: "offline, and no bundle or prediction to show the tap with; it stays queued"))
                }
                continue
            }
            waiters[key] = nil
            if let refusal = refusals.removeValue(forKey: key) {
                waiter.resume(throwing: refusal)
            } else {
                waiter.resume(returning: machine.shown)
            }
        }
    }

    /// The session is gone (the machine read a 401 or 404 problem for it): a new one is created
    /// for the same user and the machine restarts on it, reporting the taps it drops; a creation
    /// that gets no usable answer is retried like any unknown outcome.
    private func recreate() async {
        let old = stored.sessionId
        let request = FlowRequest(method: "POST", path: "/v1/sessions", query: "predict=true",
                                  headers: configuration.clientKey.map { ["X-API-Key": $0] } ?? [:], body: Self.createBody(configuration))
        var answer: FlowAnswer?
        do { answer = try await transport.send(request) } catch { emit(machine.createFailed("no answer: \(error)")); return }
        guard let answer, let (id, token, state, predictions) = Self.created(answer, configuration: configuration) else {
            emit(machine.createFailed("session creation answered \(answer?.status ?? 0)"))
            return
        }
        stopStream()
        stored = StoredSession(server: configuration.key.server, sessionId: id, token: token, userId: configuration.userId)
        currentId.value = id
        fetchedBundle = nil
        bundleTag = nil
        bundleCache = nil
        bundleTriedAt = nil
        persistedConfirmedVersion = nil
        persistedBundleVersion = nil
        lastEventId = nil
        batchSupported = true
        let events = machine.restarted(state, predictions: predictions, oldSession: old)
        try? configuration.store.save(stored)
        persist()
        emit(events)
        if following { connectEvents() }
    }

    private func refreshBundle() async {
        var headers = authorization
        if let bundleTag { headers["If-None-Match"] = bundleTag }
        guard let answer = try? await transport.send(FlowRequest(method: "GET", path: "/v1/sessions/\(stored.sessionId)/bundle", headers: headers))
        else { return }
        if answer.status == 304, let bundleCache {
            machine.loaded(bundleCache)
            return
        }
        guard answer.status == 200, let json = answer.json, let bundle = try? SessionBundle(json: json) else { return }
        rememberBundle(bundle, json: json, bytes: answer.body, tag: answer.etag)
        bundleTag = answer.etag
        bundleCache = bundle.state
        machine.loaded(bundle.state)
    }

    /// Probes `/healthz` with backoff until the server answers, then sends what is queued.
    private func startProbe() {
        guard probe == nil, !forcedOffline else { return }
        let policy = configuration.retry
        let transport = transport
        probe = Task { [weak self] in
            var attempt = 1
            while !Task.isCancelled {
                try? await Task.sleep(for: policy.delay(before: attempt))
                attempt += 1
                if let answer = try? await transport.send(FlowRequest(method: "GET", path: "/healthz")), answer.status == 200 {
                    await self?.backOnline()
                    return
                }
            }
        }
    }

    private func backOnline() {
        probe = nil
        guard !forcedOffline else { return }
        emit(machine.reachable())
        bundleTriedAt = nil
        drain()
    }

    // MARK: following

    /// Follows the session's event stream (`GET …/events`, `Last-Event-ID` on reconnection, with
    /// backoff): versions other devices make are adopted and reported as `.remote`.
    public func follow() {
        guard !following else { return }
        following = true
        connectEvents()
    }

    /// Stops following the event stream.
    public func stopFollowing() {
        following = false
        stopStream()
    }

    private func stopStream() {
        streamGeneration += 1
        stream?.cancel()
        stream = nil
    }

    private var streamFailures = 0

    /// `…/v1/sessions/{id}/events` on the configured server.
    private var eventsURL: URL {
        var text = configuration.server.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/v1/sessions/\(stored.sessionId)/events") ?? configuration.server
    }

    private func connectEvents() {
        guard following, !forcedOffline else { return }
        stopStream()
        let generation = streamGeneration
        var request = URLRequest(url: eventsURL, timeoutInterval: 60)
        request.setValue("Bearer \(stored.token)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventId { request.setValue(lastEventId, forHTTPHeaderField: "Last-Event-ID") }
        // Events go through one stream so they are handled in the order they came.
        let (events, continuation) = AsyncStream<ServerSentEvent?>.makeStream()
        stream = EventStreamConnection(request: request, onEvent: { continuation.yield($0) }, onEnd: { _ in
            continuation.yield(nil)
            continuation.finish()
        })
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                if let event {
                    await self.received(event, generation: generation)
                } else {
                    await self.streamEnded(generation: generation)
                }
            }
        }
    }

    private func received(_ event: ServerSentEvent, generation: Int) {
        guard generation == streamGeneration else { return }
        streamFailures = 0
        if let id = event.id { lastEventId = id }
        switch event.event {
        case "state":
            guard let json = try? JSONParser.parse(event.data), let state = try? NavigationState(json: json) else { return }
            emit(machine.received(state))
            persist()
            if machine.needsBundle { drain() }
        case "deleted":
            following = false
        default:
            break
        }
    }

    private func streamEnded(generation: Int) async {
        guard generation == streamGeneration, following else { return }
        streamFailures += 1
        let delay = configuration.retry.delay(before: streamFailures)
        try? await Task.sleep(for: delay)
        guard generation == streamGeneration, following else { return }
        connectEvents()
    }
}

/// The session's id, readable from any thread, changed when a gone session is replaced.
private final class SessionIdBox: @unchecked Sendable {
    private let lock = NSLock()
    private var id: String
    init(_ id: String) { self.id = id }
    var value: String {
        get { lock.withLock { id } }
        set { lock.withLock { id = newValue } }
    }
}

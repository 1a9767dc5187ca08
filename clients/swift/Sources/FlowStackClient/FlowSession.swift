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

        public init(server: URL, clientKey: String? = nil, userId: String, userHash: String? = nil, attributes: JSONObject = [:],
                    traits: [String: String] = [:], client: ClientInfo? = nil, store: any SessionStore = MemorySessionStore(),
                    retry: RetryPolicy = RetryPolicy(), timeout: TimeInterval = 10, simulatedLatency: Duration = .zero,
                    usesBundle: Bool = true, usesPredictions: Bool = true) {
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
        }
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

    /// Why a session could not be started or resumed: the status and the server's problem.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: Int
        public var problem: JSONValue?
        public var description: String {
            "FlowStack answered \(status): \(problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue ?? "no detail")"
        }
    }

    private let configuration: Configuration
    private let transport: HTTPTransport
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
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    private var following = false
    private var stream: EventStreamConnection?
    private var streamGeneration = 0
    private var lastEventId: String?
    /// Every event reported so far, oldest first (the last 1,000).
    public private(set) var history: [ClientEvent] = []
    /// Set when the session had expired or was deleted (kept from the last launch, or while in
    /// use: a post answered 401 or 404 for the session itself) and a new one was started.
    public private(set) var restartReason: String?

    private init(configuration: Configuration, transport: HTTPTransport, stored: StoredSession, machine: ClientMachine) {
        self.configuration = configuration
        self.transport = transport
        self.stored = stored
        self.machine = machine
        self.currentId = SessionIdBox(stored.sessionId)
    }

    // MARK: starting

    /// Resumes the session kept in `configuration.store` (same server and user), or starts a new
    /// one. A kept session the server no longer knows (401, 404) is replaced by a new one, and
    /// ``restartReason`` (and a `.restarted` event) says so. Taps kept in the store are sent.
    ///
    /// When the server cannot be reached (connection refused, timeout, 503) and the store kept
    /// the session's confirmed state, the session starts from the store alone, offline: the local
    /// engine from the kept bundle, the kept taps replayed on it so the app shows what the user
    /// last saw, new taps shown at once and queued, a probe of `/healthz` with backoff, and the
    /// queue sent as one batch when the server is back. A predictions-only client
    /// (`usesBundle: false`, or no bundle kept) shows the confirmed state; its kept taps stay
    /// queued (not shown) and are sent when back, and a new tap cannot be shown until then
    /// (`send` throws; the tap stays queued).
    ///
    /// - Throws: ``Failure`` when the server refuses to create the session (a 422
    ///   `unsupported-client`: show "update the app"), or the transport's error when it cannot be
    ///   reached and there is no kept session to start from (none, or kept by an older version).
    public static func start(_ configuration: Configuration) async throws -> FlowSession {
        let transport = HTTPTransport(server: configuration.server, timeout: configuration.timeout, latency: configuration.simulatedLatency)
        var reason: String?
        if let kept = try configuration.store.load(), kept.server == configuration.server.absoluteString, kept.userId == configuration.userId {
            let answer: HTTPAnswer
            do {
                answer = try await withRetries(configuration.retry) {
                    try await transport.send("GET", "/v1/sessions/\(kept.sessionId)", query: "predict=true",
                                             headers: ["Authorization": "Bearer \(kept.token)"])
                }
            } catch let error as Unreachable {
                // Killed while offline and still offline: start from what the store kept.
                guard let session = await restoredOffline(kept, configuration: configuration, transport: transport) else { throw error }
                return session
            }
            if answer.status == 200, let json = answer.json {
                let (state, predictions) = try read(json, keepingPredictions: configuration.usesPredictions)
                var machine = ClientMachine(confirmed: state, predictions: predictions)
                machine.restore(kept.queue)
                let session = FlowSession(configuration: configuration, transport: transport, stored: kept, machine: machine)
                // Taps kept from before the kill are replayed on the bundle, so they show again at once.
                if !kept.queue.isEmpty && configuration.usesBundle { await session.loadBundleBeforeSending() }
                await session.afterStart()
                return session
            }
            guard answer.status == 401 || answer.status == 404 else { throw Failure(status: answer.status, problem: answer.json) }
            reason = "session \(kept.sessionId) is gone (\(answer.status))"
                + (kept.queue.isEmpty ? "" : "; \(kept.queue.count) queued tap(s) were dropped")
                + "; started a new one"
            try configuration.store.clear()
        }
        let answer = try await withRetries(configuration.retry) {
            try await transport.send("POST", "/v1/sessions", query: "predict=true", headers: configuration.clientKey.map { ["X-API-Key": $0] } ?? [:],
                                     body: createBody(configuration))
        }
        guard answer.status == 201, let json = answer.json, let id = json["session"]?["id"]?.stringValue,
              let token = json["session"]?["token"]?.stringValue, let stateJSON = json["state"] else {
            throw Failure(status: answer.status, problem: answer.json)
        }
        let (state, predictions) = try read(stateJSON, keepingPredictions: configuration.usesPredictions)
        let stored = StoredSession(server: configuration.server.absoluteString, sessionId: id, token: token, userId: configuration.userId)
        try configuration.store.save(stored)
        let session = FlowSession(configuration: configuration, transport: transport, stored: stored,
                                  machine: ClientMachine(confirmed: state, predictions: predictions))
        await session.restarted(reason)
        await session.afterStart()
        return session
    }

    /// A session made from the store alone: the confirmed state, the bundle (its engine), the
    /// queued taps replayed on it; offline, probing `/healthz`. Nil when the store kept no state
    /// (written by an older version) or what it kept does not read.
    private static func restoredOffline(_ kept: StoredSession, configuration: Configuration, transport: HTTPTransport) async -> FlowSession? {
        guard let document = kept.confirmed, let confirmed = try? NavigationState(json: document),
              confirmed.sessionId == kept.sessionId else { return nil }
        var bundle: (read: SessionBundle, json: JSONValue, bytes: [UInt8])?
        if configuration.usesBundle, let bytes = kept.bundle, let json = try? JSONParser.parse(bytes),
           let read = try? SessionBundle(json: json), read.state.sessionId == kept.sessionId {
            bundle = (read, json, bytes)
        }
        let machine = ClientMachine.restoredOffline(confirmed: confirmed, bundle: bundle?.read.state, queue: kept.queue)
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
        persist()  // the queue as replayed (taps that no longer apply are dropped)
        startProbe()
    }

    private func restarted(_ reason: String?) {
        guard let reason else { return }
        restartReason = reason
        emit([.restarted(reason: reason)])
    }

    private func loadBundleBeforeSending() async {
        bundleTriedAt = machine.confirmed.version
        await refreshBundle()
    }

    private func afterStart() {
        persist()
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

    /// A state document with its predictions.
    static func read(_ json: JSONValue, keepingPredictions keep: Bool = true) throws -> (NavigationState, [(action: FlowAction, state: NavigationState)]) {
        let state = try NavigationState(json: json)
        var predictions: [(action: FlowAction, state: NavigationState)] = []
        for item in keep ? json["predictions"]?.arrayValue ?? [] : [] {
            guard let action = item["action"], let next = item["state"] else { continue }
            predictions.append((try FlowAction(json: action), try NavigationState(json: next)))
        }
        return (state, predictions)
    }

    private static func withRetries(_ policy: RetryPolicy, _ request: () async throws -> HTTPAnswer) async throws -> HTTPAnswer {
        var attempt = 1
        while true {
            do {
                return try await request()
            } catch let error as Unreachable {
                guard attempt < policy.attempts else { throw error }
                try await Task.sleep(for: policy.delay(before: attempt))
                attempt += 1
            }
        }
    }

    // MARK: what the app reads

    /// What to show now: the confirmed state with the taps not yet confirmed applied.
    public var state: NavigationState { machine.shown }
    /// The last state the server answered.
    public var confirmedState: NavigationState { machine.confirmed }
    /// The session's id (`s_…`); a new one after the session was deleted or expired in use (see
    /// ``restartReason``).
    public nonisolated var sessionId: String { currentId.value }
    private nonisolated let currentId: SessionIdBox
    /// Taps shown and not yet confirmed.
    public var pendingCount: Int { machine.queue.count }
    /// True while the server cannot be reached (or ``setOffline(_:)`` said so).
    public var isOffline: Bool { machine.offline }
    /// True when taps run on the local engine (the session's bundle is loaded).
    public var hasLocalEngine: Bool { machine.engine != nil }
    /// The session's flag values and experiment variants.
    public var flags: SessionFlags { SessionFlags(machine.shown) }

    /// The actions the screen on top can post now, from the local engine (with their params), or
    /// else from the last answer's predictions (those that need no params).
    public var availableActions: [AvailableAction] {
        if let engine = machine.engine {
            return FlowEngine.availableActions(in: engine.tree, catalog: engine.catalog, context: engine.context)
        }
        var seen = Set<String>()
        return machine.predictions.compactMap { prediction in
            guard seen.insert(prediction.action.type).inserted else { return nil }
            return AvailableAction(type: prediction.action.type, handledBy: prediction.state.handledBy ?? "", interactive: prediction.action.interactive)
        }
    }

    /// A stream of what happens: confirmations, corrections, other devices' versions, offline and
    /// back online. Each call makes a new stream; it ends when the session is closed.
    public func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream<ClientEvent>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    private func emit(_ events: [ClientEvent]) {
        for event in events {
            history.append(event)
            for subscriber in subscribers.values { subscriber.yield(event) }
        }
        if history.count > 1000 { history.removeFirst(history.count - 1000) }
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
    ///   or ``ActionRefused`` when a tap that waited was refused by the server.
    public func send(_ action: FlowAction) async throws -> NavigationState {
        let key = UUID().uuidString.lowercased()
        let result = try machine.tap(action, key: key, at: Self.timestamp())
        persist()
        switch result {
        case .shown(let state):
            drain()
            return state
        case .waiting(let key):
            return try await withCheckedThrowingContinuation { continuation in
                waiters[key] = continuation
                drain()
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
    /// applied locally and queued; when back, the queue goes as one batch.
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

    private var isSettled: Bool { machine.queue.isEmpty && !draining }

    private func notifySettled() {
        guard isSettled else { return }
        let waiting = settleWaiters
        settleWaiters = []
        for waiter in waiting { waiter.resume() }
    }

    /// Stops following events and probing; the session stays on the server (and in the store).
    public func close() {
        following = false
        stopStream()
        probe?.cancel()
        probe = nil
        for subscriber in subscribers.values { subscriber.finish() }
        subscribers = [:]
    }

    private var authorization: [String: String] { ["Authorization": "Bearer \(stored.token)"] }

    /// Writes the store when what it keeps changed: the queue (on every tap), the confirmed
    /// state (when its version moves), the bundle (when the engine at the confirmed version
    /// moves: the fetched bundle as it came, or the engine's state written with its definitions).
    private func persist() {
        var changed = false
        let queue = machine.queue
        if queue.map(\.key) != stored.queue.map(\.key) {
            stored.queue = queue.map { QueuedAction(key: $0.key, version: $0.version, action: $0.action, at: $0.at) }
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

    private func drainLoop() async {
        while true {
            if let command = machine.nextCommand(batches: batchSupported) {
                switch command {
                case .post(let item): await post(item)
                case .batch(let items): await postBatch(items)
                case .reload: await reload()
                }
                persist()
                resolveWaiters()
                continue
            }
            if configuration.usesBundle, machine.needsBundle, !machine.offline, bundleTriedAt != machine.confirmed.version {
                bundleTriedAt = machine.confirmed.version
                await refreshBundle()
                persist()
                continue
            }
            break
        }
        draining = false
        resolveWaiters()
        notifySettled()
    }

    private func resolveWaiters() {
        let queued = Set(machine.queue.map(\.key))
        for (key, waiter) in waiters where !queued.contains(key) {
            waiters[key] = nil
            if let refusal = refusals.removeValue(forKey: key) {
                waiter.resume(throwing: refusal)
            } else {
                waiter.resume(returning: machine.shown)
            }
        }
        if machine.offline {
            for (key, waiter) in waiters {
                waiters[key] = nil
                waiter.resume(throwing: Unreachable(detail: "offline, and no bundle or prediction to show the tap with; it stays queued"))
            }
        }
    }

    private func post(_ item: QueuedAction) async {
        var headers = authorization
        headers["If-Match"] = "\"\(item.version)\""
        headers["Idempotency-Key"] = item.key
        var body = JSONWriter()
        body.writeValue(item.action.json)
        let bytes = body.takeBytes()
        let query = machine.engine == nil && configuration.usesPredictions ? "predict=true" : nil
        let answer: HTTPAnswer
        do {
            answer = try await sendWithRetries("POST", "/v1/sessions/\(stored.sessionId)/actions", query: query, headers: headers, body: bytes)
        } catch {
            return
        }
        if answer.status == 200, let json = answer.json, let (state, predictions) = try? Self.read(json, keepingPredictions: configuration.usesPredictions) {
            emit(machine.answered(key: item.key, state: state, predictions: predictions))
        } else if (answer.status == 401 || answer.status == 404), await sessionGone(answer) {
            return
        } else {
            if answer.status != 412 { refusals[item.key] = ActionRefused(action: item.action, status: answer.status, problem: answer.json) }
            emit(machine.refused(key: item.key, status: answer.status, problem: answer.json))
        }
    }

    private func postBatch(_ items: [QueuedAction]) async {
        var writer = JSONWriter(capacity: 256 * items.count)
        writer.beginObject()
        writer.writeKey("actions")
        writer.beginArray()
        for item in items {
            item.writeBatchItem(into: &writer)
        }
        writer.endArray()
        writer.endObject()
        let answer: HTTPAnswer
        do {
            answer = try await sendWithRetries("POST", "/v1/sessions/\(stored.sessionId)/actions/batch", headers: authorization, body: writer.takeBytes())
        } catch {
            return
        }
        if answer.status == 401, await sessionGone(answer) { return }
        if answer.status == 404 || answer.status == 405 {
            // A server without the batch route: the same taps go one by one.
            batchSupported = false
            machine.unsent()
            return
        }
        guard answer.status == 200, let json = answer.json, let stateJSON = json["state"], let state = try? NavigationState(json: stateJSON) else {
            emit(machine.refused(key: items[0].key, status: answer.status == 412 ? 412 : answer.status, problem: answer.json))
            return
        }
        var done = Set<String>()
        for result in json["results"]?.arrayValue ?? [] {
            guard let key = result["key"]?.stringValue, let status = result["status"]?.stringValue else { continue }
            if status == "applied" || status == "skipped" { done.insert(key) }
        }
        // JSONValue is ExpressibleByNilLiteral: spell the Optional out, or `nil` reads as JSON null.
        let refusal = json["refused"].flatMap { $0.isNull ? JSONValue?.none : $0 }
        emit(machine.batchAnswered(done: done, refusal: refusal, state: state))
    }

    private func reload() async {
        guard let answer = try? await sendWithRetries("GET", "/v1/sessions/\(stored.sessionId)", query: "predict=true", headers: authorization) else { return }
        if answer.status == 401 || answer.status == 404, await sessionGone(answer) { return }
        guard answer.status == 200, let json = answer.json, let (state, predictions) = try? Self.read(json, keepingPredictions: configuration.usesPredictions) else { return }
        emit(machine.reloaded(state, predictions: predictions))
    }

    /// The session itself is gone (a 401 or 404 on its own routes: deleted or expired while in
    /// use, not a refusal of a tap): a new session is started for the same user, the taps queued
    /// on the old one are dropped (a tap that waited throws ``ActionRefused``), and
    /// ``restartReason`` and a `.restarted` event say so. False when no new session could be made
    /// (the answer is then handled as a refusal).
    private func sessionGone(_ gone: HTTPAnswer) async -> Bool {
        let old = stored.sessionId
        guard let answer = try? await sendWithRetries("POST", "/v1/sessions", query: "predict=true",
                                                      headers: configuration.clientKey.map { ["X-API-Key": $0] } ?? [:],
                                                      body: Self.createBody(configuration)),
              answer.status == 201, let json = answer.json, let id = json["session"]?["id"]?.stringValue,
              let token = json["session"]?["token"]?.stringValue, let stateJSON = json["state"],
              let (state, predictions) = try? Self.read(stateJSON, keepingPredictions: configuration.usesPredictions) else { return false }
        let dropped = machine.queue
        for item in dropped { refusals[item.key] = ActionRefused(action: item.action, status: gone.status, problem: gone.json) }
        stopStream()
        stored = StoredSession(server: configuration.server.absoluteString, sessionId: id, token: token, userId: configuration.userId)
        currentId.value = id
        machine = ClientMachine(confirmed: state, predictions: predictions)
        fetchedBundle = nil
        bundleTag = nil
        bundleCache = nil
        bundleTriedAt = nil
        persistedConfirmedVersion = nil
        persistedBundleVersion = nil
        lastEventId = nil
        batchSupported = true
        try? configuration.store.save(stored)
        persist()
        restarted("session \(old) is gone (\(gone.status))"
            + (dropped.isEmpty ? "" : "; \(dropped.count) queued tap(s) were dropped") + "; started a new one")
        if following { connectEvents() }
        return true
    }

    private func refreshBundle() async {
        var headers = authorization
        if let bundleTag { headers["If-None-Match"] = bundleTag }
        guard let answer = try? await sendWithRetries("GET", "/v1/sessions/\(stored.sessionId)/bundle", headers: headers) else { return }
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

    /// Sends with the retry policy; when every try fails the client goes offline and probes
    /// the server until it answers, then sends what is queued.
    private func sendWithRetries(_ method: String, _ path: String, query: String? = nil, headers: [String: String],
                                 body: [UInt8]? = nil) async throws -> HTTPAnswer {
        var attempt = 1
        while true {
            do {
                return try await transport.send(method, path, query: query, headers: headers, body: body)
            } catch {
                if attempt >= configuration.retry.attempts || forcedOffline {
                    emit(machine.unreachable())
                    startProbe()
                    throw error
                }
                try? await Task.sleep(for: configuration.retry.delay(before: attempt))
                attempt += 1
            }
        }
    }

    private func startProbe() {
        guard probe == nil, !forcedOffline else { return }
        let policy = configuration.retry
        let transport = transport
        probe = Task { [weak self] in
            var attempt = 1
            while !Task.isCancelled {
                try? await Task.sleep(for: policy.delay(before: attempt))
                attempt += 1
                if let answer = try? await transport.send("GET", "/healthz"), answer.status == 200 {
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

    private func connectEvents() {
        guard following, !forcedOffline else { return }
        stopStream()
        let generation = streamGeneration
        var request = URLRequest(url: transport.url("/v1/sessions/\(stored.sessionId)/events"), timeoutInterval: 60)
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

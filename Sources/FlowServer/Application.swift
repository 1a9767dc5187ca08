// The FlowStack application: its routes, and what wraps every request (ids, metrics, logs).
import FlowStore
import HTTPServer
import Logging

/// The request handler of a FlowStack server, independent of any socket.
///
/// ```swift
/// let app = try Application(store: store, adminToken: "secret")
/// let response = app.handle(Request(method: "GET", path: "/healthz"))
/// ```
/// `HTTPServer(configuration:handler: app.handle)` serves it on libmicrohttpd.
public final class Application: Sendable {
    public let store: any FlowStore
    public let metrics = ServerMetrics()
    let sessions: SessionService
    let events: SessionEvents
    let tickets: StreamTickets
    let clientKeys: ClientKeys
    let access: AccessPolicy
    let registry: DefinitionRegistry
    let admin: AdminAuthorization
    /// Releases rolling out to a share of new sessions, and their guardrail monitor.
    let rollouts: RolloutService
    /// Removes old log entries and expired sessions in the background.
    let retention: RetentionService
    let bodyLimits: BodyLimits
    let logger: Logger
    private let router: Router
    /// The admin routes, fixed once all are registered (what a failed credential check counts against).
    private let adminRouteSet: AdminRouteSet
    /// Whether each route of the router, by its index, is an admin route: the set, looked up
    /// once per route instead of hashing a pattern and a method per counted request.
    private let adminByRoute: [Bool]
    /// Nil when no origin is allowed (see CORSPolicy).
    private let cors: CORSPolicy?
    /// Polls the definitions of a shared database (nil on SQLite, where this process is the writer).
    private let definitionSync: DefinitionSync?
    /// The reads of the definitions' revision that flag evaluations share, at which their client
    /// keys are checked (`ClientKeys`): on PostgreSQL, for a node among several (which reads the
    /// definitions again when the revision moved) and for a lone one alike; nil on SQLite.
    private let flagReads: SharedReads?
    /// Sends a session's writes to the node that owns it (nil unless this node holds leases).
    private let owners: OwnerRouting?
    /// This node's session leases (nil unless `nodeAddress` was given on a shared database).
    private let leases: SessionLeases?
    /// This node's row among the nodes serving on a shared database (nil on one of its own).
    private let membership: ClusterMembership?

    /// 4 MiB: four of the largest lists a screen may hold (`ScreenList.maxListBytes`), and
    /// hundreds of times the sample app's largest session. Its state document, which repeats
    /// the top screen's params, stays a few times that.
    public static let defaultMaxSessionBytes = 4 << 20

    /// Why an application could not be made.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// - Parameters:
    ///   - adminToken: the bootstrap admin token (FLOWSTACK_ADMIN_TOKEN); nil: the one kept
    ///     hashed in the database (see `makeAdminTokenIfNone(store:)`).
    ///   - cacheCapacity: sessions kept in memory at most; older ones are read back from the database.
    ///   - singleNode: this process is the only FlowStack on a shared database (PostgreSQL): it
    ///     trusts its caches as on SQLite instead of checking them against the database. Wrong
    ///     with a second node: that node's writes would not be seen.
    ///   - nodeAddress: on a shared database, this node's `http://host:port` as the other nodes
    ///     reach it: the node then owns sessions under leases (`SessionLeases`), answers their
    ///     reads from memory, and forwards writes of sessions other nodes own. Nil: every read
    ///     checks the head version in the database.
    ///   - trustWindow: with `nodeAddress`, how long after its last look at the other nodes this
    ///     node trusts its memory (`ClusterMembership`); the nodes of a cluster share it.
    ///   - maxSessionBytes: the largest stored tree an action may leave a session with (its
    ///     screens, params and lists); an action past it is refused 422 `session-too-large`.
    /// - Throws: `SetupError` when the bundled flow definitions are invalid.
    public init(store: any FlowStore, adminToken: String?, cacheCapacity: Int = 100_000, bodyLimits: BodyLimits = BodyLimits(),
                singleNode: Bool = false, events eventOptions: EventOptions = EventOptions(), access: AccessOptions = AccessOptions(),
                cors: CORSOptions = CORSOptions(), requireReview: Bool = false, logger: Logger = Logger(label: "flowstack"),
                retention: RetentionOptions = RetentionOptions(), nodeAddress: String? = nil,
                leaseDuration: Duration = .seconds(2), trustWindow: Duration = .seconds(2),
                maxSessionBytes: Int = Application.defaultMaxSessionBytes) throws {
        self.store = store
        self.cors = CORSPolicy(cors)
        self.logger = logger
        self.bodyLimits = bodyLimits
        self.admin = AdminAuthorization(token: adminToken, store: store, logger: logger)
        let problems = BundledFlows.catalog().problems
        guard problems.isEmpty else {
            throw SetupError(description: "the bundled flows are invalid: " + problems.map(\.description).joined(separator: "; "))
        }
        let registry: DefinitionRegistry
        let shared = store.isShared && !singleNode
        let fingerprint: String?
        do {
            // The sample app and its flag seed the store once (flows as version 1); from then on
            // the store is the source of truth, so uploads survive restarts and upgrades.
            for document in BundledFlows.documents {
                try store.seedFlow(name: document.name, definition: String(decoding: document.bytes, as: UTF8.self))
            }
            for document in BundledFlags.documents {
                try store.seedDefinition(.flag, key: document.key, definition: document.text)
            }
            let loaded = try DefinitionRegistry.loadStored(from: store, fingerprint: shared)
            for problem in loaded.skipped { logger.error("stored definition skipped", metadata: ["problem": "\(problem)"]) }
            registry = loaded.registry
            fingerprint = loaded.fingerprint
        } catch {
            throw SetupError(description: "cannot read the flow definitions from the database: \(error)")
        }
        self.registry = registry
        store.rebuildHeads(with: HeadRebuilder(registry: registry))
        metrics.attach(store.counters)
        if shared {
            // Other nodes change definitions too: poll, and read again on demand.
            let sync = DefinitionSync(store: store, registry: registry, known: fingerprint, logger: logger, counters: metrics.cluster)
            sync.start()
            definitionSync = sync
        } else {
            definitionSync = nil
        }
        let sync = definitionSync
        if let sync {
            flagReads = SharedReads(thread: "fs-definitions-reads") { sync.refresh() }
        } else if store.isShared {
            // A lone node (`singleNode`) trusts the definitions it holds, but a client key may be
            // revoked by SQL: its revision is read, and the key looked up once while it stays,
            // instead of once for each evaluation.
            flagReads = SharedReads(thread: "fs-revision-reads") { [store, logger] in
                do {
                    return try store.definitionsFingerprint()
                } catch {
                    logger.debug("definitions' revision not read", metadata: ["error": "\(error)"])
                    return nil
                }
            }
        } else {
            flagReads = nil
        }
        let clientKeys = ClientKeys(store: store, logger: logger)
        self.clientKeys = clientKeys
        let access = AccessPolicy(options: access, clientKeys: clientKeys)
        self.access = access
        let events = SessionEvents(logger: logger, counters: metrics.events)
        self.events = events
        let rollouts = RolloutService(store: store, logger: logger)
        self.rollouts = rollouts
        let releaseHooks = ReleaseService.rolloutHooks(store: store, registry: registry, logger: logger)
        rollouts.setHooks { hooks in
            hooks.activate = releaseHooks.activate
            hooks.rollBack = releaseHooks.rollBack
        }
        rollouts.start()
        let leases: SessionLeases? = if shared, let nodeAddress, let leaseStore = store as? any SessionLeaseStore {
            SessionLeases(node: nodeAddress, store: leaseStore, duration: leaseDuration, counters: metrics.cluster)
        } else {
            nil
        }
        self.leases = leases
        owners = leases.map { OwnerRouting(leases: $0, logger: logger) }
        if shared, let nodeStore = store as? any ClusterNodeStore {
            let membership = ClusterMembership(store: nodeStore, leases: leases, logger: logger, trustWindow: trustWindow)
            do {
                try membership.join()
            } catch {
                throw SetupError(description: "cannot announce this node in the database: \(error)")
            }
            self.membership = membership
        } else {
            membership = nil
        }
        let sessions = SessionService(store: store, registry: registry, cacheCapacity: cacheCapacity, logger: logger,
                                      shared: shared, counters: metrics.cluster, events: events,
                                      refreshDefinitions: { sync?.refresh(force: true) },
                                      definitionsSeen: { sync?.refresh(seen: $0) }, rollouts: rollouts,
                                      expiry: SessionExpiry(idle: retention.sessionIdle, counters: metrics.retention), leases: leases,
                                      maxSessionBytes: maxSessionBytes)
        self.sessions = sessions
        let retentionService = RetentionService(store: store, options: retention, counters: metrics.retention, logger: logger,
                                                removedSessions: { [weak sessions] ids in sessions?.evictRemoved(ids) })
        retentionService.start()
        self.retention = retentionService
        events.startHeartbeat(every: eventOptions.heartbeat)
        let tickets = StreamTickets(store: store, sessions: sessions, options: eventOptions, logger: logger)
        self.tickets = tickets
        tickets.start()
        if shared {
            // Versions committed through other nodes reach this node's streams too.
            events.watch(store: store, every: eventOptions.watchInterval) { [weak sessions] id in sessions?.currentState(id) }
        }
        let releases = ReleaseService(
            store: store, registry: registry, requireReview: requireReview,
            rollouts: ReleaseService.Rollouts(
                start: { id, flows, body throws(ResponseError) in
                    try Self.startRollout(rollouts, logger: logger, releaseId: id, flows: flows, body: body) },
                stop: { id, reason in try rollouts.stop(releaseId: id, reason: reason) },
                withRollout: { release in rollouts.withRollout(release) }),
            logger: logger)
        var router = Router()
        OperationController(store: store, metrics: metrics, limits: bodyLimits).register(on: &router)
        SessionController(sessions: sessions, access: access, admin: admin, limits: bodyLimits).register(on: &router)
        SessionEventController(sessions: sessions, events: events, tickets: tickets, options: eventOptions, limits: bodyLimits)
            .register(on: &router)
        let graphRenderer = GraphRenderer(logger: logger)
        GraphController(sessions: sessions, registry: registry, renderer: graphRenderer, admin: admin, limits: bodyLimits)
            .register(on: &router)
        UserController(sessions: sessions, admin: admin, limits: bodyLimits).register(on: &router)
        UserDataController(userData: UserDataService(store: store, sessions: sessions), admin: admin, limits: bodyLimits, logger: logger)
            .register(on: &router)
        LinkController(sessions: sessions, admin: admin, limits: bodyLimits).register(on: &router)
        KeyController(clientKeys: clientKeys, adminKeys: AdminKeys(store: store, logger: logger), admin: admin, limits: bodyLimits)
            .register(on: &router)
        FlowController(flows: FlowService(store: store, registry: registry, logger: logger), admin: admin, limits: bodyLimits)
            .register(on: &router)
        ReplayController(replays: ReplayService(store: store, registry: registry, logger: logger), releases: releases, admin: admin,
                         limits: bodyLimits).register(on: &router)
        AuditController(store: store, admin: admin, limits: bodyLimits, logger: logger).register(on: &router)
        ReleaseController(releases: releases, admin: admin, limits: bodyLimits).register(on: &router)
        RolloutController(rollouts: rollouts, admin: admin, limits: bodyLimits, logger: logger).register(on: &router)
        FlagController(flags: FlagService(store: store, registry: registry, logger: logger), admin: admin, limits: bodyLimits)
            .register(on: &router)
        ExperimentController(experiments: ExperimentService(store: store, registry: registry, logger: logger), admin: admin,
                             limits: bodyLimits).register(on: &router)
        OFREPController(registry: registry, keys: clientKeys, limits: bodyLimits).register(on: &router)
        GrowthBookController(registry: registry, keys: clientKeys, limits: bodyLimits).register(on: &router)
        metrics.prepare(routes: router.patterns.map(\.pattern))
        self.router = router
        adminRouteSet = AdminRouteSet(admin.routes.all.map { ($0.method, $0.pattern) })
        adminByRoute = router.patterns.map { [adminRouteSet] in adminRouteSet.contains($0.method, $0.pattern) }
        Self.watchCaches(metrics, sessions: sessions, registry: registry, access: access, graphs: graphRenderer)
    }

    /// Gives up this node's session leases (a node stopping), so other nodes take its sessions
    /// at once instead of when the leases run out, and its row among the nodes serving (see
    /// `ClusterMembership`). Call it once no request is served any more.
    public func releaseLeases() {
        leases?.releaseAll()
        membership?.leave()
    }

    /// The routes served, for documentation and tests.
    public var routes: [(method: String, pattern: String)] { router.patterns }

    /// The admin routes and the role each needs (`read`, `edit`, `publish`, `admin`), for
    /// documentation and tests.
    public var adminRoutes: [(method: String, pattern: String, role: String)] {
        admin.routes.all.map { ($0.method, $0.pattern, $0.role.rawValue) }
    }

    /// Answers one request: routes it, then records its metrics and logs it.
    ///
    /// An action's answer comes later (`response.deferred`, once its commit is written): the
    /// HTTP server suspends the connection meanwhile; `response.settled()` waits for it.
    public func handle(_ request: Request) -> Response {
        guard let cors, CORSPolicy.covers(request.path) else { return answer(request) }
        if request.method == "OPTIONS" {
            // The methods of the path's routes, as the router's 405 lists them.
            let probe = router.dispatch(Request(method: "OPTIONS", path: request.path))
            if let preflight = cors.preflight(request, methods: probe.response.status == 405 ? probe.response.headers["Allow"] : nil) {
                record(request, pattern: probe.pattern, route: probe.route, preflight, since: .now)
                return preflight
            }
        }
        return cors.decorate(answer(request), for: request)
    }

    /// `handle` without CORS.
    private func answer(_ request: Request) -> Response {
        let start = ContinuousClock.now
        // Set on PostgreSQL only, as `definitionSync` on a node among several.
        if let flagReads, Self.readsDefinitions(request.path) {
            if Self.evaluatesFlags(request.path) {
                // Refused unread (401) without a key, so not worth a read of the revision.
                guard ClientKeys.mayBePresented(in: request) else { return routed(request, since: start) }
                // What clients poll: the evaluations that come while the fingerprint is read share
                // the next read (which, on a node among several, reads the definitions again when
                // it moved), and are answered on the thread that made it, their connections
                // suspended meanwhile, instead of a round trip each.
                let later = DeferredResponse()
                flagReads.afterFreshRead { [self] seen in
                    // Its client key is checked at the revision read (`ClientKeys`).
                    let answer = ClientKeys.$checkedAt.withValue(seen) { routed(request, since: start) }
                    if let inner = answer.deferred { inner.whenComplete { later.complete($0) } } else { later.complete(answer) }
                }
                return .later(later)
            }
            // Another node may have changed a definition a moment ago: admin routes see it (one
            // small query: the fingerprint; a reload only when it moved). A new session reads
            // the fingerprint with its user, in one round trip (`newUser`).
            definitionSync?.refresh()
        }
        return routed(request, since: start)
    }

    /// `answer` once the definitions are current: routes the request, then records its metrics
    /// and logs it (when its answer is given, for one that comes later).
    private func routed(_ request: Request, since start: ContinuousClock.Instant) -> Response {
        // libmicrohttpd leaves the body out of HEAD answers itself, keeping Content-Length.
        // Assigned whole from the router's tuple: a copy of the answer taken out of a tuple kept
        // alive for its pattern and route retained each of the answer's references, on every request.
        var response: Response
        let pattern: String?
        let route: Int?
        // A write another node forwarded here under this node's lease: its client's failed
        // credentials are counted by the node it reached, which sees the client's address and
        // passes this answer back; counted here too, they would be charged to that node's
        // address, and past the limit every forwarded write with a stale token would be answered
        // 429 (retry) instead of 401 (restart), whichever client sent it. (A client that names an
        // epoch itself reaches here only under the current one, and gains no guesses from it: its
        // failures on the node it really reached are counted there.)
        var forwardedHere = false
        if let owners, let id = OwnerRouting.writtenSession(request) {
            if let elsewhere = owners.answer(request, session: id, local: { [router] in router.dispatch($0).response }) {
                // A write of a session another node owns (leases on a shared database).
                (response, pattern, route) = (elsewhere, router.pattern(forPath: request.path), nil)
            } else {
                (response, pattern, route) = router.dispatch(request)
                forwardedHere = request.headers[OwnerRouting.epochHeader] != nil
            }
        } else {
            (response, pattern, route) = router.dispatch(request)
        }
        // The credential was checked first: a valid one is served whatever its address got wrong
        // before; a failed check of one presented is counted, and answered 429 past the limit
        // (a request that presents none is not guessing: its 401 says what to send).
        let failures = forwardedHere ? nil : access.failures
        if let failures, response.status == 401, Self.carriesCredentials(request), let address = access.clientAddress(request) {
            response = failures.answer(response, kind: credentialKind(request, pattern: pattern, route: route), address: address)
        }
        if response.deferred == nil {
            CachePolicy.apply(to: &response, route: pattern)
        }
        if let later = response.deferred {
            // A token checked in the session's turn (a cached session's action) is answered
            // later: counted then, and when the address has no failure left now, a failure then
            // is answered 429 (the answer is passed through a deferred answer of its own).
            // On the action path this costs the route's kind, read by its index, and one look-up
            // when failures of its kind are not limited (session tokens without --session-rate),
            // as by default.
            let kind = failures == nil ? nil : credentialKind(request, pattern: pattern, route: route)
            let counted: (kind: CredentialKind, address: IPAddress)? =
                if let failures, let kind, failures.limit(kind) != nil, Self.carriesCredentials(request),
                   let address = access.clientAddress(request) {
                    (kind, address)
                } else {
                    nil
                }
            let passed: DeferredResponse? = if let failures, let counted, !failures.allowsFailure(counted.kind, from: counted.address) {
                DeferredResponse()
            } else {
                nil
            }
            if let passed { response = .later(passed) }
            later.whenComplete { [self] answer in
                var answer = answer
                if let failures, let counted, answer.status == 401 {
                    answer = failures.answer(answer, kind: counted.kind, address: counted.address)
                }
                passed?.complete(answer)
                record(request, pattern: pattern, route: route, answer, since: start)
            }
            return response
        }
        record(request, pattern: pattern, route: route, response, since: start)
        return response
    }

    /// The kind of credential a request to `pattern` presents (for counting its failures apart):
    /// by the served route's index when there is one (`route`), else by the pattern.
    private func credentialKind(_ request: Request, pattern: String?, route: Int?) -> CredentialKind {
        let isAdminRoute = if let route, adminByRoute.indices.contains(route) {
            adminByRoute[route]
        } else {
            pattern.map { adminRouteSet.contains(request.method, $0) } ?? false
        }
        return CredentialKind.of(request, isAdminRoute: isAdminRoute)
    }

    /// Whether the request presents a token, a key or a ticket (what a failed check counts against).
    static func carriesCredentials(_ request: Request) -> Bool {
        request.headers["Authorization"] != nil || request.headers["X-API-Key"] != nil || request.queryValue("ticket") != nil
            || request.path.hasPrefix(growthBookPrefix)
    }

    /// The routes of `readsDefinitions` that clients poll, which share reads of the fingerprint:
    /// OFREP and the GrowthBook payload.
    static func evaluatesFlags(_ path: String) -> Bool {
        path.hasPrefix("/ofrep/") || path.hasPrefix(growthBookPrefix)
    }

    /// Routes whose answer depends on the current definitions, read before they are routed: the
    /// admin routes of flows, flags, experiments and links, OFREP and the GrowthBook payload.
    /// Session creation depends on them too, and reads the fingerprint with its user (`newUser`).
    static func readsDefinitions(_ path: String) -> Bool {
        path.hasPrefix("/v1/flows") || path.hasPrefix("/v1/flags")
            || path.hasPrefix("/v1/experiments") || path.hasPrefix("/v1/links") || path.hasPrefix("/v1/releases") || path.hasPrefix("/ofrep/")
            || path.hasPrefix(growthBookPrefix)
    }

    /// The GrowthBook payload's path, which carries a client key (`/api/features/{clientKey}`).
    static let growthBookPrefix = "/api/features/"

    /// Counts an answered request in the metrics, and logs it.
    private func record(_ request: Request, pattern: String?, route index: Int?, _ response: Response,
                        since start: ContinuousClock.Instant) {
        // The components read once: each read divides a 128-bit count of attoseconds.
        let elapsed = (ContinuousClock.now - start).components
        let nanoseconds = elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
        let route = pattern ?? "unmatched"
        // Labels come from a closed set, so clients cannot grow the metrics with made-up methods.
        // The router's index of the route finds its figures in the table `prepare` made from
        // `router.patterns`, in the same order.
        metrics.record(route: route, index: index, method: request.method, status: response.status, nanoseconds: nanoseconds)
        if response.status >= 500 {
            logger.error("request failed", metadata: ["request-id": "\(request.requestId)", "method": "\(request.method)",
                                                      "route": "\(route)", "status": "\(response.status)"])
        } else if logger.logLevel <= .debug {
            // The route's pattern (`/v1/users/{id}`), never the path: the ids in a path (user
            // ids, flag keys, a client key) would stay in logs that an erasure never reaches.
            logger.debug("\(request.method) \(route) \(response.status)",
                         metadata: ["request-id": "\(request.requestId)", "microseconds": "\(nanoseconds / 1000)"])
        }
    }
}

// Creates sessions, applies actions one at a time per session, and keeps the cache and the
// database in step: nothing is acknowledged before it is committed.
import JSON
import FeatureFlags
import FlowEngine
import FlowStore
import Foundation
import HTTPServer
import Logging

/// The session side of the application, independent of HTTP routing.
final class SessionService: Sendable {
    let store: any FlowStore
    let registry: DefinitionRegistry
    let cache: SessionCache
    let users: UserStates
    let logger: Logger
    let counters: ClusterCounters
    /// The event streams that get each version this node commits.
    let events: SessionEvents
    /// Other nodes write the database too: a cached session is checked against it before a
    /// read is answered, and a refusal made on a cached state is checked before it is sent.
    let shared: Bool
    /// Reads the definitions again from the database now (a session of a flow version another
    /// node just stored).
    let refreshDefinitions: @Sendable () -> Void
    /// The rollout in progress, if any: new sessions are put on one of its sides, and their
    /// refusals, dead ends and conversions counted (off the action's path).
    let rollouts: RolloutService?
    /// Where reads go that must not run on the thread that needs them: a conflict's reload and
    /// a waiting request's reads after a commit (never on the group-commit writer thread).
    let readQueue = DispatchQueue(label: "fs-session-reads", attributes: .concurrent)

    init(store: any FlowStore, registry: DefinitionRegistry, cacheCapacity: Int, logger: Logger, shared: Bool,
         counters: ClusterCounters = ClusterCounters(), events: SessionEvents? = nil,
         refreshDefinitions: @escaping @Sendable () -> Void = {}, rollouts: RolloutService? = nil) {
        self.rollouts = rollouts
        self.events = events ?? SessionEvents(logger: logger)
        self.store = store
        self.registry = registry
        self.cache = SessionCache(capacity: cacheCapacity)
        self.users = UserStates(capacity: cacheCapacity, shared: shared)
        self.logger = logger
        self.counters = counters
        self.shared = shared
        self.refreshDefinitions = refreshDefinitions
    }

    // MARK: Creating

    /// What a new session for a user starts from: its context (flags evaluated once, now, and
    /// fixed for the session's life), the flow versions it runs (experiments may pin some) and
    /// their catalog, and the experiments it was placed in.
    struct Start {
        var context: FlowContext
        var catalog: FlowCatalog
        var versions: [String: Int]
        var evaluations: FlagEvaluations
        var exposures: [(experiment: String, variant: String)]
        /// Experiments that bucketed the session but did not enrol it: its client cannot render them.
        var exclusions: [(experiment: String, variant: String)] = []
        /// Flows whose live version the client cannot render: the version it runs instead.
        var fallbacks: [String: Int] = [:]
        /// The side of the rollout in progress the session is on.
        var rollout: RolloutService.Assignment?
    }

    /// The start of a session for `userId` with `attributes` and `traits`, as creation makes it;
    /// with a `client` that lists its features, only on versions it can render (422
    /// `unsupported-client` when none fits).
    func start(userId: String, attributes: [String: JSONValue], traits: [String: String],
               client: ClientCapabilities? = nil) throws(ResponseError) -> Start {
        // Read afresh on a shared database: the user may have finished onboarding on another node.
        let userState = try storage { try users.held(userId, store: store, fresh: shared).state }
        // Flags and experiments are evaluated once, now, and stay fixed for the session's life.
        let inputs = registry.sessionInputs
        let evaluationContext = EvaluationContext(targetingKey: userId, attributes: attributes)
        let evaluations = FlagSet.evaluateAll(flags: inputs.flags, context: evaluationContext)
        var flagValues: [String: JSONValue] = [:]
        for entry in evaluations { flagValues[entry.key] = entry.details.value }
        // Capabilities: the versions this client renders (see SessionService+capabilities.swift).
        let (base, fallbacks) = try clientVersions(client, live: inputs.live)
        var versions = base
        var pinnedBy: [String: String] = [:]
        var exposures: [(experiment: String, variant: String)] = []
        var exclusions: [(experiment: String, variant: String)] = []
        for (key, experiment) in inputs.experiments {
            guard let assignment = experiment.assign(key: key, context: evaluationContext) else { continue }
            if let client, !registry.renders(experiment, client: client, base: base, live: inputs.live) {
                exclusions.append((key, assignment.variantKey))
                continue
            }
            exposures.append((key, assignment.variantKey))
            // Two experiments pinning one flow: the first by key wins; the other still records
            // its exposure, so its report shows the overlap.
            for (flow, version) in assignment.pinnedFlows where pinnedBy[flow] == nil {
                pinnedBy[flow] = key
                versions[flow] = version
            }
        }
        // A release rolling out: its side runs the release's versions (over any experiment's pin
        // of the same flow); the old side runs what is live. A node that has not loaded the
        // release's versions yet, or a client that cannot draw a screen of the release (it lists
        // its features and one is missing), keeps the session on the old side, out of the counts.
        var rollout = rollouts?.assign(userId: userId)
        if let assignment = rollout, assignment.onRelease {
            let released = versions.merging(assignment.flows) { _, release in release }
            if let catalog = registry.catalog(for: released),
               client.map({ $0.features == nil || $0.canRender(catalog.screenFeatures()) }) ?? true {
                versions = released
            } else {
                rollout = nil
            }
        }
        let context = FlowContext(userId: userId, attributes: attributes, traits: traits,
                                  flags: flagValues, user: userState)
        guard let catalog = registry.catalog(for: versions) else {
            throw ResponseError(.problem(500, "The flow versions for this session are not all stored."))
        }
        return Start(context: context, catalog: catalog, versions: versions, evaluations: evaluations, exposures: exposures,
                     exclusions: exclusions, fallbacks: fallbacks, rollout: rollout)
    }

    /// Makes a session for `input`, stores it, caches it; returns it with its token.
    func create(_ input: SessionInput) throws(ResponseError) -> (session: LiveSession, token: String) {
        let start = try start(userId: input.userId, attributes: input.attributes, traits: input.traits, client: input.client)
        let (context, catalog, versions, evaluations, exposures) = (start.context, start.catalog, start.versions, start.evaluations, start.exposures)
        let tree: FlowTree
        do throws(FlowError) {
            tree = try FlowEngine.start(catalog: catalog, context: context)
        } catch {
            logger.error("cannot start a session", metadata: ["error": "\(error.message)"])
            throw ResponseError(.problem(500, "The flow definitions cannot build a first screen: \(error.message)"))
        }
        if let link = input.link {
            // Tried before anything is stored: an unknown, malformed or refused link creates nothing.
            do throws(FlowError) {
                _ = try FlowEngine.followLink(link, from: tree, catalog: catalog, context: context, field: "/link")
            } catch {
                throw ResponseError(Self.problem(for: error))
            }
        }
        let token = BearerToken.generate()
        let now = Timestamp.string()
        var session = LiveSession(
            id: Self.newSessionId(), userId: input.userId, tokenHash: BearerToken.hash(token), version: 0,
            tree: tree, context: context, catalog: catalog, flagsJSON: Self.encode(evaluations),
            experimentsJSON: Self.encode(exposures), flowVersionsJSON: DefinitionRegistry.encode(versions),
            inExperiment: !exposures.isEmpty, lastTransitionJSON: nil, handledBy: nil)
        let record = SessionRecord(
            id: session.id, userId: session.userId, tokenHash: session.tokenHash, version: 0,
            tree: tree.storageBytes(), context: Self.encodeContext(context),
            flags: String(decoding: session.flagsJSON, as: UTF8.self),
            experiments: String(decoding: session.experimentsJSON, as: UTF8.self),
            flowVersions: String(decoding: session.flowVersionsJSON, as: UTF8.self), createdAt: now, updatedAt: now,
            client: input.client?.jsonText)
        try storage { try store.insert(record, exposures: exposures, exclusions: start.exclusions, firstFeature: tree.top?.feature) }
        if let assignment = start.rollout {
            rollouts?.sessionStarted(session.id, assignment, tree: tree, catalog: catalog, context: context)
        }
        _ = session.cachedStateDocument()
        let slot = cache.pin(session.id)
        slot.state.withLock { $0.session = session }
        cache.unpin(slot)
        guard let link = input.link else { return (session, token) }
        // The link is the session's first action (version 1), applied and committed like any
        // other: its user-state changes are kept, the log shows it, and a link whose `when` does
        // not hold yet becomes the session's pendingLink.
        let followed = apply(FlowAction(type: FlowAction.link, params: ["uri": .string(link)]), to: session.id, token: token,
                             ifMatch: nil, idempotency: nil).settled()
        guard followed.status == 200 else { throw ResponseError(followed) }
        return (try withSession(session.id, access: .server) { $0 }, token)
    }

    // MARK: Reading

    /// Runs `body` on the committed state of session `id`, under the session's lock, after
    /// checking the bearer token; the state `body` leaves is kept.
    func withSession<T: Sendable>(
        _ id: String, token: String?, _ body: (inout LiveSession) throws(ResponseError) -> T
    ) throws(ResponseError) -> T {
        try withSession(id, access: .bearer(token), body)
    }

    func withSession<T: Sendable>(
        _ id: String, access: SessionAccess, _ body: (inout LiveSession) throws(ResponseError) -> T
    ) throws(ResponseError) -> T {
        try withSession(id, access: access, user: false) { (session: inout LiveSession, _) throws(ResponseError) -> T in
            try body(&session)
        }
    }

    /// What a read under the slot's lock needs before it can answer.
    private enum ReadStep<T: Sendable>: Sendable {
        case done(T)
        /// The session as stored (not cached, or another node moved it).
        case load
        /// The user's state, not held.
        case user(String)
    }

    /// Runs `body` on the committed state of session `id` (and, with `user`, the user's state),
    /// under the session's lock, after checking the token; the state `body` leaves is kept.
    ///
    /// Every database read is made outside the lock, before it is taken: a session that is not
    /// cached is read and its token checked without touching the cache (`pinnedSlot`), so
    /// requests for unknown ids or with wrong tokens never evict live sessions; on a shared
    /// database the head version is read first and a cached session another node moved is read
    /// again, so a read never answers older than what any node acknowledged before it was sent.
    func withSession<T: Sendable>(
        _ id: String, access: SessionAccess, user needsUser: Bool,
        _ body: (inout LiveSession, [String: JSONValue]) throws(ResponseError) -> T
    ) throws(ResponseError) -> T {
        let slot = try pinnedSlot(id, access: access)
        defer { cache.unpin(slot) }
        var head: Int?? = .none
        if shared {
            counters.headChecks.add(1, ordering: .relaxed)
            head = .some(try storage { try store.headVersion(sessionId: id) })
        }
        var loaded: LiveSession?
        var user: [String: JSONValue]?
        for _ in 0..<4 {
            let step = try slot.state.withLock { (contents: inout SlotContents) throws(ResponseError) -> ReadStep<T> in
                try readLocked(id, access: access, slot: slot, head: head, loaded: &loaded, needsUser: needsUser, user: user,
                               &contents, body)
            }
            switch step {
            case .done(let result):
                return result
            case .load:
                counters.sessionLoads.add(1, ordering: .relaxed)
                guard let read = try load(id) else { throw Self.notFound(id) }
                loaded = read
            case .user(let userId):
                user = try storage { try users.state(of: userId, store: store) }
            }
        }
        throw ResponseError(.problem(503, "Session \(id) is changing too fast to read; try again.", title: "Service Unavailable",
                                     type: ProblemType.sessionContention))
    }

    /// A read's step under the slot's lock: installs what was read, or says what to read.
    private func readLocked<T: Sendable>(
        _ id: String, access: SessionAccess, slot: SessionSlot, head: Int??, loaded: inout LiveSession?, needsUser: Bool,
        user: [String: JSONValue]?, _ contents: inout SlotContents, _ body: (inout LiveSession, [String: JSONValue]) throws(ResponseError) -> T
    ) throws(ResponseError) -> ReadStep<T> {
        try access.checkPresented()
        let idle = contents.turn.phase == .idle
        if let fresh = loaded, idle, (contents.session?.version ?? -1) <= fresh.version {
            // Read outside the lock; kept when no turn of this session is under way.
            contents.session = fresh
            loaded = nil
        }
        if loaded == nil {
            guard let cached = contents.session?.version else { return .load }
            if case .some(let stored) = head, stored != cached {
                guard stored != nil else {
                    // Deleted through another node.
                    if idle {
                        contents.session = nil
                        cache.remove(id, slot: slot)
                    }
                    throw Self.notFound(id)
                }
                counters.staleReloads.add(1, ordering: .relaxed)
                return .load
            }
            counters.cacheHits.add(1, ordering: .relaxed)
        }
        // Moved out of the slot and back rather than copied: a copy retains every field.
        guard loaded == nil else {
            guard var session = loaded else { throw Self.notFound(id) }
            return try readSession(&session, access: access, id: id, needsUser: needsUser, user: user, body)
        }
        guard var session = contents.session.take() else { throw Self.notFound(id) }
        let step: ReadStep<T>
        do throws(ResponseError) {
            step = try readSession(&session, access: access, id: id, needsUser: needsUser, user: user, body)
        } catch {
            contents.session = consume session
            throw error
        }
        contents.session = consume session
        return step
    }

    private func readSession<T: Sendable>(
        _ session: inout LiveSession, access: SessionAccess, id: String, needsUser: Bool, user: [String: JSONValue]?,
        _ body: (inout LiveSession, [String: JSONValue]) throws(ResponseError) -> T
    ) throws(ResponseError) -> ReadStep<T> {
        guard access.opens(session.tokenHash) else { throw access.refusal(id) }
        var state: [String: JSONValue] = [:]
        if needsUser {
            guard let known = user ?? users.cached(session.userId)?.state else { return .user(session.userId) }
            state = known
        }
        return .done(try body(&session, state))
    }

    /// The slot of session `id`, pinned (give it back with `cache.unpin`), after checking that
    /// the session exists and `token` opens it when it is not cached.
    ///
    /// A session that is not cached is first read and its token checked without touching the
    /// cache, so requests for unknown ids or with wrong tokens never evict live sessions; it is
    /// then read again under its slot's lock, where no commit can race the read.
    private func pinnedSlot(_ id: String, access: SessionAccess) throws(ResponseError) -> SessionSlot {
        try access.checkPresented()
        guard Self.isPlausibleId(id) else { throw Self.notFound(id) }
        if let slot = cache.pinIfCached(id) { return slot }
        guard let record = try storage({ try store.session(id: id) }) else { throw Self.notFound(id) }
        guard access.opens(record.tokenHash) else { throw access.refusal(id) }
        return cache.pin(id)
    }

    /// The pinned slot of session `id` (see `pinnedSlot`) for work answered later, and that
    /// answer: giving it unpins the slot.
    func pinnedForLater(_ id: String, token: String?) throws(ResponseError) -> (SessionSlot, DeferredResponse) {
        let slot = try pinnedSlot(id, access: .bearer(token))
        let answer = DeferredResponse()
        answer.whenComplete { [cache] _ in cache.unpin(slot) }
        return (slot, answer)
    }

    /// The committed state document of session `id` and its version, for the server's own use
    /// (no token check); nil when there is no such session or it cannot be read now.
    func currentState(_ id: String) -> (version: Int, document: [UInt8])? {
        try? withSession(id, access: .server) { session in (session.version, session.cachedStateDocument()) }
    }

    /// The committed state document of session `id` and its version, after the token check.
    /// The document is encoded once per version and kept with the session, so most reads only
    /// check the token and copy bytes.
    func stateDocument(_ id: String, token: String?) throws(ResponseError) -> (version: Int, document: [UInt8]) {
        try withSession(id, token: token) { session in (session.version, session.cachedStateDocument()) }
    }

    /// The session as committed, the actions its state accepts now, judged with the user's
    /// current state (as the next action would be), and the predicted state of each that
    /// needs no params.
    func availableActions(_ id: String, token: String?) throws(ResponseError) -> (LiveSession, [AvailableAction], [Prediction]) {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(ResponseError) in
            let state = session.engineState(user: user)
            return (session, FlowEngine.availableActions(in: state.tree, catalog: state.catalog, context: state.context),
                    state.predictions())
        }
    }

    /// What one try at applying an action came to.
    enum Attempt {
        case answered(Response)
        /// The key's answer is of a version newer than the cached session: read it again.
        case reload
        /// Applied in memory: to be committed, then answered.
        case commit(ActionStep)
    }

    /// An applied action waiting for its commit: the session it leads to, the answer's body, and
    /// the user-state changes to keep once committed.
    struct ActionStep: Sendable {
        let commit: ActionCommit
        let next: LiveSession
        let body: [UInt8]
        let userChanges: [(key: String, value: JSONValue)]
        /// The answer when it differs from `body` (the stored one): with predictions.
        var answer: [UInt8]? = nil
    }

    /// Applies an action to a session whose lock the caller holds; `session` is replaced only
    /// after the commit. It reads nothing: `user` is the user's state as held or read before
    /// the turn, and `known` the stored answer of the request's key (`.some(nil)`: looked up,
    /// unused), looked up before the turn.
    ///
    /// A batch of offline taps (`SessionService+batch.swift`) passes the client's time of each,
    /// and the user's state as its earlier, not yet committed, steps left it.
    func applyLocked(_ action: FlowAction, to session: inout LiveSession, ifMatch: IfMatch?,
                     idempotency: (key: String, bodyHash: [UInt8])?, predict: Bool = false, clientAt: String? = nil,
                     user: UserStates.Held, known: IdempotentAnswer??) throws(ResponseError) -> Attempt {
        let id = session.id
        if let idempotency, case .some(.some(let stored)) = known {
            guard BearerToken.constantTimeEquals(stored.requestHash, idempotency.bodyHash) else {
                throw ResponseError(.problem(
                    422, "Idempotency-Key \(idempotency.key) was used with another request body; use a new key for a new action.",
                    type: ProblemType.idempotencyKeyReused))
            }
            // Applied, but its answer never reached this cache (a commit whose answer was lost,
            // or another node): what follows starts from the stored state.
            if stored.version > session.version { return .reload }
            var replay = Response.json(stored.body, status: stored.status)
            replay.headers["ETag"] = Self.etag(stored.version)
            replay.headers["Cache-Control"] = "no-store"
            replay.headers["Idempotent-Replayed"] = "true"
            return .answered(replay)
        }
        try Self.check(ifMatch, session)
        session.context.user = user.state
        let outcome: ActionOutcome
        do throws(FlowError) {
            outcome = try FlowEngine.apply(action, to: session.tree, catalog: session.catalog, context: session.context)
        } catch {
            throw ResponseError(Self.problem(for: error), refusal: error)
        }
        var next = session
        next.version += 1
        next.tree = outcome.tree
        next.handledBy = outcome.handledBy
        next.lastTransitionJSON = outcome.transition.map(SessionState.encode)
        var userPatch: String?
        if !outcome.userChanges.isEmpty {
            var writer = JSONWriter()
            writer.beginObject()
            for change in outcome.userChanges {
                writer.writeKey(change.key)
                writer.writeValue(change.value)
            }
            writer.endObject()
            userPatch = String(decoding: writer.takeBytes(), as: UTF8.self)
        }
        let body = next.cachedStateDocument()
        let record = ActionRecord(
            version: next.version, type: action.type, source: action.from,
            params: JSONValue.object(action.params).jsonText, interactive: action.interactive,
            handledBy: outcome.handledBy,
            transition: next.lastTransitionJSON.map { String(decoding: $0, as: UTF8.self) },
            createdAt: Timestamp.string(), clientAt: clientAt)
        let reached = session.inExperiment && outcome.tree.top?.feature != session.tree.top?.feature ? outcome.tree.top?.feature : nil
        let commit = ActionCommit(
            sessionId: id, userId: session.userId, version: next.version, tree: next.tree.storageBytes(),
            action: record, userPatch: userPatch,
            idempotency: idempotency.map {
                ($0.key, IdempotentAnswer(requestHash: $0.bodyHash, status: 200, version: next.version, body: body))
            },
            reachedFeature: reached,
            completesOnboarding: session.inExperiment && outcome.userChanges.contains { $0.key == "onboarded" && $0.value == true },
            userRevision: shared ? user.revision : nil)
        var answer: [UInt8]?
        if predict {
            var userAfter = user.state
            for change in outcome.userChanges { userAfter[change.key] = change.value }
            answer = LiveSession.withPredictions(body, next.cachedPredictions(user: userAfter))
        }
        return .commit(ActionStep(commit: commit, next: next, body: body,
                                  userChanges: outcome.userChanges.map { ($0.key, $0.value) }, answer: answer))
    }

    // MARK: Loading

    /// Reads session `id` from the database into its in-memory form, or nil when it is unknown.
    func load(_ id: String) throws(ResponseError) -> LiveSession? {
        guard let record = try storage({ try store.session(id: id) }) else { return nil }
        let tree: FlowTree
        do throws(FlowStorageError) {
            tree = try FlowTree(storage: record.tree)
        } catch {
            logger.error("stored tree does not decode", metadata: ["session": "\(id)", "error": "\(error)"])
            throw ResponseError(.problem(500, "Session \(id) is stored in a form this server cannot read."))
        }
        let versions = DefinitionRegistry.decode(record.flowVersions)
        var catalog = versions.flatMap(registry.catalog(for:))
        if catalog == nil, shared, let versions {
            refreshDefinitions()  // a flow version another node stored moments ago
            catalog = registry.catalog(for: versions)
        }
        guard let catalog else {
            logger.error("stored session runs unknown flow versions", metadata: ["session": "\(id)", "versions": "\(record.flowVersions)"])
            throw ResponseError(.problem(500, "Session \(id) runs flow versions this server does not have."))
        }
        var context = Self.decodeContext(record.context, userId: record.userId)
        context.user = try storage { try users.state(of: record.userId, store: store) }
        return LiveSession(
            id: record.id, userId: record.userId, tokenHash: record.tokenHash, version: record.version, tree: tree,
            context: context, catalog: catalog, flagsJSON: Array(record.flags.utf8), experimentsJSON: Array(record.experiments.utf8),
            flowVersionsJSON: Array(record.flowVersions.utf8), inExperiment: record.experiments != "{}",
            lastTransitionJSON: record.lastTransition.map { Array($0.utf8) }, handledBy: record.handledBy)
    }

    // MARK: Helpers

    /// Runs a store call; a database failure becomes a logged 503 that reveals no internals.
    func storage<T>(_ call: () throws -> T) throws(ResponseError) -> T {
        do {
            return try call()
        } catch {
            throw Self.storageFailure(error, logger: logger)
        }
    }

    static func storageFailure(_ error: any Error, logger: Logger) -> ResponseError {
        logger.error("database error", metadata: ["error": "\(error)"])
        if case StoreError.outcomeUnknown = error {
            return ResponseError(.problem(
                503, "The database did not confirm the write: it may or may not have been applied. Retry with the same "
                    + "Idempotency-Key (its answer is replayed if it was applied), or read the state before acting again.",
                title: "Service Unavailable", type: ProblemType.outcomeUnknown))
        }
        return ResponseError(.problem(503, "The database did not complete the request; try again.", title: "Service Unavailable",
                                      type: ProblemType.databaseUnavailable))
    }

    static func stateResponse(_ session: LiveSession, body: [UInt8]? = nil, status: Int = 200) -> Response {
        stateResponse(version: session.version, body: body ?? session.document ?? session.stateDocument(), status: status)
    }

    /// A state answer: the document, its `ETag`, and `Cache-Control: no-store`.
    static func stateResponse(version: Int, body: [UInt8], status: Int = 200) -> Response {
        var headers = HTTPHeaders(capacity: 4)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "ETag", value: etag(version))
        headers.add(name: "Cache-Control", value: "no-store")
        return Response(status: status, headers: headers, body: body)
    }

    static func etag(_ version: Int) -> String { "\"\(version)\"" }

    /// `s_` and 22 base64url characters: 128 random bits.
    static func newSessionId() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return "s_" + BearerToken.base64URL(bytes)
    }

    /// Ids are short and URL-safe; anything else is not worth a database look-up.
    static func isPlausibleId(_ id: String) -> Bool {
        id.utf8.count <= 64 && id.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 45 || byte == 95
        }
    }

    static func unauthorized(_ detail: String) -> ResponseError {
        var response = Response.problem(401, detail, type: ProblemType.unauthorized)
        response.headers["WWW-Authenticate"] = "Bearer"
        return ResponseError(response)
    }

    static func notFound(_ id: String) -> ResponseError {
        ResponseError(.problem(404, "There is no session \(id).", type: ProblemType.notFound))
    }

    /// The answer to an action the engine did not apply.
    static func problem(for error: FlowError) -> Response {
        let status: Int
        var extensions: [(name: String, json: String)] = [("code", JSONValue.string(error.code).jsonText)]
        var errors: [ProblemDetails.FieldError] = []
        switch error {
        case .staleSource, .interactionPending, .noInteraction: status = 409
        case .unhandled(_, let chain):
            status = 422
            extensions.append(("chain", JSONValue.array(chain.map { .string($0) }).jsonText))
        case .refused(let flow, _, _):
            status = 422
            extensions.append(("flow", JSONValue.string(flow).jsonText))
        case .brokenDefinition: status = 422
        case .invalidParams(let path, let message):
            status = 400
            errors.append(.init(pointer: path, detail: message))
        case .corruptTree: status = 500
        case .unknownLink: status = 422
        case .linkRefused(let pattern, let step, _, _):
            status = 422
            extensions.append(("link", JSONValue.string(pattern).jsonText))
            extensions.append(("step", String(step)))
        }
        let detail = error.message.prefix(1).uppercased() + error.message.dropFirst() + "."
        return .problem(status, detail, type: ProblemType.of(error), errors: errors, extensions: extensions)
    }

    // MARK: Context encoding

    static func encode(_ evaluations: FlagEvaluations) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        evaluations.write(to: &writer)
        return writer.takeBytes()
    }

    /// `{"experiment":"variant",…}`.
    static func encode(_ exposures: [(experiment: String, variant: String)]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for exposure in exposures {
            writer.writeKey(exposure.experiment)
            writer.writeString(exposure.variant)
        }
        writer.endObject()
        return writer.takeBytes()
    }

    /// `{"attributes":{…},"traits":{…},"flags":{…}}`; the user's state lives in the users table.
    static func encodeContext(_ context: FlowContext) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("attributes")
        writer.beginObject()
        for key in context.attributes.keys.sorted() {
            writer.writeKey(key)
            writer.writeValue(context.attributes[key] ?? .null)
        }
        writer.endObject()
        writer.writeKey("traits")
        writer.beginObject()
        for key in context.traits.keys.sorted() {
            writer.writeKey(key)
            writer.writeString(context.traits[key] ?? "")
        }
        writer.endObject()
        writer.writeKey("flags")
        writer.beginObject()
        for key in context.flags.keys.sorted() {
            writer.writeKey(key)
            writer.writeValue(context.flags[key] ?? .null)
        }
        writer.endObject()
        writer.endObject()
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }

    static func decodeContext(_ text: String, userId: String) -> FlowContext {
        let object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject()
        var traits: [String: String] = [:]
        for member in object["traits"]?.objectValue ?? JSONObject() {
            if let value = member.value.stringValue { traits[member.key] = value }
        }
        return FlowContext(userId: userId, attributes: dictionary(object["attributes"]), traits: traits,
                           flags: dictionary(object["flags"]))
    }


    private static func dictionary(_ value: JSONValue?) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for member in value?.objectValue ?? JSONObject() { result[member.key] = member.value }
        return result
    }
}

/// Who reads a session: a client with the bearer token it presented, or the server itself.
enum SessionAccess: Sendable {
    case bearer(String?)
    /// The server's own reads, whose caller was checked otherwise (an event stream opened with
    /// a ticket, versions another node committed).
    case server

    /// Refuses a client that presented no token at all.
    func checkPresented() throws(ResponseError) {
        if case .bearer(nil) = self {
            throw SessionService.unauthorized("This route needs Authorization: Bearer <session token>.")
        }
    }

    /// Whether this access opens a session whose token hashes to `hash`.
    func opens(_ hash: [UInt8]) -> Bool {
        switch self {
        case .server: return true
        case .bearer(let token): return token.map { BearerToken.matches($0, hash: hash) } ?? false
        }
    }

    func refusal(_ id: String) -> ResponseError {
        SessionService.unauthorized("The token does not open session \(id).")
    }
}

/// A parsed `If-Match` or `If-None-Match` header: `*`, or a list of entity tags such as `"4"`.
struct IfMatch: CustomStringConvertible {
    let any: Bool
    /// Versions of the strong tags; weak tags (`W/"4"`) are kept apart, since `If-Match` compares
    /// strongly (RFC 9110 §13.1.1) and `If-None-Match` weakly (§13.1.2).
    let versions: [Int]
    let weakVersions: [Int]
    /// The tags as sent, for messages: a tag that names no version of ours is shown as it came.
    let tags: [String]

    /// Nil when the header is not `*` or a list of quoted entity tags.
    init?(_ header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" {
            any = true
            versions = []
            weakVersions = []
            tags = []
            return
        }
        var strong: [Int] = []
        var weak: [Int] = []
        var sent: [String] = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            var tag = Substring(part.trimmingCharacters(in: .whitespaces))
            sent.append(String(tag))
            let isWeak = tag.hasPrefix("W/")
            if isWeak { tag = tag.dropFirst(2) }
            guard tag.count >= 3, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            let inner = tag.dropFirst().dropLast()
            // Another server's tag is well-formed but matches no version of ours.
            guard inner.utf8.allSatisfy({ $0 >= 0x21 && $0 != 0x22 && $0 != 0x7F }) else { return nil }
            let version = inner.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) && inner.count <= 18 ? Int(inner) ?? -1 : -1
            if isWeak { weak.append(version) } else { strong.append(version) }
        }
        any = false
        versions = strong
        weakVersions = weak
        tags = sent
    }

    /// Strong comparison, for `If-Match`.
    func matches(_ version: Int) -> Bool { any || versions.contains(version) }

    /// Weak comparison, for `If-None-Match`.
    func matchesWeakly(_ version: Int) -> Bool { any || versions.contains(version) || weakVersions.contains(version) }

    var description: String {
        any ? "*" : tags.joined(separator: ", ")
    }
}

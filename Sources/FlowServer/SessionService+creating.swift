// Creating sessions: a new session's start (flags, experiments, pins, the rollout's side), stored, then cached.
import JSON
import FeatureFlags
import FlowEngine
import FlowStore
import Foundation
import Logging

extension SessionService {
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

    /// A new session's user as its creation reads them, and the definitions' fingerprint read
    /// with them (nil where none is read).
    struct NewUser {
        var state: [String: JSONValue]
        var definitions: String?
    }

    /// The user a new session for `userId` starts with. Read afresh on a shared database: the
    /// user may have finished onboarding on another node, and a flow or flag may have changed
    /// there. The definitions' fingerprint comes in the same round trip as the user, and they are
    /// read again before use when it moved. `forKey`: the creation presented a client key, to be
    /// checked at the revision read with the user: a lone node reads a user it does not hold so
    /// too (on PostgreSQL; SQLite reads the user alone), and one it holds not at all.
    func newUser(_ userId: String, forKey: Bool = false) throws(SessionError) -> NewUser {
        guard shared || forKey && users.cached(userId) == nil else {
            return NewUser(state: try storage { try users.held(userId, store: store).state })
        }
        let (held, definitions) = try storage { try users.heldAfresh(userId, store: store) }
        definitionsSeen(definitions)
        return NewUser(state: held.state, definitions: definitions)
    }

    /// The start of a session for `userId` with `attributes` and `traits`, as creation makes it
    /// (from `user` when it was read already); with a `client` that lists its features, only on
    /// versions it can render (422 `unsupported-client` when none fits).
    func start(userId: String, attributes: [String: JSONValue], traits: [String: String],
               client: ClientCapabilities? = nil, user: NewUser? = nil) throws(SessionError) -> Start {
        let userState = if let user { user.state } else { try newUser(userId).state }
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
            throw .flowVersionsNotStored
        }
        return Start(context: context, catalog: catalog, versions: versions, evaluations: evaluations, exposures: exposures,
                     exclusions: exclusions, fallbacks: fallbacks, rollout: rollout)
    }

    /// Makes a session for `input` (for `user` when they were read already, `newUser`), stores
    /// it, caches it; returns it with its token.
    func create(_ input: SessionInput, user: NewUser? = nil) throws(SessionError) -> (session: LiveSession, token: String) {
        let start = try start(userId: input.userId, attributes: input.attributes, traits: input.traits, client: input.client,
                              user: user)
        let (context, catalog, versions, evaluations, exposures) = (start.context, start.catalog, start.versions, start.evaluations, start.exposures)
        let tree: FlowTree
        do throws(FlowError) {
            tree = try FlowEngine.start(catalog: catalog, context: context)
        } catch {
            logger.error("cannot start a session", metadata: ["error": "\(error.message)"])
            throw .cannotStart(error.message)
        }
        if let link = input.link {
            // Tried before anything is stored: an unknown, malformed, refused or too large link creates nothing.
            let linked: LinkOutcome
            do throws(FlowError) {
                linked = try FlowEngine.followLink(link, from: tree, catalog: catalog, context: context, field: "/link")
            } catch {
                throw .refused(error)
            }
            let bytes = linked.tree.storageBytes().count
            guard bytes <= maxSessionBytes else {
                throw .sessionTooLarge(session: nil, bytes: bytes, limit: maxSessionBytes)
            }
        }
        let token = BearerToken.generate()
        let created = Date()
        let now = Timestamp.string(created)
        var session = LiveSession(
            id: SessionIdentifier.make(at: created), userId: input.userId, tokenHash: BearerToken.hash(token), version: 0,
            tree: tree, context: context, catalog: catalog, flagsJSON: SessionCodecs.encode(evaluations),
            experimentsJSON: SessionCodecs.encode(exposures), flowVersionsJSON: DefinitionRegistry.encode(versions),
            inExperiment: !exposures.isEmpty, lastTransitionJSON: nil, handledBy: nil)
        session.usedKeys = UsedKeys()  // a new session has none, and this node makes its commits
        session.openedBy = OpenedToken(token)  // its first requests skip the token's hash
        let record = SessionRecord(
            id: session.id, userId: session.userId, tokenHash: session.tokenHash, version: 0,
            tree: tree.storageBytes(), context: SessionCodecs.encodeContext(context),
            flags: String(decoding: session.flagsJSON, as: UTF8.self),
            experiments: String(decoding: session.experimentsJSON, as: UTF8.self),
            flowVersions: String(decoding: session.flowVersionsJSON, as: UTF8.self), createdAt: now, updatedAt: now,
            client: input.client?.jsonText)
        // The slot is pinned before the row is stored: an erasure of the user that commits right
        // after the insert finds the slot and evicts it (it leaves the cache, and the state put
        // into it below is seen by no request), instead of finding nothing to evict.
        let slot = cache.pin(session.id)
        do throws(SessionError) {
            try storage { try store.insert(record, exposures: exposures, exclusions: start.exclusions, firstFeature: tree.top?.feature) }
        } catch {
            cache.remove(session.id, slot: slot)
            cache.unpin(slot)
            throw error
        }
        if let assignment = start.rollout {
            rollouts?.sessionStarted(session.id, assignment, tree: tree, catalog: catalog, context: context)
        }
        _ = session.cachedStateDocument()
        slot.state.withLock { $0.session = session }
        cache.unpin(slot)
        guard let link = input.link else { return (session, token) }
        // The link is the session's first action (version 1), applied and committed like any
        // other: its user-state changes are kept, the log shows it, and a link whose `when` does
        // not hold yet becomes the session's pendingLink.
        let followed = ServerReply()
        try apply(FlowAction(type: FlowAction.link, params: ["uri": .string(link)]), to: session.id, token: token,
                  ifMatch: nil, idempotency: nil, reply: followed)
        switch followed.wait() {
        case .state: break
        case .failed(let error): throw error
        default: throw .linkNotApplied(session.id)
        }
        return (try withSession(session.id, access: .server) { $0 }, token)
    }
}

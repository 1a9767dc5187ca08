// Releases between their routes and the store: create one from a submission, test it, approve,
// activate (at once, or rolled out to a share of new sessions), roll it back; the registry of
// definitions reloaded after each change of what is live.
import FeatureFlags
import FlowEngine
import FlowScenarios
import FlowStore
import HTTPServer
import JSON
import Logging

/// What the release routes do, with the store, the definitions and the rollouts behind them.
///
/// ```swift
/// let releases = ReleaseService(store: store, registry: registry, requireReview: false, rollouts: nil, logger: logger)
/// let release = try releases.create(json, document: text, audit: stamp)   // a draft, tested when it has tests
/// try releases.activate(release.id, untested: false, rollout: nil, audit: stamp)
/// ```
/// Its methods throw the problem a client gets (`ResponseError`): 404 for an unknown release,
/// 409 (403 for a self-approval) for a `ReleaseConflict`, 503 for a database failure.
final class ReleaseService: Sendable {
    /// The rollouts branch's part in releases; nil: this server does not roll releases out (an
    /// activation's `rollout` member is refused as unknown).
    struct Rollouts: Sendable {
        /// Starts rolling release `releaseId` (its versions `flows`) out by the activation's body;
        /// its rollout document, or nil when the body asks for none (`Application.startRollout`).
        var start: @Sendable (_ releaseId: Int, _ flows: [String: Int], _ body: JSONValue?) throws(ResponseError) -> JSONValue?
        /// Ends the rollout of a release rolled back by hand (`RolloutService.stop`).
        var stop: @Sendable (_ releaseId: Int, _ reason: String) throws -> Void
        /// The release with its rollout document as `rollout`, for the documents the routes answer.
        var withRollout: @Sendable (ReleaseRecord) -> ReleaseRecord = { $0 }
    }

    let store: any ReleaseStore & DefinitionStore & RolloutStore
    let registry: DefinitionRegistry
    /// `--require-review`: an activation needs an approval by someone other than the creator.
    let requireReview: Bool
    let rollouts: Rollouts?
    let logger: Logger

    init(store: any ReleaseStore & DefinitionStore & RolloutStore, registry: DefinitionRegistry, requireReview: Bool, rollouts: Rollouts?, logger: Logger) {
        self.store = store
        self.registry = registry
        self.requireReview = requireReview
        self.rollouts = rollouts
        self.logger = logger
    }

    /// Whether an activation may carry a `rollout` plan.
    var rollsOut: Bool { rollouts != nil }

    /// The release as the routes show it: with its rollout document, when it has one.
    func shown(_ release: ReleaseRecord) -> ReleaseRecord {
        rollouts?.withRollout(release) ?? release
    }

    /// Every release, as shown, oldest first.
    func all() throws(ResponseError) -> [ReleaseRecord] {
        try Application.store(logger) { try store.releases() }.map(shown)
    }

    /// Release `id` as stored (404 when there is none).
    func release(_ id: Int) throws(ResponseError) -> ReleaseRecord {
        try Self.stored(id, in: store, logger: logger)
    }

    static func stored(_ id: Int, in store: any ReleaseStore & DefinitionStore & RolloutStore, logger: Logger) throws(ResponseError) -> ReleaseRecord {
        guard let release = try Application.store(logger, { try store.release(id: id) }) else {
            throw Self.notFound(id)
        }
        return release
    }

    static func notFound(_ id: Int) -> ResponseError {
        ResponseError(.problem(404, "There is no release \(id).", type: ProblemType.notFound))
    }

    /// Stores a draft from `json` (its text `document` kept as sent), its new flow versions in the
    /// registry (not live), and runs its tests when it has any: the release as shown.
    func create(_ json: JSONValue, document: String, audit: AuditStamp) throws(ResponseError) -> ReleaseRecord {
        let submission = try ReleaseSubmission.read(json, registry: registry)
        // Each flow gets its next version; the store refuses when another was stored meanwhile.
        let latest = Dictionary(registry.summary.map { ($0.name, $0.latest) }, uniquingKeysWith: { $1 })
        var versions: [String: Int] = [:]
        for name in submission.flows.keys { versions[name] = (latest[name] ?? 0) + 1 }
        try submission.checkExperiments(versions: versions, registry: registry)
        let record = ReleaseRecord(
            description: submission.description, state: .draft, document: document,
            versions: versions, flags: submission.flags.mapValues(\.text), experiments: submission.experiments.mapValues(\.text),
            base: registry.liveVersions, createdBy: audit.credential, createdAt: Timestamp.string())
        var release = try Self.releaseCall(logger) {
            try store.createRelease(record, texts: submission.flows.mapValues(\.text), audit: audit)
        }
        for (name, flow) in submission.flows {
            registry.add(name: name, version: versions[name] ?? 0, definition: flow.definition, text: flow.text,
                         createdAt: release.createdAt, live: false)
        }
        if let tested = try runTests(release, suites: submission.suites) {
            release = tested
        }
        return shown(release)
    }

    /// Runs release `id`'s tests (`suites`, or nil: the ones stored with it) and records the result.
    func test(_ id: Int, suites given: [FlowScenarioSuite]?) throws(ResponseError) -> ReleaseRecord {
        let release = try self.release(id)
        let suites = given ?? ReleaseSubmission.storedSuites(release)
        guard !suites.isEmpty else {
            throw ResponseError(.problem(422, "Release \(release.id) has no flow tests to run; send {\"tests\": [suite, …]}.",
                                         type: ProblemType.invalidScenarios))
        }
        return shown(try runTests(release, suites: suites) ?? release)
    }

    func approve(_ id: Int, audit: AuditStamp) throws(ResponseError) -> ReleaseRecord {
        guard let release = try Self.releaseCall(logger, { try store.approveRelease(id: id, audit: audit) }) else {
            throw Self.notFound(id)
        }
        return shown(release)
    }

    /// Makes release `id` live for everybody, or, with a `rollout` plan (the activation's body,
    /// checked by the route), starts rolling it out to a share of new sessions.
    func activate(_ id: Int, untested: Bool, body: JSONValue?, audit: AuditStamp) throws(ResponseError) -> ReleaseRecord {
        let rules = ReleaseActivationRules(allowUntested: untested, requireApproval: requireReview)
        if let rollouts, let plan = body?.objectValue?["rollout"], plan != .null {
            return try beginRollout(id, rules: rules, body: body, rollouts: rollouts, audit: audit)
        }
        // A release rolling out goes to everybody through its rollout (POST …/rollout to 100),
        // which ends the rollout with it; activating it here would leave the rollout running.
        if rollouts != nil, try self.release(id).state == .rollingOut {
            throw ResponseError(.problem(409, "Release \(id) is rolling out; raise it to everybody with POST /v1/releases/\(id)/rollout "
                                             + "{\"percentage\": 100}, or roll it back.", type: ProblemType.releaseState))
        }
        guard let release = try Self.releaseCall(logger, { try store.activateRelease(id: id, rules: rules, audit: audit) }) else {
            throw Self.notFound(id)
        }
        try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
        return shown(release)
    }

    private func beginRollout(_ id: Int, rules: ReleaseActivationRules, body: JSONValue?, rollouts: Rollouts,
                              audit: AuditStamp) throws(ResponseError) -> ReleaseRecord {
        // Refused before the rollout starts when activation would be (tests, review, stale); the
        // store checks again when it marks the release rolling out.
        let current = try self.release(id)
        try Self.releaseCall(logger) { try ReleaseRules.checkActivation(current, live: registry.liveVersions, rules: rules) }
        guard let document = try rollouts.start(id, current.versions, body) else {
            throw ResponseError(.problem(400, "rollout: expected a rollout plan.", type: ProblemType.malformed))
        }
        // The rollout row and the release's state are two writes: when the release cannot be
        // marked rolling out (another node made it stale meanwhile, the database failed), the
        // rollout just started is ended, so no session goes to a release that is not rolling out.
        let marking: ReleaseRecord?
        do throws(ResponseError) {
            marking = try Self.releaseCall(logger, { try store.beginReleaseRollout(id: id, rules: rules, audit: audit) })
        } catch {
            _ = try? rollouts.stop(id, "the release could not be marked rolling out")
            throw error
        }
        guard var marked = marking else {
            _ = try? rollouts.stop(id, "the release is gone")
            throw Self.notFound(id)
        }
        marked.rollout = document.jsonText
        return marked
    }

    /// Rolls release `id` back: its rollout ended first when it is rolling out, the experiments
    /// it started stopped, the versions before it live again.
    func rollBack(_ id: Int, reason: String?, audit: AuditStamp) throws(ResponseError) -> ReleaseRecord {
        let current = try self.release(id)
        let stopped = Self.stoppedExperiments(current, registry: registry)
        // The rollout first: once it is ended no new session goes to the release, and when the
        // release's rollback then fails, calling rollback again finishes it (a release still
        // rolling out may be rolled back; its rollout is already ended).
        if current.state == .rollingOut, let rollouts {
            do {
                try rollouts.stop(id, reason ?? "")
            } catch {
                throw SessionService.storageFailure(error, logger: logger)
            }
        }
        guard let release = try Self.releaseCall(logger, {
            try store.rollbackRelease(id: id, reason: reason, stopped: stopped, audit: audit)
        }) else {
            throw Self.notFound(id)
        }
        try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
        return shown(release)
    }

    /// What `RolloutService.Hooks` does to releases: a rollout reaching 100 % activates its
    /// release fully (tests and review were checked when it began), a guardrail that failed
    /// rolls it back with the verdict as its reason and the figures in the audit log's detail.
    static func rolloutHooks(store: any ReleaseStore & DefinitionStore & RolloutStore, registry: DefinitionRegistry, logger: Logger)
        -> (activate: @Sendable (Int) throws -> Void, rollBack: @Sendable (Int, String, String) throws -> Void) {
        let activate: @Sendable (Int) throws -> Void = { id in
            _ = try store.activateRelease(id: id, rules: ReleaseActivationRules(allowUntested: true), audit: AuditStamp(credential: "rollout:\(id)"))
            try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
        }
        let rollBack: @Sendable (Int, String, String) throws -> Void = { id, reason, detail in
            let stopped = try store.release(id: id).map { Self.stoppedExperiments($0, registry: registry) } ?? [:]
            _ = try store.rollbackRelease(id: id, reason: reason, stopped: stopped, audit: AuditStamp(credential: "rollout:\(id)", detail: detail))
            try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
        }
        return (activate, rollBack)
    }

    /// Reads the definitions again (`DefinitionRegistry.reload(from:)`: the flow versions not
    /// held yet, and the rest) and swaps the registry's content in one step, so a session
    /// created during an activation sees all the old versions or all the new ones.
    static func reloadDefinitions(store: any ReleaseStore & DefinitionStore & RolloutStore, registry: DefinitionRegistry, logger: Logger) throws(ResponseError) {
        let skipped = try Application.store(logger) { try registry.reload(from: store) }
        for problem in skipped { logger.error("stored definition skipped", metadata: ["problem": "\(problem)"]) }
    }

    /// A store call on a release: a `ReleaseConflict` is its 409 (403 for a self-approval).
    static func releaseCall<T>(_ logger: Logger, _ call: () throws -> T) throws(ResponseError) -> T {
        do {
            return try call()
        } catch let conflict as ReleaseConflict {
            let status = conflict.code == "self-approval" ? 403 : 409
            throw ResponseError(.problem(status, conflict.detail, type: ProblemType.prefix + conflict.code))
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
    }

    /// Runs `suites` on the release's versions over the live rest, with the live flags and the
    /// release's own, and records the result (`ready` when all pass, else `failed`). Nil when
    /// there is nothing to run (the release stays as it is).
    private func runTests(_ release: ReleaseRecord, suites: [FlowScenarioSuite]) throws(ResponseError) -> ReleaseRecord? {
        guard suites.contains(where: { !$0.scenarios.isEmpty }) else { return nil }
        let live = registry.liveVersions
        var versions = live
        for (name, version) in release.versions { versions[name] = version }
        guard let catalog = registry.catalog(for: versions) else {
            throw ResponseError(.problem(503, "A flow version of release \(release.id) is not loaded on this node yet; try again.",
                                         type: ProblemType.definitionsLoading))
        }
        var flags = Dictionary(registry.allFlags.map { ($0.key, $0.value.definition) }, uniquingKeysWith: { $1 })
        for (key, text) in release.flags {
            if let json = try? JSONParser.parse(text, limits: .storedData), let flag = try? FlagDefinition(json: json) { flags[key] = flag }
        }
        let flagValues = ScenarioFlags.values(flags.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        let testedVersions = versions
        var results: [ScenarioResult] = []
        for suite in suites {
            results += suite.run(flags: flagValues) { client in
                guard let client, client.features != nil else { return .catalog(catalog) }
                switch registry.fit(client, live: testedVersions) {
                case .fits(let fitting, _):
                    return registry.catalog(for: fitting).map { .catalog($0) } ?? .fitting(catalog, client: client)
                case .unsupported(let missing, _):
                    return .unsupportedClient(missing: missing)
                }
            }
        }
        var writer = JSONWriter(capacity: 256 + results.count * 128)
        writer.beginObject()
        writer.writeKey("passed")
        writer.writeInteger(results.filter(\.passed).count)
        writer.writeKey("failed")
        writer.writeInteger(results.filter { !$0.passed }.count)
        writer.writeKey("flowVersions")
        writer.writeRawValue(DefinitionRegistry.encode(versions))
        writer.writeKey("scenarios")
        writer.beginArray()
        for result in results { result.write(into: &writer) }
        writer.endArray()
        writer.endObject()
        let text = String(decoding: writer.takeBytes(), as: UTF8.self)
        let passed = results.allSatisfy(\.passed)
        return try Self.releaseCall(logger) {
            try store.recordReleaseTests(id: release.id, tests: text, passed: passed, base: live)
        }
    }
}

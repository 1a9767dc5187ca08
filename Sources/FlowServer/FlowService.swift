// Flow definitions between their routes and the store: read live and past versions, store a new
// version (checked alone and with the live rest), make a version live, and test one.
import FlowEngine
import FlowScenarios
import FlowStore
import HTTPServer
import JSON
import Logging

/// What the flow routes do, with the store and the registry of definitions behind them.
///
/// ```swift
/// let flows = FlowService(store: store, registry: registry, logger: logger)
/// let stored = try flows.store(name: "onboarding", json: json, text: text, activate: true, audit: stamp)
/// stored.version   // 2, live
/// ```
/// Its methods throw the problem a client gets: 404 for an unknown flow or version, 422
/// `invalid-definition` with the pointer of each problem, 503 for a database failure.
final class FlowService: Sendable {
    /// A version just stored or made live, and what it says beside it.
    struct VersionChange: Sendable {
        var name: String
        var version: Int
        var live: Bool
        /// Set when the version was made live: the clients in the field it affects (nil inside:
        /// they could not be read).
        var impact: [UInt8]??
        /// The definition's warnings, then running experiments that pin another version.
        var warnings: [JSONValue]
    }

    let store: any DefinitionStore & SessionRecordStore
    let registry: DefinitionRegistry
    let logger: Logger

    init(store: any DefinitionStore & SessionRecordStore, registry: DefinitionRegistry, logger: Logger) {
        self.store = store
        self.registry = registry
        self.logger = logger
    }

    /// Every flow, with its live and latest version.
    var summary: [(name: String, live: Int?, latest: Int)] { registry.summary }

    /// The live version of flow `name`.
    func live(_ name: String) throws(ResponseError) -> (flow: DefinitionRegistry.StoredFlow, version: Int) {
        guard let version = registry.liveVersions[name], let stored = registry.flow(name, version: version) else {
            throw ResponseError(.problem(404, "There is no live flow \(name).", type: ProblemType.notFound))
        }
        return (stored, version)
    }

    /// Version `version` of flow `name`, and whether it is live.
    func version(_ name: String, _ version: Int) throws(ResponseError) -> (flow: DefinitionRegistry.StoredFlow, live: Bool) {
        guard let stored = registry.flow(name, version: version) else {
            throw ResponseError(.problem(404, "Flow \(name) has no version \(version).", type: ProblemType.notFound))
        }
        return (stored, registry.liveVersions[name] == version)
    }

    /// Stores `json` (sent as `text`) as the next version of flow `name`, live when `activate`.
    func store(name: String, json: JSONValue, text: String, activate: Bool, audit: AuditStamp) throws(ResponseError) -> VersionChange {
        let definition: FlowDefinition
        do throws(DefinitionProblems) {
            definition = try FlowDefinition(json: json, expectedName: name, uploading: true)
        } catch {
            throw Self.invalidDefinition("flow \(name)", error.problems)
        }
        let problems = registry.liveCatalog(replacingWith: definition).problems(for: name, flags: FlagValues.live(registry))
        guard problems.errors.isEmpty else { throw Self.invalidDefinition("flow \(name)", problems.errors) }
        let stored: FlowVersionStamp
        do {
            stored = try store.addFlowVersion(name: name, definition: text, activate: activate, audit: audit)
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
        let version = stored.version
        // The time as stored: a reload keeps the version only when the store says the same of it.
        registry.add(name: name, version: version, definition: definition, text: text, createdAt: stored.createdAt, live: activate)
        let impact = activate ? Application.activationImpact(flow: name, registry: registry, store: store, logger: logger) : nil
        return VersionChange(name: name, version: version, live: registry.liveVersions[name] == version,
                             impact: activate ? .some(impact) : nil,
                             warnings: Self.definitionWarnings(problems.warnings)
                                 + (activate ? Application.experimentPinWarnings(flows: [name], registry: registry) : []))
    }

    /// Makes version `version` of flow `name` live, when it fits the live rest.
    func activate(name: String, version: Int, audit: AuditStamp) throws(ResponseError) -> VersionChange {
        let stored = try self.version(name, version).flow
        let problems = registry.liveCatalog(replacingWith: stored.definition).problems(for: name, flags: FlagValues.live(registry))
        guard problems.errors.isEmpty else { throw Self.invalidDefinition("flow \(name) version \(version)", problems.errors) }
        do {
            _ = try store.activateFlow(name: name, version: version, audit: audit)
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
        registry.setLive(name: name, version: version)
        let impact = Application.activationImpact(flow: name, registry: registry, store: store, logger: logger)
        return VersionChange(name: name, version: version, live: true, impact: .some(impact),
                             warnings: Self.definitionWarnings(problems.warnings)
                                 + Application.experimentPinWarnings(flows: [name], registry: registry))
    }

    /// Runs `suite` on version `version` of flow `name` with the live versions of the other
    /// flows and the live flags, as a session created once it is live would have them (no
    /// experiment pins): the flow versions tested, and each scenario's result.
    func test(name: String, version: Int, suite: FlowScenarioSuite) throws(ResponseError)
        -> (versions: [String: Int], results: [ScenarioResult]) {
        let stored = try self.version(name, version).flow
        var versions = registry.liveVersions
        versions[name] = version
        let catalog = registry.liveCatalog(replacingWith: stored.definition)
        let testedVersions = versions
        let registry = registry
        // A scenario's client runs what a session of that client would once the version is
        // live: the versions it renders, falling back to earlier activated ones, or nothing.
        let results = suite.run(flags: ScenarioFlags.values(registry.allFlags.map { ($0.key, $0.value.definition) })) { client in
            guard let client, client.features != nil else { return .catalog(catalog) }
            switch registry.fit(client, live: testedVersions) {
            case .fits(let fitting, _):
                return registry.catalog(for: fitting).map { .catalog($0) } ?? .fitting(catalog, client: client)
            case .unsupported(let missing, _):
                return .unsupportedClient(missing: missing)
            }
        }
        return (versions, results)
    }

    /// What may be a mistake in a definition but does not refuse it (a condition on a flag that
    /// does not exist yet), as `{pointer, detail}`, shown beside the stored version.
    static func definitionWarnings(_ warnings: [DefinitionProblem]) -> [JSONValue] {
        warnings.map { ["pointer": .string($0.path), "detail": .string($0.message)] }
    }

    /// A 422 listing every problem of a definition with its JSON Pointer.
    static func invalidDefinition(_ what: String, _ problems: [DefinitionProblem]) -> ResponseError {
        ResponseError(.problem(
            422, "The definition of \(what) has \(problems.count) problem\(problems.count == 1 ? "" : "s"); see errors.",
            type: ProblemType.invalidDefinition,
            errors: problems.map { .init(pointer: $0.path, detail: $0.message) }))
    }
}

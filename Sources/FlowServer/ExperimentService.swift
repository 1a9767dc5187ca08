// Experiments between their routes and the store: read them, store one (PUT), change one along
// its lifecycle (PATCH: stop, restart, conclude), and compute its report.
import ExperimentStats
import FeatureFlags
import FlowStore
import HTTPServer
import JSON
import Logging

/// What the experiment routes do, with the store and the registry of definitions behind them.
///
/// ```swift
/// let experiments = ExperimentService(store: store, registry: registry, logger: logger)
/// let shown = try experiments.patch(key: "onboarding-length", patch: ["status": "stopped"], ifMatch: nil, audit: stamp)
/// shown.definition.status   // .stopped
/// ```
/// Its methods throw the problem a client gets: 404, 409 `invalid-transition` or
/// `concurrent-change`, 412, 422 `invalid-definition`, 503 for a database failure.
final class ExperimentService: Sendable {
    /// An experiment as the routes show it.
    struct Shown: Sendable {
        var key: String
        var definition: ExperimentDefinition
        var text: String
        var revision: Int
        var updatedAt: String
    }

    /// The figures of a report, and what it compares.
    struct Report {
        var key: String
        var experiment: ExperimentDefinition
        /// The metric converted on, and every metric there is.
        var metric: String
        var metrics: [String]
        /// Variants in the definition's order, then any that sessions saw under an earlier revision.
        var order: [String]
        /// The index in `order` of the variant the others are compared with.
        var baseline: Int
        var figures: [ExperimentVariantCounts]
        var analysis: ExperimentAnalysis
    }

    /// How many times a PATCH re-reads the stored experiment when another change came between
    /// its read and its compare-and-set write, before answering 409.
    static let patchAttempts = 3

    /// The metric a report converts on unless `?metric=` names another.
    static let defaultMetric = "onboarded"

    let store: any DefinitionStore
    let registry: DefinitionRegistry
    let logger: Logger

    init(store: any DefinitionStore, registry: DefinitionRegistry, logger: Logger) {
        self.store = store
        self.registry = registry
        self.logger = logger
    }

    /// Every experiment, by key.
    var all: [(key: String, value: DefinitionRegistry.Keyed<ExperimentDefinition>)] { registry.allExperiments }

    /// Experiment `key` (404 when there is none).
    func experiment(_ key: String) throws(ResponseError) -> DefinitionRegistry.Keyed<ExperimentDefinition> {
        guard let experiment = registry.experiment(key) else {
            throw ResponseError(.problem(404, "There is no experiment \(key).", type: ProblemType.notFound))
        }
        return experiment
    }

    /// Stores an uploaded experiment as its next revision: whether it is new, and it as shown.
    func store(_ upload: DefinitionUpload, audit: AuditStamp) throws(ResponseError) -> (created: Bool, shown: Shown) {
        let (key, text) = (upload.key, upload.text)
        let definition: ExperimentDefinition
        do throws(InvalidDefinition) {
            definition = try ExperimentDefinition(json: upload.json)
        } catch {
            throw Application.invalidFlagDefinition("experiment \(key)", error.problems)
        }
        try Application.checkPins(definition, key: key, registry: registry)
        let previous = registry.experiment(key)
        try Application.checkTransition(key: key, from: previous?.definition.status, to: definition.status)
        try Application.refuseConclusionByPut(key: key, from: previous?.definition.status, to: definition.status)
        let revision: Int
        if let previous, let action = Application.lifecycleAction(from: previous.definition.status, to: definition.status) {
            // A start or a stop is audited by its name, compare-and-set on the revision the move
            // was checked against.
            var stamp = audit
            stamp.action = action
            let written = try Application.store(logger) {
                try store.changeExperiment(key: key, definition: text, revision: previous.revision, activating: [:], audit: stamp)
            }
            guard let written else {
                throw ResponseError(.problem(409, "Experiment \(key) changed meanwhile (on another node?); read it again and retry.",
                                             type: ProblemType.concurrentChange))
            }
            revision = written
        } else {
            revision = try Application.store(logger) { try store.putDefinition(.experiment, key: key, definition: text, audit: audit) }
        }
        let now = Timestamp.string()
        registry.setExperiment(key, .init(definition: definition, text: text, revision: revision, updatedAt: now))
        return (previous == nil, Shown(key: key, definition: definition, text: text, revision: revision, updatedAt: now))
    }

    /// The stored definition with `patch` merged in (RFC 7396), validated as a PUT is, moved
    /// along the lifecycle (409 `invalid-transition` otherwise) and stored as the next revision;
    /// a conclusion makes the winner's pins live in the same transaction. `ifMatch` makes it
    /// conditional on the revision (412 when it moved).
    func patch(key: String, patch: JSONObject, ifMatch: IfMatch?, audit: AuditStamp) throws(ResponseError) -> Shown {
        for _ in 1...Self.patchAttempts {
            // The stored experiment, not this node's copy: another node may have changed it, and
            // the compare-and-set below is on the revision read here.
            let records = try Application.store(logger) { try store.allDefinitions(.experiment) }
            guard let stored = records.first(where: { $0.key == key }) else {
                throw ResponseError(.problem(404, "There is no experiment \(key); create it with PUT /v1/experiments/\(key).",
                                             type: ProblemType.notFound))
            }
            if let ifMatch, !ifMatch.matches(stored.revision) {
                var response = Response.problem(
                    412, "Experiment \(key) is at revision \(stored.revision), not \(ifMatch); read it again before changing it.",
                    type: ProblemType.versionMismatch, extensions: [("currentRevision", String(stored.revision))])
                response.headers["ETag"] = "\"\(stored.revision)\""
                throw ResponseError(response)
            }
            let storedJSON = (try? JSONParser.parse(stored.definition, limits: .storedData)) ?? .object(JSONObject())
            // A stored definition that no longer reads (an older server's) is treated as running.
            let before = (try? ExperimentDefinition(json: storedJSON))?.status ?? .running
            let merged = storedJSON.mergePatched(with: .object(patch))
            if merged == storedJSON, let unchanged = try? ExperimentDefinition(json: storedJSON) {
                // Nothing changes (a repeated stop, a retried conclusion): no new revision, no
                // audit entry, and no transition to check (concluded → concluded is no move).
                return Shown(key: key, definition: unchanged, text: stored.definition, revision: stored.revision, updatedAt: stored.updatedAt)
            }
            // The move is checked before the rest: `{"status": "running"}` on a concluded
            // experiment is an illegal move (409), not a winner left on a running one (422).
            let statusValue = merged.objectValue?["status"]
            if let after = statusValue.map({ $0.stringValue.flatMap(ExperimentDefinition.Status.init(rawValue:)) }) ?? .running {
                try Application.checkTransition(key: key, from: before, to: after)
            }
            let definition: ExperimentDefinition
            do throws(InvalidDefinition) {
                definition = try ExperimentDefinition(json: merged)
            } catch {
                throw Application.invalidFlagDefinition("experiment \(key) once patched", error.problems)
            }
            try Application.checkTransition(key: key, from: before, to: definition.status)
            if merged == storedJSON {
                // Nothing changes (a repeated stop): no new revision, no audit entry.
                return Shown(key: key, definition: definition, text: stored.definition, revision: stored.revision, updatedAt: stored.updatedAt)
            }
            try Application.checkPins(definition, key: key, registry: registry)
            var writer = JSONWriter(capacity: stored.definition.utf8.count + 64)
            writer.writeValue(merged)
            let text = String(decoding: writer.takeBytes(), as: UTF8.self)
            let activating = before != .concluded ? definition.winningVariant?.pinnedFlows ?? [:] : [:]
            var stamp = audit
            stamp.action = Application.lifecycleAction(from: before, to: definition.status) ?? AuditAction.put(.experiment)
            let written = try Application.store(logger) {
                try store.changeExperiment(key: key, definition: text, revision: stored.revision, activating: activating, audit: stamp)
            }
            guard let revision = written else {
                if ifMatch != nil {
                    throw ResponseError(.problem(
                        412, "Experiment \(key) changed while this patch was applied; read it again before changing it.",
                        type: ProblemType.versionMismatch))
                }
                continue
            }
            let now = Timestamp.string()
            registry.setExperiment(key, .init(definition: definition, text: text, revision: revision, updatedAt: now))
            for (flow, version) in activating { registry.setLive(name: flow, version: version) }
            return Shown(key: key, definition: definition, text: text, revision: revision, updatedAt: now)
        }
        throw ResponseError(.problem(409, "Experiment \(key) kept changing while this patch was applied; try again.",
                                     type: ProblemType.concurrentChange))
    }

    /// Experiment `key`'s report on `metric` (nil: onboarded) against `baseline` (nil: the
    /// first variant). A metric no session of the experiment has reached is 400 with the metrics
    /// there are: every comparison on it would be an error, and a typo must not read as "nobody
    /// got there".
    func report(key: String, metric: String?, baseline: String?) throws(ResponseError) -> Report {
        let experiment = try self.experiment(key).definition
        let counts = try Application.store(logger) { try store.experimentReport(key) }
        var order = experiment.variants.map(\.key)
        order += counts.keys.filter { !order.contains($0) }.sorted()
        let figures = order.map { counts[$0] ?? ExperimentVariantCounts() }

        let metrics = [Self.defaultMetric] + Set(figures.flatMap(\.funnel.keys)).subtracting([Self.defaultMetric]).sorted()
        let metric = metric ?? Self.defaultMetric
        guard metrics.contains(metric) else {
            throw ResponseError(.problem(
                400, "No session of experiment \(key) has reached \(metric.prefix(100)); the metrics are \(metrics.joined(separator: ", ")).",
                type: ProblemType.malformed,
                errors: [.init(pointer: "metric", detail: "must be onboarded or a feature a session of the experiment showed: \(metrics.joined(separator: ", "))")]))
        }
        let baselineKey = baseline ?? order[0]
        guard let baselineIndex = order.firstIndex(of: baselineKey) else {
            throw ResponseError(.problem(
                400, "Experiment \(key) has no variant \(baselineKey.prefix(100)); its variants are \(order.joined(separator: ", ")).",
                type: ProblemType.malformed,
                errors: [.init(pointer: "baseline", detail: "must be one of the variants: \(order.joined(separator: ", "))")]))
        }

        // Unweighted variants share the traffic equally; variants no longer configured have no weight.
        let configured = experiment.weights ?? Array(repeating: 1 / Double(experiment.variants.count), count: experiment.variants.count)
        let analysis = ExperimentAnalysis(variants: order.enumerated().map { index, variant in
            let counts = figures[index]
            let conversions = metric == Self.defaultMetric ? counts.onboarded : counts.funnel[metric] ?? 0
            return .init(key: variant, units: counts.sessions, conversions: conversions,
                         weight: index < configured.count ? configured[index] : nil)
        }, baseline: baselineIndex)
        return Report(key: key, experiment: experiment, metric: metric, metrics: metrics, order: order, baseline: baselineIndex,
                      figures: figures, analysis: analysis)
    }
}

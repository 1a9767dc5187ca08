// The experiment report: per-variant counts, and the statistics a team decides on (ExperimentStats).
import ExperimentStats
import FeatureFlags
import FlowStore
import HTTPServer
import JSON

extension Application {
    /// The metric a report converts on unless `?metric=` names another.
    static let defaultReportMetric = "onboarded"

    /// `GET /v1/experiments/{key}/report[?metric=onboarded|FEATURE][&baseline=VARIANT]`.
    ///
    /// Variants come in the definition's order, then any that sessions saw under an earlier
    /// revision. A conversion is, for `onboarded`, a user who completed onboarding in a session
    /// of the variant; for a feature, a session that showed it on top. A metric no session of the
    /// experiment has reached is 400 with the metrics there are: every comparison on it would be
    /// an error, and a typo must not read as "nobody got there".
    static func experimentReport(_ request: Request, key: String, experiment: ExperimentDefinition,
                                 counts: [String: ExperimentVariantCounts]) throws(ResponseError) -> Response {
        var order = experiment.variants.map(\.key)
        order += counts.keys.filter { !order.contains($0) }.sorted()
        let figures = order.map { counts[$0] ?? ExperimentVariantCounts() }

        let metrics = [defaultReportMetric] + Set(figures.flatMap(\.funnel.keys)).subtracting([defaultReportMetric]).sorted()
        let metric = request.queryValue("metric") ?? defaultReportMetric
        guard metrics.contains(metric) else {
            throw ResponseError(.problem(
                400, "No session of experiment \(key) has reached \(metric.prefix(100)); the metrics are \(metrics.joined(separator: ", ")).",
                type: ProblemType.malformed,
                errors: [.init(pointer: "metric", detail: "must be onboarded or a feature a session of the experiment showed: \(metrics.joined(separator: ", "))")]))
        }
        let baselineKey = request.queryValue("baseline") ?? order[0]
        guard let baseline = order.firstIndex(of: baselineKey) else {
            throw ResponseError(.problem(
                400, "Experiment \(key) has no variant \(baselineKey.prefix(100)); its variants are \(order.joined(separator: ", ")).",
                type: ProblemType.malformed,
                errors: [.init(pointer: "baseline", detail: "must be one of the variants: \(order.joined(separator: ", "))")]))
        }

        // Unweighted variants share the traffic equally; variants no longer configured have no weight.
        let configured = experiment.weights ?? Array(repeating: 1 / Double(experiment.variants.count), count: experiment.variants.count)
        let analysis = ExperimentAnalysis(variants: order.enumerated().map { index, variant in
            let counts = figures[index]
            let conversions = metric == defaultReportMetric ? counts.onboarded : counts.funnel[metric] ?? 0
            return .init(key: variant, units: counts.sessions, conversions: conversions,
                         weight: index < configured.count ? configured[index] : nil)
        }, baseline: baseline)

        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("experiment")
        writer.writeString(key)
        // Where it is in its lifecycle: only a running experiment takes new sessions.
        writer.writeKey("status")
        writer.writeString(experiment.status.rawValue)
        writer.writeKey("winner")
        if let winner = experiment.winner { writer.writeString(winner) } else { writer.writeNull() }
        writer.writeKey("metric")
        writer.writeString(metric)
        writer.writeKey("metrics")
        writer.beginArray()
        for name in metrics { writer.writeString(name) }
        writer.endArray()
        writer.writeKey("baseline")
        writer.writeString(order[baseline])
        writer.writeKey("variants")
        writer.beginArray()
        for (index, variant) in order.enumerated() {
            writer.beginObject()
            writer.writeKey("key")
            writer.writeString(variant)
            writer.writeKey("sessions")
            writer.writeInteger(figures[index].sessions)
            writer.writeKey("onboarded")
            writer.writeInteger(figures[index].onboarded)
            // Bucketed into this variant, not enrolled: their client cannot render the experiment.
            writer.writeKey("excluded")
            writer.writeInteger(figures[index].excluded)
            writer.writeKey("funnel")
            writer.beginObject()
            for (feature, sessions) in figures[index].funnel.sorted(by: { $0.key < $1.key }) {
                writer.writeKey(feature)
                writer.writeInteger(sessions)
            }
            writer.endObject()
            analysis.writeMembers(ofVariant: index, to: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("srm")
        analysis.writeSampleRatio(to: &writer)
        writer.writeKey("excluded")
        writer.writeInteger(figures.reduce(0) { $0 + $1.excluded })
        writer.endObject()
        return .json(writer.takeBytes())
    }
}

// The answer of the experiment report: per-variant counts, and the statistics a team decides on.
import ExperimentStats
import JSON

/// `{experiment, status, winner, metric, metrics, baseline, variants: [{key, sessions, onboarded,
/// excluded, funnel, …statistics}], srm, excluded}`.
struct ExperimentReportAnswer: JSONAnswer {
    let report: ExperimentService.Report

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("experiment")
        writer.writeString(report.key)
        // Where it is in its lifecycle: only a running experiment takes new sessions.
        writer.writeKey("status")
        writer.writeString(report.experiment.status.rawValue)
        writer.writeKey("winner")
        if let winner = report.experiment.winner { writer.writeString(winner) } else { writer.writeNull() }
        writer.writeKey("metric")
        writer.writeString(report.metric)
        writer.writeKey("metrics")
        writer.beginArray()
        for name in report.metrics { writer.writeString(name) }
        writer.endArray()
        writer.writeKey("baseline")
        writer.writeString(report.order[report.baseline])
        writer.writeKey("variants")
        writer.beginArray()
        for (index, variant) in report.order.enumerated() {
            writer.beginObject()
            writer.writeKey("key")
            writer.writeString(variant)
            writer.writeKey("sessions")
            writer.writeInteger(report.figures[index].sessions)
            writer.writeKey("onboarded")
            writer.writeInteger(report.figures[index].onboarded)
            // Bucketed into this variant, not enrolled: their client cannot render the experiment.
            writer.writeKey("excluded")
            writer.writeInteger(report.figures[index].excluded)
            writer.writeKey("funnel")
            writer.beginObject()
            for (feature, sessions) in report.figures[index].funnel.sorted(by: { $0.key < $1.key }) {
                writer.writeKey(feature)
                writer.writeInteger(sessions)
            }
            writer.endObject()
            report.analysis.writeMembers(ofVariant: index, to: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("srm")
        report.analysis.writeSampleRatio(to: &writer)
        writer.writeKey("excluded")
        writer.writeInteger(report.figures.reduce(0) { $0 + $1.excluded })
        writer.endObject()
    }
}

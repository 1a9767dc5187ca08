// The answer of the replay routes: the report of a replay.
import FlowEngine
import JSON

/// `{versions, since, days, sample, durationMs, totals: {sessions, same, diverged, refused,
/// deadEnd, skipped}, flows: {name: {sessions, same, diverged, refused, deadEnd, notReached,
/// firstDivergence: [{screen, replayedScreen, count}], refusals: [{screen, action, code,
/// count}], deadEnds: [{screen, count}]}}}`, lists most frequent first.
struct ReplayReportAnswer: JSONAnswer {
    let outcome: ReplayOutcome

    var capacity: Int { 1024 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("versions")
        writer.writeRawValue(DefinitionRegistry.encode(outcome.replay.versions))
        writer.writeKey("since")
        writer.writeString(outcome.since)
        writer.writeKey("days")
        writer.writeInteger(outcome.replay.days)
        writer.writeKey("sample")
        writer.writeInteger(outcome.replay.sample)
        writer.writeKey("durationMs")
        writer.writeNumber((outcome.milliseconds * 10).rounded() / 10)
        writer.writeKey("totals")
        writer.beginObject()
        for (key, value) in [("sessions", outcome.report.sessions), ("same", outcome.report.same), ("diverged", outcome.report.diverged),
                             ("refused", outcome.report.refused), ("deadEnd", outcome.report.deadEnd), ("skipped", outcome.report.skipped)] {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        writer.endObject()
        writer.writeKey("flows")
        writer.beginObject()
        for (flow, counts) in outcome.report.flows.sorted(by: { $0.key < $1.key }) where counts.sessions > 0 {
            writer.writeKey(flow)
            writer.beginObject()
            for (key, value) in [("sessions", counts.sessions), ("same", counts.same), ("diverged", counts.diverged),
                                 ("refused", counts.refused), ("deadEnd", counts.deadEnd), ("notReached", counts.notReached)] {
                writer.writeKey(key)
                writer.writeInteger(value)
            }
            writer.writeKey("firstDivergence")
            writer.beginArray()
            for (divergence, count) in counts.firstDivergence.sorted(by: { ($1.value, $0.key.screen.feature, $0.key.replayedScreen?.feature ?? "")
                < ($0.value, $1.key.screen.feature, $1.key.replayedScreen?.feature ?? "") }) {
                writer.beginObject()
                writer.writeKey("screen")
                writer.writeString(divergence.screen.feature)
                writer.writeKey("replayedScreen")
                writer.writeOptionalString(divergence.replayedScreen?.feature)
                writer.writeKey("count")
                writer.writeInteger(count)
                writer.endObject()
            }
            writer.endArray()
            writer.writeKey("refusals")
            writer.beginArray()
            for (refusal, count) in counts.refusals.sorted(by: { ($1.value, $0.key.screen.feature, $0.key.action)
                < ($0.value, $1.key.screen.feature, $1.key.action) }) {
                writer.beginObject()
                writer.writeKey("screen")
                writer.writeString(refusal.screen.feature)
                writer.writeKey("action")
                writer.writeString(refusal.action)
                writer.writeKey("code")
                writer.writeString(refusal.code)
                writer.writeKey("count")
                writer.writeInteger(count)
                writer.endObject()
            }
            writer.endArray()
            writer.writeKey("deadEnds")
            writer.beginArray()
            for (screen, count) in counts.deadEnds.sorted(by: { ($1.value, $0.key.feature) < ($0.value, $1.key.feature) }) {
                writer.beginObject()
                writer.writeKey("screen")
                writer.writeString(screen.feature)
                writer.writeKey("count")
                writer.writeInteger(count)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
    }
}

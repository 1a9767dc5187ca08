// The answer of the rollout routes: a release's rollout document.
import JSON

/// The rollout as `RolloutService.document` makes it (`{releaseId, percentage, steps, …}`).
struct RolloutAnswer: JSONAnswer {
    let document: JSONValue

    func encode(into writer: inout JSONWriter) {
        writer.writeValue(document)
    }
}

// GET /v1/sessions/{id}/actions/available's answer: what the delegate chain would accept now,
// and what each action would answer.
import FlowEngine
import HTTPServer
import JSON

/// `{sessionId, version, from, actions: [{type, handledBy, from, params: [{name, type, required}], interactive,
/// next, nextInteractive?}]}`; `from` is the screen on top, which the listed actions come from (null for the
/// interaction actions, which address the pending interaction rather than a screen). `next` is the state
/// posting the action with no params would answer (null when it needs params); `nextInteractive`, for an
/// action that may run interactively, the state posting it with `"interactive": true` would answer.
struct AvailableActionsAnswer: JSONAnswer {
    let session: LiveSession
    let available: [AvailableAction]
    let predictions: [Prediction]

    var etag: String? { SessionService.etag(session.version) }
    var capacity: Int { 256 + available.count * 2048 }

    /// Written by the engine's ``SessionState/writeAvailableActions(_:predictions:into:)``, which
    /// the engine conformance suite's runners use too, so a port's answer is checked against this one.
    func encode(into writer: inout JSONWriter) {
        session.engineState(user: session.context.user).writeAvailableActions(available, predictions: predictions, into: &writer)
    }
}

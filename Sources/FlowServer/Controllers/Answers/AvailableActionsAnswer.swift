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

    func encode(into writer: inout JSONWriter) {
        let top = session.tree.top
        writer.beginObject()
        writer.writeKey("sessionId")
        writer.writeString(session.id)
        writer.writeKey("version")
        writer.writeInteger(session.version)
        writer.writeKey("from")
        session.tree.writeTop(into: &writer)
        writer.writeKey("actions")
        writer.beginArray()
        for action in available {
            writer.beginObject()
            writer.writeKey("type")
            writer.writeString(action.type)
            writer.writeKey("handledBy")
            writer.writeString(action.handledBy)
            writer.writeKey("from")
            let source: String? = Self.interactionTypes.contains(action.type) ? nil : top?.entryId
            writer.writeOptionalString(source)
            writer.writeKey("params")
            writer.beginArray()
            for param in action.params {
                writer.beginObject()
                writer.writeKey("name")
                writer.writeString(param.name)
                writer.writeKey("type")
                writer.writeString(param.type.rawValue)
                writer.writeKey("required")
                writer.writeBool(param.required)
                writer.endObject()
            }
            writer.endArray()
            writer.writeKey("interactive")
            writer.writeBool(action.interactive)
            writer.writeKey("next")
            Self.writePrediction(predictions.first { $0.action.type == action.type && !$0.action.interactive }, into: &writer)
            if action.interactive && session.tree.interaction == nil {
                writer.writeKey("nextInteractive")
                Self.writePrediction(predictions.first { $0.action.type == action.type && $0.action.interactive }, into: &writer)
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }

    static let interactionTypes: Set<String> = [FlowAction.interactionUpdate, FlowAction.interactionEnd, FlowAction.interactionCancel]

    private static func writePrediction(_ prediction: Prediction?, into writer: inout JSONWriter) {
        if let prediction { writer.writeRawValue(prediction.next.document()) } else { writer.writeNull() }
    }
}

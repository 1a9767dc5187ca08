// GET /v1/sessions/{id}/actions/available: what the delegate chain would accept now.
import FlowEngine
import HTTPServer
import JSON

extension Application {
    static func addAvailableActionsRoute(to router: inout Router, sessions: SessionService) {
        router.route("GET", "/v1/sessions/{id}/actions/available") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let (session, available, predictions) = try sessionCall { () throws(SessionError) in
                try sessions.availableActions(id, token: BearerToken.presented(in: request))
            }
            var response = Response.json(availableActionsDocument(session, available, predictions: predictions))
            response.headers["ETag"] = SessionService.etag(session.version)
            return response
        }
    }

    /// `{sessionId, version, from, actions: [{type, handledBy, from, params: [{name, type, required}], interactive,
    /// next, nextInteractive?}]}`; `from` is the screen on top, which the listed actions come from (null for the
    /// interaction actions, which address the pending interaction rather than a screen). `next` is the state
    /// posting the action with no params would answer (null when it needs params); `nextInteractive`, for an
    /// action that may run interactively, the state posting it with `"interactive": true` would answer.
    static func availableActionsDocument(_ session: LiveSession, _ available: [AvailableAction], predictions: [Prediction]) -> [UInt8] {
        let top = session.tree.top
        var writer = JSONWriter(capacity: 256 + available.count * 2048)
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
            let source: String? = interactionTypes.contains(action.type) ? nil : top?.entryId
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
            writePrediction(predictions.first { $0.action.type == action.type && !$0.action.interactive }, into: &writer)
            if action.interactive && session.tree.interaction == nil {
                writer.writeKey("nextInteractive")
                writePrediction(predictions.first { $0.action.type == action.type && $0.action.interactive }, into: &writer)
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }

    static let interactionTypes: Set<String> = [FlowAction.interactionUpdate, FlowAction.interactionEnd, FlowAction.interactionCancel]

    private static func writePrediction(_ prediction: Prediction?, into writer: inout JSONWriter) {
        if let prediction { writer.writeRawValue(prediction.next.document()) } else { writer.writeNull() }
    }
}

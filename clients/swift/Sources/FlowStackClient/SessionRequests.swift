// SessionRequests: the requests a session's turn makes (a tap, a batch of taps, a reload), built in one place.

import FlowEngine
import JSON

/// The requests of one session's turn, as ``FlowSession`` sends them. The client simulation
/// (Tests/FlowStackClientTests/Simulation) builds its requests here too, so the schedules it
/// checks carry exactly the headers and bodies the app sends.
struct SessionRequests {
    var sessionId: String
    var token: String

    var authorization: [String: String] { ["Authorization": "Bearer \(token)"] }

    /// `POST …/actions` for one tap: `If-Match` on the version it was made at, so the server
    /// refuses it on any other, and its idempotency key, so a retry of a lost answer is answered
    /// from the log instead of applied twice. `predict` asks for the next screens' states, for a
    /// client with no local engine to draw them.
    func post(_ item: QueuedAction, predict: Bool) -> FlowRequest {
        var headers = authorization
        headers["If-Match"] = "\"\(item.version)\""
        headers["Idempotency-Key"] = item.key
        var body = JSONWriter()
        body.writeValue(item.action.json)
        return FlowRequest(method: "POST", path: "/v1/sessions/\(sessionId)/actions", query: predict ? "predict=true" : nil,
                           headers: headers, body: body.takeBytes())
    }

    /// `POST …/actions/batch` for queued taps, each with its key and version, in order.
    func batch(_ items: [QueuedAction]) -> FlowRequest {
        var writer = JSONWriter(capacity: 256 * items.count)
        writer.beginObject()
        writer.writeKey("actions")
        writer.beginArray()
        for item in items {
            item.writeBatchItem(into: &writer)
        }
        writer.endArray()
        writer.endObject()
        return FlowRequest(method: "POST", path: "/v1/sessions/\(sessionId)/actions/batch", headers: authorization, body: writer.takeBytes())
    }

    /// `GET /v1/sessions/{id}?predict=true`: the confirmed state again, with its predictions, when
    /// an answer was lost or could not be read.
    func reload() -> FlowRequest {
        FlowRequest(method: "GET", path: "/v1/sessions/\(sessionId)", query: "predict=true", headers: authorization)
    }
}

// The answers of the session routes: a new session, its state, an action's answer, its log and
// its ending, each writing its own JSON.
import FlowEngine
import FlowStore
import HTTPServer
import JSON

/// 201 `{session: {id, token, userId, version}, state}` with `Location`, `ETag` and
/// `Cache-Control: no-store` (the token is shown this once).
struct SessionCreated: JSONAnswer {
    let session: LiveSession
    let token: String
    /// `?predict=true`: the state carries what each available action would answer.
    let predict: Bool

    var status: Int { 201 }
    var etag: String? { SessionService.etag(session.version) }
    var headers: [(name: String, value: String)] {
        [("Cache-Control", "no-store"), ("Location", "/v1/sessions/\(session.id)")]
    }
    var capacity: Int { 2048 }

    func encode(into writer: inout JSONWriter) {
        var session = session
        writer.beginObject()
        writer.writeKey("session")
        writer.beginObject()
        writer.writeKey("id")
        writer.writeString(session.id)
        writer.writeKey("token")
        writer.writeString(token)
        writer.writeKey("userId")
        writer.writeString(session.userId)
        writer.writeKey("version")
        writer.writeInteger(session.version)
        writer.endObject()
        writer.writeKey("state")
        let state = session.cachedStateDocument()
        if predict {
            writer.writeRawValue(SessionState.withPredictions(state, session.cachedPredictions(user: session.context.user)))
        } else {
            writer.writeRawValue(state)
        }
        writer.endObject()
    }
}

/// A session's state document at `version`: `ETag: "<version>"` and `Cache-Control: no-store`.
struct SessionStateAnswer: ResponseEncodable {
    let version: Int
    /// The document as the session service wrote it (the engine's state, cached per version).
    let document: [UInt8]
    /// Its gzip form, kept with it (nil for a document made for this answer alone).
    var form: CompressedForm?

    func response() -> Response {
        SessionService.stateResponse(version: version, body: document, form: form)
    }
}

/// What posting an action answers: the state once its turn has committed it, or, for a dry run,
/// what it would answer now, committing nothing.
enum ActionAnswer: ResponseEncodable {
    case committed(DeferredResponse)
    case dryRun([UInt8])

    func response() -> Response {
        switch self {
        case .committed(let later):
            return .later(later)
        case .dryRun(let document):
            var response = Response.json(document)
            response.headers["Cache-Control"] = "no-store"
            return response
        }
    }
}

/// `{sessionId, actions: [entry…], next}`: a page of the session's log; `next` is the version
/// to ask `?after=` for the following page, null on the last one.
struct ActionLogAnswer: JSONAnswer {
    let sessionId: String
    let actions: [ActionRecord]
    let limit: Int

    var capacity: Int { 256 + actions.count * 256 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("sessionId")
        writer.writeString(sessionId)
        writer.writeKey("actions")
        writer.beginArray()
        for action in actions {
            action.write(into: &writer, checked: false)
        }
        writer.endArray()
        writer.writeKey("next")
        writer.writeOptionalInteger(actions.count == limit ? actions.last?.version : nil)
        writer.endObject()
    }
}

/// `{"sessionId", "userId", "version", "removed": {"sessions": 1, "actions": 4, …}}`: the
/// ended session, whose it was, the version it stood at, and the rows that went.
struct SessionEndingAnswer: JSONAnswer {
    let ended: SessionEnding

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("sessionId")
        writer.writeString(ended.sessionId)
        writer.writeKey("userId")
        writer.writeString(ended.userId)
        writer.writeKey("version")
        writer.writeInteger(ended.version)
        writer.writeKey("removed")
        writer.beginObject()
        for (name, count) in ended.counts {
            writer.writeKey(name)
            writer.writeInteger(count)
        }
        writer.endObject()
        writer.endObject()
    }
}

/// A document the session service encoded already (a bundle), with its tag.
struct EncodedDocument: ResponseEncodable {
    let body: [UInt8]
    let etag: String?

    func response() -> Response {
        var response = Response.json(body)
        if let etag { response.headers["ETag"] = etag }
        return response
    }
}

/// 201 `{ticket, expiresIn, reconnectWindow, maxLifetime}` (seconds), `Cache-Control: no-store`.
struct StreamTicketAnswer: JSONAnswer {
    let ticket: String
    let expiresIn: Int
    let reconnectWindow: Int
    let maxLifetime: Int

    var status: Int { 201 }
    var headers: [(name: String, value: String)] { [("Cache-Control", "no-store")] }
    var capacity: Int { 128 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("ticket")
        writer.writeString(ticket)
        writer.writeKey("expiresIn")
        writer.writeInteger(expiresIn)
        writer.writeKey("reconnectWindow")
        writer.writeInteger(reconnectWindow)
        writer.writeKey("maxLifetime")
        writer.writeInteger(maxLifetime)
        writer.endObject()
    }
}

extension ActionRecord {
    /// One log entry, as the log route and a user's export show it. `checked` parses the stored
    /// JSON texts (params, transition) before writing them, so a damaged one is `null` rather
    /// than a broken document (the export, read rarely); the log route copies them as stored.
    func write(into writer: inout JSONWriter, checked: Bool) {
        writer.beginObject()
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("type")
        writer.writeString(type)
        writer.writeKey("from")
        writer.writeOptionalString(source)
        writer.writeKey("params")
        if checked { UserExportAnswer.writeStoredJSON(params, into: &writer) } else { writer.writeRawValue(Array(params.utf8)) }
        writer.writeKey("interactive")
        writer.writeBool(interactive)
        writer.writeKey("handledBy")
        writer.writeOptionalString(handledBy)
        writer.writeKey("transition")
        if checked {
            UserExportAnswer.writeStoredJSON(transition, into: &writer)
        } else if let transition {
            writer.writeRawValue(Array(transition.utf8))
        } else {
            writer.writeNull()
        }
        writer.writeKey("at")
        writer.writeString(createdAt)
        writer.writeKey("clientAt")
        writer.writeOptionalString(clientAt)
        writer.endObject()
    }
}

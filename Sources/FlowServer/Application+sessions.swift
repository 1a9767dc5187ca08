// Session routes: create, read, act, read the action log, delete (by its holder, or ended by an
// admin); and the admin user routes.
import JSON
import FlowEngine
import FlowStore
import HTTPServer

extension Application {
    static let maxActionsPage = 1000
    static let defaultActionsPage = 100

    static func addSessionRoutes(to router: inout Router, sessions: SessionService, access: AccessPolicy, admin: AdminAuthorization,
                                 limits: BodyLimits) {
        router.route("POST", "/v1/sessions") { request throws(ResponseError) in
            let prediction = try PredictionRequest(request)
            let input = try SessionInput(json: try request.jsonBody(limits).get())
            try access.checkCreation(request, userId: input.userId, userHash: input.userHash)
            let created = try sessionCall { () throws(SessionError) in try sessions.create(input) }
            var session = created.session
            let token = created.token
            var writer = JSONWriter(capacity: 2048)
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
            if prediction.predict {
                writer.writeRawValue(LiveSession.withPredictions(state, session.cachedPredictions(user: session.context.user)))
            } else {
                writer.writeRawValue(state)
            }
            writer.endObject()
            var response = SessionService.stateResponse(session, body: writer.takeBytes(), status: 201)
            response.headers["Location"] = "/v1/sessions/\(session.id)"
            return response
        }

        router.route("GET", "/v1/sessions/{id}") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let prediction = try PredictionRequest(request)
            let token = BearerToken.presented(in: request)
            let (version, document) = try sessionCall { () throws(SessionError) in
                prediction.predict ? try sessions.predictedStateDocument(id, token: token) : try sessions.stateDocument(id, token: token)
            }
            let response = SessionService.stateResponse(version: version, body: document)
            if let tags = request.headers["If-None-Match"], let match = IfMatch(tags), match.matchesWeakly(version) {
                return .notModified(response)
            }
            return response
        }

        router.route("POST", "/v1/sessions/{id}/actions") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let prediction = try PredictionRequest(request)
            let dryRun = try PredictionRequest.flag(request, "dryRun") ?? false
            let token = BearerToken.presented(in: request)
            guard token != nil else {
                throw ResponseError(SessionError.unauthorized(.missing))
            }
            var ifMatch: IfMatch?
            if let header = request.headers["If-Match"] {
                guard let parsed = IfMatch(header) else {
                    throw ResponseError(.problem(400, "If-Match must be * or entity tags such as \"4\"; found \(header).",
                                                 type: ProblemType.malformed))
                }
                ifMatch = parsed
            }
            var idempotency: (key: String, bodyHash: [UInt8])?
            if let key = request.headers["Idempotency-Key"] {
                guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                    throw ResponseError(.problem(400, "Idempotency-Key must be 1 to 255 visible ASCII characters.",
                                                 type: ProblemType.malformed))
                }
                idempotency = (key, [])
            }
            let json = try request.jsonBody(limits).get()
            let action: FlowAction
            do throws(FlowError) {
                action = try FlowAction(json: json)
            } catch {
                throw ResponseError(SessionError.problem(for: error))
            }
            // The hash of the parsed action, not of the body's bytes: a batch item with the same
            // key and action hashes the same (see FlowAction.idempotencyHash).
            if let key = idempotency?.key { idempotency = (key, action.idempotencyHash) }
            // A dry run commits nothing, so an Idempotency-Key has nothing to keep: it is ignored.
            guard dryRun else {
                let idempotency = idempotency
                let answer = DeferredResponse()
                try sessionCall { () throws(SessionError) in
                    try sessions.apply(action, to: id, token: token, ifMatch: ifMatch, idempotency: idempotency,
                                       predict: prediction.predict, reply: answer)
                }
                return .later(answer)
            }
            var response = Response.json(try sessionCall { () throws(SessionError) in
                try sessions.dryRun(action, on: id, token: token, ifMatch: ifMatch, predict: prediction.predict)
            })
            response.headers["Cache-Control"] = "no-store"
            return response
        }

        router.route("POST", "/v1/sessions/{id}/actions/batch") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let token = BearerToken.presented(in: request)
            guard token != nil else {
                throw ResponseError(SessionError.unauthorized(.missing))
            }
            let batch = try BatchInput(json: try request.jsonBody(limits).get())
            let answer = DeferredResponse()
            try sessionCall { () throws(SessionError) in try sessions.applyBatch(batch.items, to: id, token: token, reply: answer) }
            return .later(answer)
        }

        router.route("GET", "/v1/sessions/{id}/actions") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let after = try Self.integerQuery(request, "after", default: 0, range: 0...Int.max)
            let limit = try Self.integerQuery(request, "limit", default: Self.defaultActionsPage, range: 1...Self.maxActionsPage)
            let actions = try sessionCall { () throws(SessionError) in
                try sessions.actionLog(id, token: BearerToken.presented(in: request), after: after, limit: limit)
            }
            var writer = JSONWriter(capacity: 256 + actions.count * 256)
            writer.beginObject()
            writer.writeKey("sessionId")
            writer.writeString(id)
            writer.writeKey("actions")
            writer.beginArray()
            for action in actions {
                Self.writeLogEntry(action, checked: false, into: &writer)
            }
            writer.endArray()
            writer.writeKey("next")
            writer.writeOptionalInteger(actions.count == limit ? actions.last?.version : nil)
            writer.endObject()
            return .json(writer.takeBytes())
        }

        // The session's holder deletes it (204); support ends it with an admin credential (200,
        // what went, audited as session.end): one session, not the user (issue 33).
        router.adminOrSessionRoute("DELETE", "/v1/sessions/{id}", admin, role: sessionEndRole, admin: { request throws(ResponseError) in
            let ended = try sessionCall { () throws(SessionError) in
                try sessions.end(request.pathParameters["id"] ?? "", by: admin.audit)
            }
            return .json(Self.endingDocument(ended))
        }, session: { request throws(ResponseError) in
            guard let token = BearerToken.presented(in: request) else {
                throw SessionService.unauthorized(
                    "DELETE /v1/sessions/{id} needs Authorization: Bearer <session token> (its holder deletes it) or <admin token or admin key> (support ends it).")
            }
            let answer = DeferredResponse()
            try sessionCall { () throws(SessionError) in
                try sessions.delete(request.pathParameters["id"] ?? "", token: token, reply: answer)
            }
            return .later(answer)
        })
    }

    /// Ending one session is a support operation, as resetting a user's onboarding is: `edit`.
    /// It removes that session's log, not the user's data (erasure, `admin`).
    static let sessionEndRole = AdminRole.edit

    /// `{"sessionId", "userId", "version", "removed": {"sessions": 1, "actions": 4, …}}`: the
    /// ended session, whose it was, the version it stood at, and the rows that went.
    static func endingDocument(_ ended: SessionEnding) -> [UInt8] {
        var writer = JSONWriter()
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
        return writer.takeBytes()
    }

    static func addUserRoutes(to router: inout Router, sessions: SessionService, admin: AdminAuthorization) {
        router.adminRoute("GET", "/v1/users/{userId}", admin) { request throws(ResponseError) in
            let userId = request.pathParameters["userId"] ?? ""
            // A user id no session could have been made for (a control character, a NUL that
            // PostgreSQL would refuse) names nobody.
            guard SessionInput.isValidUserId(userId), let user = try sessionCall({ () throws(SessionError) in try sessions.user(userId) }) else {
                throw ResponseError(.problem(404, "There is no user \(userId): no session was ever made for them.",
                                             type: ProblemType.notFound))
            }
            return .json(Self.userDocument(user))
        }
        router.adminRoute("DELETE", "/v1/users/{userId}/onboarding", admin) { request throws(ResponseError) in
            let userId = request.pathParameters["userId"] ?? ""
            guard SessionInput.isValidUserId(userId) else {
                throw ResponseError(.problem(404, "There is no user \(userId).", type: ProblemType.notFound))
            }
            let removed = try sessionCall { () throws(SessionError) in
                try sessions.resetOnboarding(userId, audit: AuditStamp(credential: admin.credential, action: "user.onboarding.reset"))
            }
            guard removed != nil else {
                throw ResponseError(.problem(404, "There is no user \(userId).", type: ProblemType.notFound))
            }
            return Response(status: 204)
        }
    }

    static func userDocument(_ user: UserRecord) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("userId")
        writer.writeString(user.id)
        writer.writeKey("state")
        writer.writeRawValue(Array(user.state.utf8))
        writer.writeKey("createdAt")
        writer.writeString(user.createdAt)
        writer.writeKey("updatedAt")
        writer.writeString(user.updatedAt)
        writer.endObject()
        return writer.takeBytes()
    }

    /// A whole-number query parameter within `range`, else a 400 naming it.
    static func integerQuery(_ request: Request, _ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ResponseError) -> Int {
        guard let text = request.queryValue(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            let upper = range.upperBound == Int.max ? "" : " to \(range.upperBound)"
            throw ResponseError(.problem(400, "Query parameter \(name) must be a whole number from \(range.lowerBound)\(upper); found \(text).",
                                         type: ProblemType.malformed, errors: [.init(pointer: name, detail: "must be a whole number")]))
        }
        return value
    }
}

extension Application {
    /// One log entry, as the log route and a user's export show it. `checked` parses the stored
    /// JSON texts (params, transition) before writing them, so a damaged one is `null` rather
    /// than a broken document (the export, read rarely); the log route copies them as stored.
    static func writeLogEntry(_ action: ActionRecord, checked: Bool, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("version")
        writer.writeInteger(action.version)
        writer.writeKey("type")
        writer.writeString(action.type)
        writer.writeKey("from")
        writer.writeOptionalString(action.source)
        writer.writeKey("params")
        if checked { writeStoredJSON(action.params, into: &writer) } else { writer.writeRawValue(Array(action.params.utf8)) }
        writer.writeKey("interactive")
        writer.writeBool(action.interactive)
        writer.writeKey("handledBy")
        writer.writeOptionalString(action.handledBy)
        writer.writeKey("transition")
        if checked {
            writeStoredJSON(action.transition, into: &writer)
        } else if let transition = action.transition {
            writer.writeRawValue(Array(transition.utf8))
        } else {
            writer.writeNull()
        }
        writer.writeKey("at")
        writer.writeString(action.createdAt)
        writer.writeKey("clientAt")
        writer.writeOptionalString(action.clientAt)
        writer.endObject()
    }
}

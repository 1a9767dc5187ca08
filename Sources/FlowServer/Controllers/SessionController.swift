// The session routes: create a session, read its state, act on it (one action or a batch), read
// its log, what it can do next and its bundle, and delete it (by its holder) or end it (by an
// admin). Each route reads a typed request and answers a typed value; the session service does
// the work.
import FlowEngine
import FlowStore
import HTTPServer

/// `/v1/sessions` and `/v1/sessions/{id}/…` but the event stream (`SessionEventController`).
struct SessionController: Controller {
    let sessions: SessionService
    let access: AccessPolicy
    let admin: AdminAuthorization
    let limits: BodyLimits

    /// Ending one session is a support operation, as resetting a user's onboarding is: `edit`.
    /// It removes that session's log, not the user's data (erasure, `admin`).
    static let endRole = AdminRole.edit

    func register(on router: inout Router) {
        router.route("POST", "/v1/sessions", limits: limits, create)
        router.route("GET", "/v1/sessions/{id}", limits: limits, state)
        router.route("POST", "/v1/sessions/{id}/actions", limits: limits, act)
        router.route("POST", "/v1/sessions/{id}/actions/batch", limits: limits, applyBatch)
        router.route("GET", "/v1/sessions/{id}/actions", limits: limits, log)
        // The session's holder deletes it (204); support ends it with an admin credential (200,
        // what went, audited as session.end): one session, not the user (issue 33).
        router.adminOrSessionRoute("DELETE", "/v1/sessions/{id}", admin, role: Self.endRole, admin: { request throws(ResponseError) in
            try end(SessionRequest(request, limits: limits)).response()
        }, session: { request throws(ResponseError) in
            try delete(SessionRequest(request, limits: limits)).response()
        })
        router.route("GET", "/v1/sessions/{id}/actions/available", limits: limits, available)
        router.route("GET", "/v1/sessions/{id}/bundle", limits: limits, bundle)
    }

    func create(_ request: NewSessionRequest) throws(ResponseError) -> SessionCreated {
        let key = try access.checkCreation(request.http, userId: request.input.userId, userHash: request.input.userHash)
        // What is refused without a read is refused first. Then the user is read, on PostgreSQL
        // with the definitions' revision (on a lone node, a user it does not hold), so that the
        // client key can be trusted as checked at that revision without a round trip of its own
        // (`ClientKeys`).
        let user = try key != nil
            ? sessionCall { () throws(SessionError) in try sessions.newUser(request.input.userId, forKey: true) } : nil
        if let key { try access.checkCreationKey(key, checkedAt: user?.definitions) }
        let created = try sessionCall { () throws(SessionError) in try sessions.create(request.input, user: user) }
        return SessionCreated(session: created.session, token: created.token, predict: request.predict)
    }

    func state(_ request: SessionStateRequest) throws(ResponseError) -> Revalidated<SessionStateAnswer> {
        let session = request.session
        let (version, document, form) = try sessionCall { () throws(SessionError) -> (Int, [UInt8], CompressedForm?) in
            if request.predict {
                let (version, document) = try sessions.predictedStateDocument(session.id, token: session.token)
                return (version, document, nil)
            }
            return try sessions.stateDocument(session.id, token: session.token)
        }
        return Revalidated(answer: SessionStateAnswer(version: version, document: document, form: form),
                           notModified: session.ifNoneMatch?.matchesWeakly(version) ?? false)
    }

    func act(_ request: ActionRequest) throws(ResponseError) -> ActionAnswer {
        // A dry run commits nothing, so an Idempotency-Key has nothing to keep: it is ignored.
        guard request.dryRun else {
            let answer = DeferredResponse()
            try sessionCall { () throws(SessionError) in
                try sessions.apply(request.action, to: request.id, token: request.token, ifMatch: request.preconditions.ifMatch,
                                   idempotency: request.idempotency, predict: request.predict, reply: answer)
            }
            return .committed(answer)
        }
        return .dryRun(try sessionCall { () throws(SessionError) in
            try sessions.dryRun(request.action, on: request.id, token: request.token, ifMatch: request.preconditions.ifMatch,
                                predict: request.predict)
        })
    }

    func applyBatch(_ request: BatchActionsRequest) throws(ResponseError) -> DeferredResponse {
        let answer = DeferredResponse()
        try sessionCall { () throws(SessionError) in
            try sessions.applyBatch(request.batch.items, to: request.id, token: request.token, reply: answer)
        }
        return answer
    }

    func log(_ request: ActionLogRequest) throws(ResponseError) -> ActionLogAnswer {
        let session = request.session
        let actions = try sessionCall { () throws(SessionError) in
            try sessions.actionLog(session.id, token: session.token, after: request.after, limit: request.limit)
        }
        return ActionLogAnswer(sessionId: session.id, actions: actions, limit: request.limit)
    }

    /// Support ends a session (an admin route: the credential is checked already).
    func end(_ request: SessionRequest) throws(ResponseError) -> SessionEndingAnswer {
        SessionEndingAnswer(ended: try sessionCall { () throws(SessionError) in try sessions.end(request.id, by: admin.audit) })
    }

    /// The session's holder deletes it: 204 once its turn has removed it.
    func delete(_ request: SessionRequest) throws(ResponseError) -> DeferredResponse {
        guard let token = request.token else {
            throw SessionService.unauthorized(
                "DELETE /v1/sessions/{id} needs Authorization: Bearer <session token> (its holder deletes it) or <admin token or admin key> (support ends it).")
        }
        let answer = DeferredResponse()
        try sessionCall { () throws(SessionError) in try sessions.delete(request.id, token: token, reply: answer) }
        return answer
    }

    func available(_ request: SessionRequest) throws(ResponseError) -> AvailableActionsAnswer {
        let (session, available, predictions) = try sessionCall { () throws(SessionError) in
            try sessions.availableActions(request.id, token: request.token)
        }
        return AvailableActionsAnswer(session: session, available: available, predictions: predictions)
    }

    /// A client keeps the bundle and revalidates it (If-None-Match) before relying on it
    /// (CachePolicy: private, no-cache).
    func bundle(_ request: SessionRequest) throws(ResponseError) -> Revalidated<EncodedDocument> {
        let (etag, body) = try sessionCall { () throws(SessionError) in try sessions.bundle(request.id, token: request.token) }
        return Revalidated(answer: EncodedDocument(body: body, etag: etag),
                           notModified: IfNoneMatch.lists(etag, in: request.ifNoneMatchHeader))
    }
}

// The HTTP edge of the session service: each SessionError as the problem response clients get,
// and the answers of requests that wait for their session's turn.
import FlowEngine
import FlowStore
import HTTPServer
import JSON
import Logging

extension SessionError {
    /// The problem response of this error: status, `type`, `code` and extension members, and
    /// `WWW-Authenticate` / `ETag` where they belong.
    var response: Response {
        switch self {
        case .unauthorized(let credential):
            let detail: String
            switch credential {
            case .missing: detail = "This route needs Authorization: Bearer <session token>."
            case .wrong(let id): detail = "The token does not open session \(id)."
            case .missingForEvents(let id):
                detail = "This route needs Authorization: Bearer <session token>, or ?ticket= from POST /v1/sessions/\(id)/events/ticket."
            case .malformedTicket: detail = "The ticket is not one this server makes."
            case .ticketRefused(let id, let window):
                detail = "The ticket is unknown, made for another session, expired, or past its reconnection window (\(window) s after its last stream ended); ask POST /v1/sessions/\(id)/events/ticket for a new one."
            }
            var response = Response.problem(401, detail, type: ProblemType.unauthorized)
            response.headers["WWW-Authenticate"] = "Bearer"
            response.credentialRefusal = .unknown
            return response
        case .expired(let id, let idle):
            var response = Response.problem(
                401, "Session \(id) expired after \(DurationText.format(idle)) without an action; start a new session.",
                title: "Session Expired", type: ProblemType.sessionExpired)
            response.headers["WWW-Authenticate"] = "Bearer"
            response.credentialRefusal = .expired
            return response
        case .notFound(let id):
            return .problem(404, "There is no session \(id).", type: ProblemType.notFound)
        case .versionMismatch(let id, let version, let asked):
            var response = Response.problem(
                412, "If-Match asks for version \(asked) but session \(id) is at version \(version); reload the state.",
                type: ProblemType.versionMismatch, extensions: [("currentVersion", String(version))])
            response.headers["ETag"] = SessionService.etag(version)
            return response
        case .batchVersionMismatch(let index, let key, let itemVersion, let id, let version):
            return .problem(412, "The action at /actions/\(index) (key \(key)) was made on version \(itemVersion), but session \(id) "
                                + "is at version \(version) at its turn; it and the actions after it were not applied. Adopt the answer's state.",
                            type: ProblemType.versionMismatch,
                            errors: [.init(pointer: "/actions/\(index)/version", detail: "the session is at version \(version)")],
                            extensions: [("currentVersion", String(version))])
        case .refused(let error):
            return Self.problem(for: error)
        case .idempotencyKeyReused(let key):
            return .problem(
                422, "Idempotency-Key \(key) was used with another request body; use a new key for a new action.",
                type: ProblemType.idempotencyKeyReused)
        case .sessionTooLarge(let id, let bytes, let limit):
            let what = id.map { "The action would leave session \($0)" } ?? "The link would leave the new session"
            return .problem(
                422, "\(what) holding \(bytes) bytes of screens, params and lists; a session holds at most \(limit) "
                    + "(--max-session-bytes). Nothing was applied: pop or dismiss screens first, or send smaller params.",
                title: "Session Too Large", type: ProblemType.sessionTooLarge, extensions: [("limit", String(limit))])
        case .unsupportedClient(let client, let missing, let flows):
            let build = [client.platform, client.appVersion].compactMap { $0 }.joined(separator: " ")
            let shown = missing.prefix(10).joined(separator: ", ") + (missing.count > 10 ? ", …" : "")
            return .problem(
                422,
                "This client\(build.isEmpty ? "" : " (\(build))") cannot render any activated version of \(flows.joined(separator: ", ")): "
                    + "the live versions show \(shown), which its features do not list.",
                title: "Unsupported Client", type: ProblemType.unsupportedClient,
                extensions: [
                    ("code", JSONValue.string("unsupported-client").jsonText),
                    ("missing", JSONValue.array(missing.map { .string($0) }).jsonText),
                    ("flows", JSONValue.array(flows.map { .string($0) }).jsonText),
                ])
        case .contention(let id, let reading):
            return .problem(503, "Session \(id) is changing too fast to \(reading ? "read" : "apply this action"); try again.",
                            title: "Service Unavailable", type: ProblemType.sessionContention)
        case .batchIncomplete(let reason, let applied):
            let what: String
            switch reason {
            case .contention(let id): what = "Session \(id) is changing too fast to apply this batch"
            case .outcomeUnknown: what = "The database did not confirm the batch's writes: some may or may not have been applied"
            case .failed: what = "The database did not complete the batch"
            }
            return .problem(503, "\(what); \(applied) of its actions \(applied == 1 ? "is" : "are") known to be applied. Send the same batch "
                                + "again (the keys make it safe: what was applied is skipped), or read the state first.",
                            title: "Service Unavailable", type: ProblemType.batchIncomplete, extensions: [("applied", String(applied))])
        case .definitionsLoading(let flow, let version):
            return .problem(503, "Flow \(flow) version \(version) is not loaded on this node yet; try again.",
                            title: "Service Unavailable", type: ProblemType.definitionsLoading)
        case .storage(let error):
            if case StoreError.outcomeUnknown = error {
                return .problem(
                    503, "The database did not confirm the write: it may or may not have been applied. Retry with the same "
                        + "Idempotency-Key (its answer is replayed if it was applied), or read the state before acting again.",
                    title: "Service Unavailable", type: ProblemType.outcomeUnknown)
            }
            return .problem(503, "The database did not complete the request; try again.", title: "Service Unavailable",
                            type: ProblemType.databaseUnavailable)
        case .flowVersionsNotStored:
            return .problem(500, "The flow versions for this session are not all stored.")
        case .cannotStart(let message):
            return .problem(500, "The flow definitions cannot build a first screen: \(message)")
        case .unreadable(let id):
            return .problem(500, "Session \(id) is stored in a form this server cannot read.")
        case .unknownFlowVersions(let id):
            return .problem(500, "Session \(id) runs flow versions this server does not have.")
        case .linkNotApplied(let id):
            return .problem(500, "The link of session \(id) was not applied.")
        }
    }

    /// The answer to an action the engine did not apply.
    static func problem(for error: FlowError) -> Response {
        let status: Int
        var extensions: [(name: String, json: String)] = [("code", JSONValue.string(error.code).jsonText)]
        var errors: [ProblemDetails.FieldError] = []
        switch error {
        case .staleSource, .interactionPending, .noInteraction: status = 409
        case .staleRow:
            status = 409
            errors.append(.init(pointer: "/row", detail: error.message))
        case .unhandled(_, let chain):
            status = 422
            extensions.append(("chain", JSONValue.array(chain.map { .string($0) }).jsonText))
        case .refused(let flow, _, _), .listTooLarge(let flow, _, _):
            status = 422
            extensions.append(("flow", JSONValue.string(flow).jsonText))
        case .brokenDefinition: status = 422
        case .invalidParams(let path, let message):
            status = 400
            errors.append(.init(pointer: path, detail: message))
        case .corruptTree: status = 500
        case .unknownLink: status = 422
        case .linkRefused(let pattern, let step, _, _):
            status = 422
            extensions.append(("link", JSONValue.string(pattern).jsonText))
            extensions.append(("step", String(step)))
        }
        let detail = error.message.prefix(1).uppercased() + error.message.dropFirst() + "."
        return .problem(status, detail, type: ProblemType.of(error), errors: errors, extensions: extensions)
    }
}

extension TurnAnswer {
    /// The response of a request that waited for its session's turn.
    var response: Response {
        switch self {
        case .state(let version, let body, let form):
            return SessionService.stateResponse(version: version, body: body, form: form)
        case .replay(let status, let version, let body):
            var replay = Response.json(body, status: status)
            replay.headers["ETag"] = SessionService.etag(version)
            replay.headers["Cache-Control"] = "no-store"
            replay.headers["Idempotent-Replayed"] = "true"
            return replay
        case .noContent:
            return Response(status: 204)
        case .batch(let request, let plan, let version, let state):
            return SessionService.batchResponse(request, plan, version: version, state: state)
        case .failed(let error):
            return error.response
        }
    }
}

/// A client's request waiting for its session's turn: its answer becomes the response the
/// suspended connection gets.
extension DeferredResponse: SessionReply {
    func finish(_ answer: TurnAnswer) -> Bool {
        complete(answer.response)
    }
}

extension SessionService {
    static func stateResponse(_ session: LiveSession, body: [UInt8]? = nil, status: Int = 200) -> Response {
        stateResponse(version: session.version, body: body ?? session.document ?? session.stateDocument(), status: status)
    }

    /// A state answer: the document, its `ETag`, and `Cache-Control: no-store`; with the gzip
    /// form the session keeps for the document, when it is the session's (`CompressedForm`).
    static func stateResponse(version: Int, body: [UInt8], status: Int = 200, form: CompressedForm? = nil) -> Response {
        var headers = HTTPHeaders(capacity: 4)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "ETag", value: etag(version))
        headers.add(name: "Cache-Control", value: "no-store")
        var response = Response(status: status, headers: headers, body: body)
        response.compressedForm = form
        return response
    }

    /// `{"applied": N, "skipped": M, "results": [{key, status, version?}], "refused": problem|null,
    /// "state": {…}}` with the state's `ETag`.
    static func batchResponse(_ request: BatchRequest, _ plan: BatchPlan, version: Int, state: [UInt8]) -> Response {
        let refusal = plan.refusal?.response.body
        var writer = JSONWriter(capacity: 256 + state.count + plan.results.count * 64 + (refusal?.count ?? 0))
        writer.beginObject()
        writer.writeKey("applied")
        writer.writeInteger(plan.results.count(where: { $0.status == .applied }))
        writer.writeKey("skipped")
        writer.writeInteger(plan.results.count(where: { $0.status == .skipped }))
        writer.writeKey("results")
        writer.beginArray()
        for result in plan.results {
            writer.beginObject()
            writer.writeKey("key")
            writer.writeString(result.key)
            writer.writeKey("status")
            writer.writeString(result.status.rawValue)
            if let version = result.version {
                writer.writeKey("version")
                writer.writeInteger(version)
            }
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("refused")
        if let refusal { writer.writeRawValue(refusal) } else { writer.writeNull() }
        writer.writeKey("state")
        writer.writeRawValue(state)
        writer.endObject()
        return stateResponse(version: version, body: writer.takeBytes())
    }
}

extension ResponseError {
    /// A route's answer to a session error (keeping the refusal, which rollouts count).
    init(_ error: SessionError) {
        self.init(error.response, refusal: error.refusal)
    }
}

/// Runs a session-service call in a route: its errors become their problem responses.
func sessionCall<T>(_ call: () throws(SessionError) -> T) throws(ResponseError) -> T {
    do {
        return try call()
    } catch {
        throw ResponseError(error)
    }
}

extension SessionService {
    /// A database failure of a route outside the session service: logged, and a 503 that
    /// reveals no internals (as `SessionError.storage`).
    static func storageFailure(_ error: any Error, logger: Logger) -> ResponseError {
        ResponseError(storageError(error, logger: logger))
    }

    /// A 401 with `WWW-Authenticate: Bearer`, for the credential checks outside the session
    /// service (client keys, admin tokens).
    static func unauthorized(_ detail: String) -> ResponseError {
        var response = Response.problem(401, detail, type: ProblemType.unauthorized)
        response.headers["WWW-Authenticate"] = "Bearer"
        response.credentialRefusal = .unknown
        return ResponseError(response)
    }
}

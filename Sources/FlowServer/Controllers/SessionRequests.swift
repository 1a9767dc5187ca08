// The typed requests of the session routes: what each reads from the path, the query, the
// headers and the body, parsed once and in the order its problems have always been reported.
import FlowEngine
import HTTPServer
import JSON

/// `POST /v1/sessions`: `?predict=`, then the body (`SessionInput`).
struct NewSessionRequest: RouteRequest {
    let predict: Bool
    let input: SessionInput
    /// The HTTP request, for the access policy (the client's address and key).
    let http: Request

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        predict = try PredictionRequest(request).predict
        input = try SessionInput(json: try request.jsonBody(limits).get())
        http = request
    }
}

/// A route on one session that its token opens: `{id}` and `Authorization: Bearer`, nil when
/// absent (the session service answers 401 then, after looking the session up).
struct SessionRequest: RouteRequest {
    let id: String
    let token: String?
    /// `If-None-Match`, when it reads as entity tags (an unreadable one is ignored: a full answer).
    let ifNoneMatch: IfMatch?
    let ifNoneMatchHeader: String?

    init(_ request: Request, limits: BodyLimits) {
        id = request.parameter("id")
        token = BearerToken.presented(in: request)
        ifNoneMatchHeader = request.headers["If-None-Match"]
        ifNoneMatch = ifNoneMatchHeader.flatMap { IfMatch($0) }
    }
}

/// `GET /v1/sessions/{id}`: the session, and `?predict=`.
struct SessionStateRequest: RouteRequest {
    let session: SessionRequest
    let predict: Bool

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        session = SessionRequest(request, limits: limits)
        predict = try PredictionRequest(request).predict
    }
}

/// `POST /v1/sessions/{id}/actions`: `?predict=` and `?dryRun=`, the token (401 without one,
/// before anything else is read), `If-Match` and `Idempotency-Key`, then the action.
struct ActionRequest: RouteRequest {
    let id: String
    let token: String
    let predict: Bool
    let dryRun: Bool
    let preconditions: Preconditions
    let action: FlowAction

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = request.parameter("id")
        predict = try PredictionRequest(request).predict
        dryRun = try PredictionRequest.flag(request, "dryRun") ?? false
        guard let token = BearerToken.presented(in: request) else {
            throw ResponseError(SessionError.unauthorized(.missing))
        }
        self.token = token
        preconditions = try Preconditions(request.headers)
        let json = try request.jsonBody(limits).get()
        do throws(FlowError) {
            action = try FlowAction(json: json)
        } catch {
            throw ResponseError(SessionError.problem(for: error))
        }
    }

    /// The key and the hash of the parsed action, not of the body's bytes: a batch item with the
    /// same key and action hashes the same (see `FlowAction.idempotencyHash`).
    var idempotency: (key: String, bodyHash: [UInt8])? {
        preconditions.idempotencyKey.map { ($0, action.idempotencyHash) }
    }
}

/// `POST /v1/sessions/{id}/actions/batch`: the token (401 without one), then the batch.
struct BatchActionsRequest: RouteRequest {
    let id: String
    let token: String
    let batch: BatchInput

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = request.parameter("id")
        guard let token = BearerToken.presented(in: request) else {
            throw ResponseError(SessionError.unauthorized(.missing))
        }
        self.token = token
        batch = try BatchInput(json: try request.jsonBody(limits).get())
    }
}

/// `GET /v1/sessions/{id}/actions`: a page of the log, `?after=` (a version) and `?limit=`.
struct ActionLogRequest: RouteRequest {
    static let maxPage = 1000
    static let defaultPage = 100

    let session: SessionRequest
    let after: Int
    let limit: Int

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        session = SessionRequest(request, limits: limits)
        after = try request.integerQuery("after", default: 0, range: 0...Int.max)
        limit = try request.integerQuery("limit", default: Self.defaultPage, range: 1...Self.maxPage)
    }
}

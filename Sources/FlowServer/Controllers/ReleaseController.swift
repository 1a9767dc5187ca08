// The release routes: list, read, create (and test), test again, approve, activate (or roll
// out), roll back. Each reads a typed request, asks the release service, answers a release.
import FlowScenarios
import HTTPServer
import JSON

/// `/v1/releases` and `/v1/releases/{id}/…` (but `…/replay`, the replays', and `…/rollout`, the
/// rollouts').
struct ReleaseController: Controller {
    let releases: ReleaseService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/releases", admin, limits: limits, list)
        router.adminRoute("GET", "/v1/releases/{id}", admin, limits: limits, read)
        router.adminRoute("POST", "/v1/releases", admin, limits: limits, create)
        router.adminRoute("POST", "/v1/releases/{id}/test", admin, limits: limits, test)
        router.adminRoute("POST", "/v1/releases/{id}/approve", admin, role: .publish, limits: limits, approve)
        router.adminRoute("POST", "/v1/releases/{id}/activate", admin, role: .publish, limits: limits, activate)
        router.adminRoute("POST", "/v1/releases/{id}/rollback", admin, role: .publish, limits: limits, rollBack)
    }

    func list(_ request: Request) throws(ResponseError) -> ReleaseListAnswer {
        ReleaseListAnswer(releases: try releases.all())
    }

    func read(_ request: ReleaseRequest) throws(ResponseError) -> ReleaseAnswer {
        ReleaseAnswer(release: releases.shown(try releases.release(request.id)))
    }

    func create(_ request: NewReleaseRequest) throws(ResponseError) -> ReleaseAnswer {
        ReleaseAnswer(release: try releases.create(request.json, document: request.document, audit: admin.audit), created: true)
    }

    func test(_ request: ReleaseTestRequest) throws(ResponseError) -> ReleaseAnswer {
        ReleaseAnswer(release: try releases.test(request.id, suites: request.suites))
    }

    func approve(_ request: ReleaseRequest) throws(ResponseError) -> ReleaseAnswer {
        ReleaseAnswer(release: try releases.approve(request.id, audit: admin.audit))
    }

    func activate(_ request: ActivateReleaseRequest) throws(ResponseError) -> ReleaseAnswer {
        // The optional body is the rollouts': {"rollout": {…}} rolls the release out to a share
        // of new sessions instead of making it live for everybody.
        if let body = request.body {
            let allowed = releases.rollsOut ? ["rollout"] : []
            guard let object = body.objectValue, object.keys.allSatisfy(allowed.contains) else {
                throw ResponseError(.problem(400, releases.rollsOut ? "The body of an activation is optional: {\"rollout\": {…}}."
                                                 : "The body of an activation is optional and empty: {}.", type: ProblemType.malformed))
            }
        }
        return ReleaseAnswer(release: try releases.activate(request.id, untested: request.untested, body: request.body, audit: admin.audit))
    }

    func rollBack(_ request: RollbackRequest) throws(ResponseError) -> ReleaseAnswer {
        ReleaseAnswer(release: try releases.rollBack(request.id, reason: request.reason, audit: admin.audit))
    }
}

extension Request {
    /// The `{id}` of a release route: a whole number from 1, else 400.
    func releaseId() throws(ResponseError) -> Int {
        let text = parameter("id")
        guard let id = Int(text), id >= 1 else {
            throw ResponseError(.problem(400, "A release id is a whole number from 1; found \(text).", type: ProblemType.malformed))
        }
        return id
    }

    /// The body as JSON when there is one (nil for an empty body), else 400.
    func optionalJSONBody(_ limits: BodyLimits) throws(ResponseError) -> JSONValue? {
        // JSONValue is ExpressibleByNilLiteral: a bare `nil` here would read as JSON null.
        guard !body.isEmpty else { return JSONValue?.none }
        return try jsonBody(limits).get()
    }
}

/// A route on one release: `{id}`.
struct ReleaseRequest: RouteRequest {
    let id: Int

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = try request.releaseId()
    }
}

/// `POST /v1/releases`: the submission, and its text as sent (stored with the release).
struct NewReleaseRequest: RouteRequest {
    let json: JSONValue
    let document: String

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        json = try request.jsonBody(limits).get()
        document = String(decoding: request.body, as: UTF8.self)
    }
}

/// `POST /v1/releases/{id}/test`: the optional body `{"tests": [suite, …]}`; nil suites: the
/// ones stored with the release.
struct ReleaseTestRequest: RouteRequest {
    let id: Int
    let suites: [FlowScenarioSuite]?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = try request.releaseId()
        guard let json = try request.optionalJSONBody(limits) else {
            suites = nil
            return
        }
        guard let object = json.objectValue, object.keys.allSatisfy({ $0 == "tests" }) else {
            throw ResponseError(.problem(400, "The body is optional: {\"tests\": [suite, …]}.", type: ProblemType.malformed))
        }
        suites = try object["tests"].map { tests throws(ResponseError) in try ReleaseSubmission.releaseSuites(tests) }
    }
}

/// `POST /v1/releases/{id}/activate`: `?untested=`, and the optional body (its members are
/// checked by the route: which it accepts depends on whether this server rolls releases out).
struct ActivateReleaseRequest: RouteRequest {
    let id: Int
    let untested: Bool
    let body: JSONValue?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = try request.releaseId()
        untested = try request.booleanQuery("untested", default: false)
        body = try request.optionalJSONBody(limits)
    }
}

/// `POST /v1/releases/{id}/rollback`: the optional body `{"reason": "…"}` (at most 1000 characters).
struct RollbackRequest: RouteRequest {
    let id: Int
    let reason: String?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = try request.releaseId()
        guard let json = try request.optionalJSONBody(limits) else {
            reason = nil
            return
        }
        guard let object = json.objectValue, object.keys.allSatisfy({ $0 == "reason" }) else {
            throw ResponseError(.problem(400, "The body of a rollback is optional: {\"reason\": \"…\"}.", type: ProblemType.malformed))
        }
        guard let value = object["reason"] else {
            reason = nil
            return
        }
        guard let text = value.stringValue, text.unicodeScalars.count <= 1000 else {
            throw ResponseError(.problem(400, "reason must be a string of at most 1000 characters.", type: ProblemType.malformed,
                                         errors: [.init(pointer: "/reason", detail: "must be a string of at most 1000 characters")]))
        }
        reason = text
    }
}

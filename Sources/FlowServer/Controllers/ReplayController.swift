// The replay routes: recorded sessions run again on a draft's flow versions, or on a release's.
import HTTPServer
import JSON

/// `POST /v1/replays` and `POST /v1/releases/{id}/replay`.
struct ReplayController: Controller {
    let replays: ReplayService
    let releases: ReleaseService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("POST", "/v1/replays", admin, limits: limits, replay)
        // The versions a release makes live, over the versions each session ran.
        router.adminRoute("POST", "/v1/releases/{id}/replay", admin, limits: limits, replayRelease)
    }

    func replay(_ request: ReplayRunRequest) throws(ResponseError) -> ReplayReportAnswer {
        ReplayReportAnswer(outcome: try replays.run(try ReplayRequest(json: request.body)))
    }

    func replayRelease(_ request: ReleaseReplayRequest) throws(ResponseError) -> ReplayReportAnswer {
        let release = try releases.release(request.id)
        let json = try request.body.get()
        var replay = try ReplayRequest(json: json)
        guard json?.objectValue?["flows"] == nil else {
            throw ResponseError(.problem(400, "A release replays with its own versions; send only {days?, sample?}.",
                                         type: ProblemType.malformed, errors: [.init(pointer: "/flows", detail: "not allowed here")]))
        }
        replay.versions = release.versions
        return ReplayReportAnswer(outcome: try replays.run(replay))
    }
}

/// `POST /v1/replays`: the optional body `{flows?, days?, sample?}` (empty: the defaults).
struct ReplayRunRequest: RouteRequest {
    let body: JSONValue?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        body = try request.optionalJSONBody(limits)
    }
}

/// `POST /v1/releases/{id}/replay`: the release, and the optional body `{days?, sample?}`
/// (its problem thrown once the release is found: 404 before 400).
struct ReleaseReplayRequest: RouteRequest {
    let id: Int
    let body: Result<JSONValue?, ResponseError>

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = try request.releaseId()
        body = request.body.isEmpty ? .success(JSONValue?.none) : request.jsonBody(limits).map { Optional($0) }
    }
}

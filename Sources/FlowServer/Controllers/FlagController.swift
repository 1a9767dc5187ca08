// The flag routes: list flags, read one, store one, and evaluate them all for a context.
import FeatureFlags
import HTTPServer
import JSON

/// `/v1/flags`, `/v1/flags/{key}` and `POST /v1/flags/evaluate`.
struct FlagController: Controller {
    let flags: FlagService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/flags", admin, limits: limits, list)
        router.adminRoute("GET", "/v1/flags/{key}", admin, limits: limits, read)
        router.adminRoute("PUT", "/v1/flags/{key}", admin, role: .publish, limits: limits, put)
        router.adminRoute("POST", "/v1/flags/evaluate", admin, role: .read, limits: limits, evaluate)
    }

    func list(_ request: Request) -> DefinitionListAnswer {
        DefinitionListAnswer(name: "flags", items: flags.all.map { ($0.key, $0.value.text, $0.value.revision, $0.value.updatedAt) })
    }

    func read(_ request: DefinitionRequest) throws(ResponseError) -> DefinitionAnswer {
        let flag = try flags.flag(request.key)
        return DefinitionAnswer(key: request.key, text: flag.text, revision: flag.revision, updatedAt: flag.updatedAt)
    }

    func put(_ request: FlagUpload) throws(ResponseError) -> DefinitionAnswer {
        let upload = request.upload
        let stored = try flags.store(key: upload.key, json: upload.json, text: upload.text, audit: admin.audit)
        return DefinitionAnswer(key: upload.key, text: upload.text, revision: stored.revision, updatedAt: stored.updatedAt,
                                warnings: stored.warnings, status: stored.created ? 201 : 200)
    }

    func evaluate(_ request: EvaluationRequest) -> FlagEvaluationsAnswer {
        FlagEvaluationsAnswer(evaluations: flags.evaluate(request.context))
    }
}

/// `PUT /v1/flags/{key}`: a key that is not a route of its own under `/v1/flags` (422), and the
/// definition.
struct FlagUpload: RouteRequest {
    /// Flag keys that are routes of their own under `/v1/flags` (`POST /v1/flags/evaluate`): a
    /// flag of that name could be stored and read, but never evaluated on its own, so it is
    /// refused. A test walks the router for every name a collection route shadows.
    static let reservedKeys = ["evaluate"]

    let upload: DefinitionUpload

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        upload = try DefinitionUpload(request, limits: limits, reserved: Self.reservedKeys, collection: "/v1/flags")
    }
}

/// `POST /v1/flags/evaluate`: `{targetingKey?, attributes?}`.
struct EvaluationRequest: RouteRequest {
    let context: EvaluationContext

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        context = try Application.evaluationContext(try request.jsonBody(limits).get())
    }
}

// The experiment routes: list experiments, read one, store one, change one along its lifecycle
// (PATCH), and its report.
import FeatureFlags
import HTTPServer
import JSON

/// `/v1/experiments`, `/v1/experiments/{key}` and `/v1/experiments/{key}/report`.
struct ExperimentController: Controller {
    /// The media types `PATCH /v1/experiments/{key}` reads: an RFC 7396 merge patch, or plain
    /// JSON read the same way. Named in `Accept-Patch` (RFC 5789 §3.1) and on a 415.
    static let patchTypes = ["application/merge-patch+json", "application/json"]

    let experiments: ExperimentService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/experiments", admin, limits: limits, list)
        router.adminRoute("GET", "/v1/experiments/{key}", admin, limits: limits, read)
        router.adminRoute("PUT", "/v1/experiments/{key}", admin, role: .publish, limits: limits, put)
        router.adminRoute("PATCH", "/v1/experiments/{key}", admin, role: .publish, limits: limits, patch)
        router.adminRoute("GET", "/v1/experiments/{key}/report", admin, limits: limits, report)
    }

    func list(_ request: Request) -> DefinitionListAnswer {
        DefinitionListAnswer(name: "experiments", items: experiments.all.map { ($0.key, $0.value.text, $0.value.revision, $0.value.updatedAt) })
    }

    func read(_ request: DefinitionRequest) throws(ResponseError) -> DefinitionAnswer {
        let experiment = try experiments.experiment(request.key)
        return DefinitionAnswer(key: request.key, text: experiment.text, revision: experiment.revision, updatedAt: experiment.updatedAt,
                                etag: "\"\(experiment.revision)\"")
    }

    func put(_ request: ExperimentUpload) throws(ResponseError) -> DefinitionAnswer {
        let (created, shown) = try experiments.store(request.upload, audit: admin.audit)
        return DefinitionAnswer(key: shown.key, text: shown.text, revision: shown.revision, updatedAt: shown.updatedAt,
                                warnings: Self.warnings(shown), status: created ? 201 : 200)
    }

    /// `PATCH /v1/experiments/{key}`: stop, restart or conclude without resending the definition.
    ///
    /// ```http
    /// PATCH /v1/experiments/onboarding-length
    /// Content-Type: application/merge-patch+json
    ///
    /// {"status": "concluded", "winner": "short"}
    /// ```
    func patch(_ request: ExperimentPatchRequest) throws(ResponseError) -> DefinitionAnswer {
        let shown = try experiments.patch(key: request.key, patch: request.patch, ifMatch: request.ifMatch, audit: admin.audit)
        // The stored experiment as `GET` shows it, with its `ETag` and the upload's `warnings`.
        return DefinitionAnswer(key: shown.key, text: shown.text, revision: shown.revision, updatedAt: shown.updatedAt,
                                warnings: Self.warnings(shown), etag: "\"\(shown.revision)\"")
    }

    /// `GET /v1/experiments/{key}/report[?metric=onboarded|FEATURE][&baseline=VARIANT]`.
    func report(_ request: ExperimentReportRequest) throws(ResponseError) -> ExperimentReportAnswer {
        ExperimentReportAnswer(report: try experiments.report(key: request.key, metric: request.metric, baseline: request.baseline))
    }

    /// What the GrowthBook payload cannot say of the experiment.
    static func warnings(_ shown: ExperimentService.Shown) -> [ProblemDetails.FieldError] {
        Application.growthBookWarnings { () throws(GrowthBookPayload.Untranslatable) in
            _ = try GrowthBookPayload.feature(experiment: shown.definition, key: shown.key)
        }
    }
}

/// `PUT /v1/experiments/{key}`: the key and the definition.
struct ExperimentUpload: RouteRequest {
    let upload: DefinitionUpload

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        upload = try DefinitionUpload(request, limits: limits)
    }
}

/// `PATCH /v1/experiments/{key}`: the key, the body's media type (415 unless a merge patch or
/// JSON), `If-Match: "<revision>"`, and the patch, an object (the members the server adds
/// dropped).
struct ExperimentPatchRequest: RouteRequest {
    let key: String
    let ifMatch: IfMatch?
    let patch: JSONObject

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        key = try request.definitionKey()
        try Self.checkMediaType(request)
        if let header = request.headers["If-Match"] {
            guard let parsed = IfMatch(header) else {
                throw ResponseError(.problem(400, "If-Match must be * or the experiment's revision as an entity tag, such as \"3\"; found \(header).",
                                             type: ProblemType.malformed))
            }
            ifMatch = parsed
        } else {
            ifMatch = nil
        }
        let body = try request.jsonBody(limits).get()
        guard var patch = body.objectValue else {
            throw ResponseError(.problem(
                400, "A patch of an experiment is a JSON object of the members to change, such as {\"status\": \"stopped\"}; found \(body.typeName).",
                type: ProblemType.malformed))
        }
        for member in DefinitionUpload.serverMembers { patch[member] = nil }
        self.patch = patch
    }

    /// 415 unless the body is labelled as a merge patch or as JSON (or not labelled at all):
    /// a JSON Patch (RFC 6902) array, or a form, would be read as something it is not.
    static func checkMediaType(_ request: Request) throws(ResponseError) {
        guard let header = request.headers["Content-Type"] else { return }
        let type = header.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard !ExperimentController.patchTypes.contains(type) else { return }
        var response = Response.problem(
            415, "PATCH takes a JSON merge patch (Content-Type: application/merge-patch+json, or application/json); found \(header).",
            type: ProblemType.unsupportedMediaType)
        response.headers["Accept-Patch"] = ExperimentController.patchTypes.joined(separator: ", ")
        throw ResponseError(response)
    }
}

/// `GET /v1/experiments/{key}/report`: the key, `?metric=` and `?baseline=` (checked against
/// the experiment's figures).
struct ExperimentReportRequest: RouteRequest {
    let key: String
    let metric: String?
    let baseline: String?

    init(_ request: Request, limits: BodyLimits) {
        key = request.parameter("key")
        metric = request.queryValue("metric")
        baseline = request.queryValue("baseline")
    }
}

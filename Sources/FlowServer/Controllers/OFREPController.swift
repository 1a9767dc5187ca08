// OFREP: the OpenFeature Remote Evaluation Protocol's evaluation routes, opened by client keys.
import FeatureFlags
import HTTPServer
import JSON

/// The server side of OFREP (`service/openapi.yaml` of open-feature/protocol): an app holding a
/// client key evaluates flags, and sees the experiments it is in, through any OpenFeature SDK
/// with an OFREP provider.
///
/// - Values are those of `POST /v1/flags/evaluate` for the same context (one evaluation, one
///   context reader); reasons are mapped to OFREP's enum (``EvaluationReason/ofrep``).
/// - Experiments are flags keyed `experiment:<key>`, whose value is the variant a session
///   created for this context is assigned (``ExperimentDefinition/evaluate(key:context:requiringTargetingKey:)``).
/// - OFREP's targeting key is mandatory: a flag or experiment that splits on it, asked for a
///   context without one, answers `TARGETING_KEY_MISSING` (where `POST /v1/flags/evaluate`
///   serves the default variant).
/// - Error bodies are OFREP's (`{key?, errorCode, errorDetails}`), not problem documents; 401
///   has no body. What the HTTP layer answers before a route runs (413, 503 while stopping, 429
///   from the failed-credentials limit) stays a problem document, as on every route.
///
/// ```sh
/// curl -s localhost:8080/ofrep/v1/evaluate/flags/eu-face-scan -H "X-API-Key: $KEY" \
///   -d '{"context": {"targetingKey": "ada", "country": "DE"}}'
/// # {"key":"eu-face-scan","value":true,"reason":"TARGETING_MATCH","variant":"on"}
/// ```
struct OFREPController: Controller {
    let registry: DefinitionRegistry
    let keys: ClientKeys
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.route("POST", "/ofrep/v1/evaluate/flags/{key}", limits: limits, evaluate)
        router.route("POST", "/ofrep/v1/evaluate/flags", limits: limits, evaluateAll)
    }

    func evaluate(_ request: OFREPRequest) throws(ResponseError) -> OFREPEvaluationAnswer {
        try authorize(request)
        let key = request.http.parameter("key")
        let context = try request.context.mapError { ResponseError($0.response(key: key)) }.get()
        return OFREPEvaluationAnswer(key: key, details: Application.evaluateOFREP(key: key, context: context, registry: registry))
    }

    func evaluateAll(_ request: OFREPRequest) throws(ResponseError) -> Revalidated<OFREPBulkAnswer> {
        try authorize(request)
        let context = try request.context.mapError { ResponseError($0.response(key: nil)) }.get()
        // One snapshot of the definitions, so the answer and its ETag belong together.
        let answer = OFREPBulkAnswer(inputs: registry.sessionInputs, context: context)
        let notModified = request.ifNoneMatch.map { Application.noneMatchHolds($0, answer.etag) == false } ?? false
        return Revalidated(answer: answer, notModified: notModified)
    }

    /// Lets the request through when it presents a live client key (`X-API-Key`, or
    /// `Authorization: Bearer fsk_…`); otherwise 401 with no body, as OFREP specifies. The admin
    /// token and session tokens are not client keys: OFREP serves what ships in an app.
    private func authorize(_ request: OFREPRequest) throws(ResponseError) {
        guard let presented = request.clientKey, try keys.lookup(presented) != nil else {
            var response = Response(status: 401)
            response.headers["WWW-Authenticate"] = "Bearer"
            throw ResponseError(response)
        }
    }
}

/// An OFREP evaluation: the client key, the context (its failure kept to answer once the key is
/// checked: 401 before 400), and `If-None-Match`.
struct OFREPRequest: RouteRequest {
    let clientKey: String?
    let context: Result<EvaluationContext, Application.OFREPRequestFailure>
    let ifNoneMatch: String?
    let http: Request

    init(_ request: Request, limits: BodyLimits) {
        clientKey = ClientKeys.presented(in: request)
        context = Application.ofrepContext(request, limits)
        ifNoneMatch = request.headers["If-None-Match"]
        http = request
    }
}

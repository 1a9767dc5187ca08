// OFREP: the OpenFeature Remote Evaluation Protocol's evaluation routes, opened by client keys.
import FeatureFlags
import Foundation
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
extension Application {
    /// What names an experiment among OFREP's flags: `experiment:onboarding-length`. A flag key
    /// is letters, digits, `.`, `_` and `-`, so no flag can take such a key.
    static let experimentFlagPrefix = "experiment:"

    static func addOFREPRoutes(to router: inout Router, registry: DefinitionRegistry, keys: ClientKeys, limits: BodyLimits) {
        router.route("POST", "/ofrep/v1/evaluate/flags/{key}") { request throws(ResponseError) in
            try authorizeClient(request, keys)
            let key = request.pathParameters["key"] ?? ""
            let context: EvaluationContext
            switch ofrepContext(request, limits) {
            case .success(let read): context = read
            case .failure(let failure): return failure.response(key: key)
            }
            let details = evaluateOFREP(key: key, context: context, registry: registry)
            var writer = JSONWriter()
            details.writeOFREP(key: key, to: &writer)
            return .json(writer.takeBytes(), status: details.ofrepStatus)
        }

        router.route("POST", "/ofrep/v1/evaluate/flags") { request throws(ResponseError) in
            try authorizeClient(request, keys)
            let context: EvaluationContext
            switch ofrepContext(request, limits) {
            case .success(let read): context = read
            case .failure(let failure): return failure.response(key: nil)
            }
            // One snapshot of the definitions, so the answer and its ETag belong together.
            let inputs = registry.sessionInputs
            var writer = JSONWriter()
            writer.beginObject()
            writer.writeKey("flags")
            writer.beginArray()
            for (key, flag) in inputs.flags {
                flag.evaluate(key: key, context: context, requiringTargetingKey: true).writeOFREP(key: key, to: &writer)
            }
            for (key, experiment) in inputs.experiments {
                experiment.evaluate(key: key, context: context, requiringTargetingKey: true)
                    .writeOFREP(key: experimentFlagPrefix + key, to: &writer)
            }
            writer.endArray()
            writer.endObject()
            let body = writer.takeBytes()
            // A strong tag of the answer itself: equal bytes, equal tag, whatever changed or did
            // not in between; so a client polling with If-None-Match is told 304 exactly when
            // its copy is still what it would get.
            let etag = "\"" + BearerToken.base64URL(Array(BearerToken.digest(body).prefix(18))) + "\""
            var response = Response.json(body)
            response.headers["ETag"] = etag
            if let header = request.headers["If-None-Match"], noneMatchHolds(header, etag) == false {
                return .notModified(response)
            }
            return response
        }
    }

    /// The flag `key`, or the experiment `experiment:<key>`, evaluated for `context` as OFREP
    /// asks (targeting key required where a split needs it); `FLAG_NOT_FOUND` when neither exists.
    static func evaluateOFREP(key: String, context: EvaluationContext, registry: DefinitionRegistry) -> EvaluationDetails {
        if key.hasPrefix(experimentFlagPrefix) {
            let name = String(key.dropFirst(experimentFlagPrefix.count))
            guard let experiment = registry.experiment(name) else {
                return .failure(.flagNotFound, message: "no experiment is defined with key \(JSONValue.string(name).jsonText)")
            }
            return experiment.definition.evaluate(key: name, context: context, requiringTargetingKey: true)
        }
        guard let flag = registry.flag(key) else { return .flagNotFound(key: key) }
        return flag.definition.evaluate(key: key, context: context, requiringTargetingKey: true)
    }

    /// Lets the request through when it presents a live client key (`X-API-Key`, or
    /// `Authorization: Bearer fsk_…`); otherwise 401 with no body, as OFREP specifies. The admin
    /// token and session tokens are not client keys: OFREP serves what ships in an app.
    static func authorizeClient(_ request: Request, _ keys: ClientKeys) throws(ResponseError) {
        guard let presented = ClientKeys.presented(in: request), try keys.lookup(presented) != nil else {
            var response = Response(status: 401)
            response.headers["WWW-Authenticate"] = "Bearer"
            throw ResponseError(response)
        }
    }

    /// Why an OFREP request could not be evaluated at all: its 400 body.
    struct OFREPRequestFailure: Error {
        let code: EvaluationErrorCode
        let details: String

        /// OFREP's `evaluationFailure` (with the flag's key) or `bulkEvaluationFailure` (without).
        func response(key: String?) -> Response {
            var object = JSONObject()
            if let key { object["key"] = .string(key) }
            object["errorCode"] = .string(code.ofrep)
            object["errorDetails"] = .string(details)
            return .json(Array(JSONValue.object(object).jsonText.utf8), status: 400)
        }
    }

    /// OFREP's `{"context": {"targetingKey": …, …attributes}}` read into a context, the way
    /// `POST /v1/flags/evaluate` reads `{targetingKey, attributes}`. A body that is not a JSON
    /// object is `PARSE_ERROR`; a missing or non-object `context`, or a targeting key that is not
    /// a string, is `INVALID_CONTEXT`. Other members of the body are ignored (OFREP's request
    /// schema allows them).
    static func ofrepContext(_ request: Request, _ limits: BodyLimits) -> Result<EvaluationContext, OFREPRequestFailure> {
        let json: JSONValue
        switch request.jsonBody(limits) {
        case .success(let parsed): json = parsed
        case .failure(let error):
            // The problem's detail says where the JSON broke; OFREP carries it as errorDetails.
            let detail = (try? JSONParser.parse(error.response.body))?.objectValue?["detail"]?.stringValue ?? "The body is not valid JSON."
            return .failure(OFREPRequestFailure(code: .parseError, details: detail + #" Expected {"context": {"targetingKey": "…", …}}."#))
        }
        guard let object = json.objectValue else {
            return .failure(OFREPRequestFailure(code: .parseError, details: #"the body must be an object {"context": {"targetingKey": "…", …}}; found "# + json.typeName))
        }
        guard let raw = object["context"] else {
            return .failure(OFREPRequestFailure(code: .invalidContext, details: #"the body has no "context"; expected {"context": {"targetingKey": "…", …}}"#))
        }
        guard let members = raw.objectValue else {
            return .failure(OFREPRequestFailure(code: .invalidContext, details: "\"context\" must be an object; found \(raw.typeName)"))
        }
        let attributes = members.members.filter { $0.key != "targetingKey" }
        let (context, problems) = evaluationContext(targetingKey: members["targetingKey"], at: JSONPointer(["context", "targetingKey"]),
                                                    attributes: attributes)
        guard problems.isEmpty else {
            return .failure(OFREPRequestFailure(code: .invalidContext, details: problems.map { "\($0.pointer) \($0.detail)" }.joined(separator: "; ")))
        }
        return .success(context)
    }

    /// Whether `If-None-Match` lets the request through for an answer tagged `etag`: false when
    /// it lists `etag` (compared weakly, RFC 9110 §13.1.2), so the answer is 304. `*` is not
    /// a tag this route gave: OFREP's 304 means "the flags you hold are current", which a
    /// client that holds none cannot claim.
    static func noneMatchHolds(_ header: String, _ etag: String) -> Bool {
        for part in header.split(separator: ",") {
            var tag = Substring(part.trimmingCharacters(in: .whitespaces))
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == etag { return false }
        }
        return true
    }
}

// OFREP's evaluation, apart from its routes (OFREPController): reading the context, evaluating a
// flag or an experiment as OFREP asks, and its 400 bodies.
import FeatureFlags
import Foundation
import HTTPServer
import JSON

extension Application {
    /// What names an experiment among OFREP's flags: `experiment:onboarding-length`. A flag key
    /// is letters, digits, `.`, `_` and `-`, so no flag can take such a key.
    static let experimentFlagPrefix = "experiment:"

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

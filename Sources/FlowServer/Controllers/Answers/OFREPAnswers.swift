// The answers of the OFREP routes: one flag's evaluation, and all of them with their tag.
import FeatureFlags
import HTTPServer
import JSON

/// OFREP's `evaluationSuccess` or `evaluationFailure` for one flag, with its status (404 for an
/// unknown flag, 400 for a failed evaluation).
struct OFREPEvaluationAnswer: JSONAnswer {
    let key: String
    let details: EvaluationDetails

    var status: Int { details.ofrepStatus }

    func encode(into writer: inout JSONWriter) {
        details.writeOFREP(key: key, to: &writer)
    }
}

/// `{"flags": [evaluation…]}`: every flag, then every experiment as `experiment:<key>`, with a
/// strong tag of the answer itself: equal bytes, equal tag, whatever changed or did not in
/// between; so a client polling with If-None-Match is told 304 exactly when its copy is still
/// what it would get.
struct OFREPBulkAnswer: ResponseEncodable {
    let body: [UInt8]
    let etag: String

    init(inputs: (flags: [(key: String, value: FlagDefinition)], experiments: [(key: String, value: ExperimentDefinition)],
                  live: [String: Int]), context: EvaluationContext) {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("flags")
        writer.beginArray()
        for (key, flag) in inputs.flags {
            flag.evaluate(key: key, context: context, requiringTargetingKey: true).writeOFREP(key: key, to: &writer)
        }
        for (key, experiment) in inputs.experiments {
            experiment.evaluate(key: key, context: context, requiringTargetingKey: true)
                .writeOFREP(key: Application.experimentFlagPrefix + key, to: &writer)
        }
        writer.endArray()
        writer.endObject()
        body = writer.takeBytes()
        etag = "\"" + BearerToken.base64URL(Array(BearerToken.digest(body).prefix(18))) + "\""
    }

    func response() -> Response {
        var response = Response.json(body)
        response.headers["ETag"] = etag
        return response
    }
}

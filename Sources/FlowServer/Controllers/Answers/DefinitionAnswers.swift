// The answers of the flag and experiment routes: a stored definition with its key, revision and
// time of update; a list of them; flag evaluations.
import FeatureFlags
import HTTPServer
import JSON

/// The stored definition with `key` first, then its members, `revision` and `updatedAt`; an
/// upload's answer also has `warnings` (`{pointer, detail}`).
struct DefinitionAnswer: JSONAnswer {
    let key: String
    let text: String
    let revision: Int
    let updatedAt: String
    var warnings: [ProblemDetails.FieldError]?
    var status = 200
    /// `"<revision>"`, for the routes that make a change conditional on it (experiments).
    var etag: String?

    var capacity: Int { text.utf8.count + 96 }

    func encode(into writer: inout JSONWriter) {
        var object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject()
        var members: [JSONObject.Member] = [.init(key: "key", value: .string(key))]
        members += object.members
        object = JSONObject(members)
        object["revision"] = .integer(revision)
        object["updatedAt"] = .string(updatedAt)
        if let warnings {
            object["warnings"] = .array(warnings.map { ["pointer": .string($0.pointer), "detail": .string($0.detail)] })
        }
        writer.writeObject(object)
    }
}

/// `{<name>: [definition…]}`: every flag or experiment.
struct DefinitionListAnswer: JSONAnswer {
    let name: String
    let items: [(key: String, text: String, revision: Int, updatedAt: String)]

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(name)
        writer.beginArray()
        for item in items {
            DefinitionAnswer(key: item.key, text: item.text, revision: item.revision, updatedAt: item.updatedAt).encode(into: &writer)
        }
        writer.endArray()
        writer.endObject()
    }
}

/// `{key: {value, variant, reason, errorCode?}, …}` in key order.
struct FlagEvaluationsAnswer: JSONAnswer {
    let evaluations: FlagEvaluations

    func encode(into writer: inout JSONWriter) {
        evaluations.write(to: &writer)
    }
}

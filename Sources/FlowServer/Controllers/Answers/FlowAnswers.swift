// The answers of the flow routes: the list of flows, a stored definition, a version just stored
// or made live, and a flow test's report.
import FlowScenarios
import HTTPServer
import JSON

/// `{"flows": [{name, liveVersion, latestVersion}]}`.
struct FlowListAnswer: JSONAnswer {
    let flows: [(name: String, live: Int?, latest: Int)]

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("flows")
        writer.beginArray()
        for flow in flows {
            writer.beginObject()
            writer.writeKey("name")
            writer.writeString(flow.name)
            writer.writeKey("liveVersion")
            writer.writeOptionalInteger(flow.live)
            writer.writeKey("latestVersion")
            writer.writeInteger(flow.latest)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}

/// The stored definition as uploaded, with its `version` (and whether it is live) added, so it
/// can be edited and PUT back as it is.
struct FlowDocumentAnswer: JSONAnswer {
    let flow: DefinitionRegistry.StoredFlow
    let version: Int
    let live: Bool

    var capacity: Int { flow.text.utf8.count + 64 }

    func encode(into writer: inout JSONWriter) {
        var object = (try? JSONParser.parse(flow.text, limits: .storedData))?.objectValue ?? JSONObject()
        object["version"] = .integer(version)
        object["live"] = .bool(live)
        writer.writeObject(object)
    }
}

/// `{name, version, live}`, and `impact` (an object, or null when it could not be computed) and
/// `warnings` (`{pointer, detail}`) when set; a stored version is 201 with its `Location`.
struct FlowVersionAnswer: JSONAnswer {
    let change: FlowService.VersionChange
    var created = false

    var status: Int { created ? 201 : 200 }
    var headers: [(name: String, value: String)] {
        created ? [("Location", "/v1/flows/\(change.name)/versions/\(change.version)")] : []
    }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("name")
        writer.writeString(change.name)
        writer.writeKey("version")
        writer.writeInteger(change.version)
        writer.writeKey("live")
        writer.writeBool(change.live)
        if let impact = change.impact {
            writer.writeKey("impact")
            if let impact { writer.writeRawValue(impact) } else { writer.writeNull() }
        }
        writer.writeKey("warnings")
        writer.writeValue(.array(change.warnings))
        writer.endObject()
    }
}

/// `{flow, version, flowVersions, passed, failed, scenarios: [ScenarioResult]}`.
struct FlowTestAnswer: JSONAnswer {
    let name: String
    let version: Int
    let versions: [String: Int]
    let results: [ScenarioResult]

    var capacity: Int { 256 + results.count * 128 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("flow")
        writer.writeString(name)
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("flowVersions")
        writer.writeRawValue(DefinitionRegistry.encode(versions))
        writer.writeKey("passed")
        writer.writeInteger(results.filter(\.passed).count)
        writer.writeKey("failed")
        writer.writeInteger(results.filter { !$0.passed }.count)
        writer.writeKey("scenarios")
        writer.beginArray()
        for result in results { result.write(into: &writer) }
        writer.endArray()
        writer.endObject()
    }
}

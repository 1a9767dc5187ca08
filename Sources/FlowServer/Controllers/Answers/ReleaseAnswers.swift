// The answers of the release routes: one release, and the list of them.
import FlowStore
import HTTPServer
import JSON

/// `{id, state, description, flows, previous, flags, experiments, tests, createdBy, createdAt,
/// approvedBy, activatedBy, activatedAt, rolledBackAt, reason, rollout}`; a new one is 201 with
/// its `Location`.
struct ReleaseAnswer: JSONAnswer {
    let release: ReleaseRecord
    var created = false

    var status: Int { created ? 201 : 200 }
    var headers: [(name: String, value: String)] { created ? [("Location", "/v1/releases/\(release.id)")] : [] }
    var capacity: Int { 512 + (release.tests?.utf8.count ?? 0) }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("id")
        writer.writeInteger(release.id)
        writer.writeKey("state")
        writer.writeString(release.state.rawValue)
        writer.writeKey("description")
        writer.writeString(release.description)
        writer.writeKey("flows")
        writer.writeRawValue(DefinitionRegistry.encode(release.versions))
        writer.writeKey("previous")
        writer.beginObject()
        for name in release.versions.keys.sorted() {
            writer.writeKey(name)
            writer.writeOptionalInteger(release.previous?.flows[name] ?? nil)
        }
        writer.endObject()
        writer.writeKey("flags")
        writer.writeValue(.array(release.flags.keys.sorted().map { .string($0) }))
        writer.writeKey("experiments")
        writer.writeValue(.array(release.experiments.keys.sorted().map { .string($0) }))
        writer.writeKey("tests")
        if let tests = release.tests { writer.writeRawValue(Array(tests.utf8)) } else { writer.writeNull() }
        writer.writeKey("createdBy")
        writer.writeString(release.createdBy)
        writer.writeKey("createdAt")
        writer.writeString(release.createdAt)
        writer.writeKey("approvedBy")
        writer.writeOptionalString(release.approvedBy)
        writer.writeKey("activatedBy")
        writer.writeOptionalString(release.activatedBy)
        writer.writeKey("activatedAt")
        writer.writeOptionalString(release.activatedAt)
        writer.writeKey("rolledBackAt")
        writer.writeOptionalString(release.rolledBackAt)
        writer.writeKey("reason")
        writer.writeOptionalString(release.reason)
        writer.writeKey("rollout")
        if let rollout = release.rollout { writer.writeRawValue(Array(rollout.utf8)) } else { writer.writeNull() }
        writer.endObject()
    }
}

/// `{"releases": [release…]}`, oldest first.
struct ReleaseListAnswer: JSONAnswer {
    let releases: [ReleaseRecord]

    var capacity: Int { 64 + releases.count * 768 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("releases")
        writer.beginArray()
        for release in releases { ReleaseAnswer(release: release).encode(into: &writer) }
        writer.endArray()
        writer.endObject()
    }
}

// The answer of the link route: where a deep link leads.
import FlowEngine
import JSON

/// `{uri, userId, pattern, index, params, deferred, pendingLink, root, screens, top, handledBy, flowVersions,
/// fallbacks, experiments}`.
struct LinkResolutionAnswer: JSONAnswer {
    let uri: String
    let userId: String
    let outcome: LinkOutcome
    let start: SessionService.Start

    var capacity: Int { 2048 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("uri")
        writer.writeString(uri)
        writer.writeKey("userId")
        writer.writeString(userId)
        writer.writeKey("pattern")
        writer.writeString(outcome.match.pattern)
        writer.writeKey("index")
        writer.writeInteger(outcome.match.index)
        writer.writeKey("params")
        writer.writeValue(.object(outcome.match.params))
        writer.writeKey("deferred")
        writer.writeBool(outcome.deferred)
        writer.writeKey("pendingLink")
        outcome.tree.writePendingLink(into: &writer)
        writer.writeKey("root")
        outcome.tree.writeRoot(into: &writer)
        writer.writeKey("screens")
        outcome.tree.writeScreens(into: &writer)
        writer.writeKey("top")
        outcome.tree.writeTop(into: &writer)
        writer.writeKey("handledBy")
        writer.writeString(outcome.handledBy)
        writer.writeKey("flowVersions")
        writer.writeRawValue(DefinitionRegistry.encode(start.versions))
        writer.writeKey("fallbacks")
        writer.writeRawValue(DefinitionRegistry.encode(start.fallbacks))
        writer.writeKey("experiments")
        writer.writeRawValue(SessionCodecs.encode(start.exposures))
        writer.endObject()
    }
}

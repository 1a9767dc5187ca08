// The admin route that tells where a deep link leads for a user, without creating anything.
import FlowEngine
import HTTPServer
import JSON

extension Application {
    static func addLinkRoutes(to router: inout Router, sessions: SessionService, admin: AdminAuthorization) {
        router.adminRoute("GET", "/v1/links/resolve", admin) { request throws(ResponseError) in
            guard let uri = request.queryValue("uri") else {
                throw ResponseError(.problem(400, "Query parameter uri is required: the deep link to resolve, such as /modal/Hi.",
                                             type: ProblemType.malformed, errors: [.init(pointer: "uri", detail: "is required")]))
            }
            guard let userId = request.queryValue("userId"), !userId.isEmpty, userId.utf8.count <= SessionInput.maxUserIdBytes else {
                throw ResponseError(.problem(
                    400, "Query parameter userId is required (1 to \(SessionInput.maxUserIdBytes) bytes): links are resolved as a new session of that user would follow them.",
                    type: ProblemType.malformed, errors: [.init(pointer: "userId", detail: "is required")]))
            }
            // Every other query parameter is a string attribute (country=DE), as a session's would be.
            var attributes: [String: JSONValue] = [:]
            for item in request.query where item.name != "uri" && item.name != "userId" && attributes.count < SessionInput.maxAttributes {
                attributes[item.name] = .string(item.value)
            }
            let start = try sessions.start(userId: userId, attributes: attributes, traits: [:])
            let outcome: LinkOutcome
            do throws(FlowError) {
                outcome = try FlowEngine.followLink(uri, from: nil, catalog: start.catalog, context: start.context, field: "uri")
            } catch {
                throw ResponseError(SessionService.problem(for: error))
            }
            return .json(Self.resolution(uri: uri, userId: userId, outcome, start: start))
        }
    }

    /// `{uri, userId, pattern, index, params, deferred, pendingLink, root, screens, top, handledBy, flowVersions, experiments}`.
    static func resolution(uri: String, userId: String, _ outcome: LinkOutcome, start: SessionService.Start) -> [UInt8] {
        var writer = JSONWriter(capacity: 2048)
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
        writer.writeKey("experiments")
        writer.writeRawValue(SessionService.encode(start.exposures))
        writer.endObject()
        return writer.takeBytes()
    }
}

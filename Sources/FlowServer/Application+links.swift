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
            guard let userId = request.queryValue("userId"), SessionInput.isValidUserId(userId) else {
                throw ResponseError(.problem(
                    400, "Query parameter userId is required (1 to \(SessionInput.maxUserIdLength) characters, no control characters): links are resolved as a new session of that user would follow them.",
                    type: ProblemType.malformed, errors: [.init(pointer: "userId", detail: "is required: 1 to \(SessionInput.maxUserIdLength) characters with no control characters")]))
            }
            // `client.platform`, `client.appVersion` and `client.features` (comma-separated, or
            // repeated) describe the client, as `client` does at session creation; every other
            // query parameter is a string attribute (country=DE), as a session's would be.
            let client = try Self.clientQuery(request)
            var attributes: [String: JSONValue] = [:]
            for item in request.query where item.name != "uri" && item.name != "userId" && !item.name.hasPrefix("client.")
                && attributes.count < SessionInput.maxAttributes {
                attributes[item.name] = .string(item.value)
            }
            let start = try sessionCall { () throws(SessionError) in
                try sessions.start(userId: userId, attributes: attributes, traits: [:], client: client)
            }
            let outcome: LinkOutcome
            do throws(FlowError) {
                outcome = try FlowEngine.followLink(uri, from: nil, catalog: start.catalog, context: start.context, field: "uri")
            } catch {
                throw ResponseError(SessionError.problem(for: error))
            }
            return .json(Self.resolution(uri: uri, userId: userId, outcome, start: start))
        }
    }

    /// The client named by `client.platform`, `client.appVersion` and `client.features`
    /// (comma-separated, or repeated; present but empty: a client that renders nothing), nil
    /// when none of them is given. Checked as a session's `client` is, problems named by parameter.
    static func clientQuery(_ request: Request) throws(ResponseError) -> ClientCapabilities? {
        var object = JSONObject()
        var features: [JSONValue]?
        for item in request.query {
            switch item.name {
            case "client.platform": object["platform"] = .string(item.value)
            case "client.appVersion": object["appVersion"] = .string(item.value)
            case "client.features":
                features = (features ?? []) + item.value.split(separator: ",", omittingEmptySubsequences: true)
                    .map { .string(String($0)) }
            case let name where name.hasPrefix("client."):
                throw ResponseError(.problem(
                    400, "Unknown query parameter \(name.prefix(100)); a client is described by client.platform, client.appVersion and client.features.",
                    type: ProblemType.malformed, errors: [.init(pointer: String(name.prefix(100)), detail: "unknown client parameter")]))
            default: break
            }
        }
        if let features { object["features"] = .array(features) }
        guard !object.isEmpty else { return nil }
        do throws(DefinitionProblems) {
            return try ClientCapabilities(json: .object(object), at: JSONPointer())
        } catch {
            // `/features/3` names the query parameter `client.features`.
            let errors = error.problems.map { problem -> ProblemDetails.FieldError in
                let field = problem.path.split(separator: "/").first.map(String.init) ?? "features"
                return .init(pointer: "client." + field, detail: problem.message)
            }
            throw ResponseError(.problem(400, "The client query parameters have \(errors.count) problem\(errors.count == 1 ? "" : "s"); see errors.",
                                         type: ProblemType.malformed, errors: errors))
        }
    }

    /// `{uri, userId, pattern, index, params, deferred, pendingLink, root, screens, top, handledBy, flowVersions,
    /// fallbacks, experiments}`.
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
        writer.writeKey("fallbacks")
        writer.writeRawValue(DefinitionRegistry.encode(start.fallbacks))
        writer.writeKey("experiments")
        writer.writeRawValue(SessionCodecs.encode(start.exposures))
        writer.endObject()
        return writer.takeBytes()
    }
}

// The link route: where a deep link leads for a user, without creating anything.
import FlowEngine
import HTTPServer
import JSON

/// `GET /v1/links/resolve?uri=&userId=&client.…=&<attribute>=`.
struct LinkController: Controller {
    let sessions: SessionService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/links/resolve", admin, limits: limits, resolve)
    }

    /// The link followed from the first screens a new session of that user would get.
    func resolve(_ request: LinkRequest) throws(ResponseError) -> LinkResolutionAnswer {
        let start = try sessionCall { () throws(SessionError) in
            try sessions.start(userId: request.userId, attributes: request.attributes, traits: [:], client: request.client)
        }
        let outcome: LinkOutcome
        do throws(FlowError) {
            outcome = try FlowEngine.followLink(request.uri, from: nil, catalog: start.catalog, context: start.context, field: "uri")
        } catch {
            throw ResponseError(SessionError.problem(for: error))
        }
        return LinkResolutionAnswer(uri: request.uri, userId: request.userId, outcome: outcome, start: start)
    }
}

/// `uri` and `userId` (both required, 400), the client (`client.platform`, `client.appVersion`,
/// `client.features`, as `client` at session creation), and every other query parameter as a
/// string attribute (country=DE), as a session's would be.
struct LinkRequest: RouteRequest {
    let uri: String
    let userId: String
    let client: ClientCapabilities?
    let attributes: [String: JSONValue]

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        guard let uri = request.queryValue("uri") else {
            throw ResponseError(.problem(400, "Query parameter uri is required: the deep link to resolve, such as /modal/Hi.",
                                         type: ProblemType.malformed, errors: [.init(pointer: "uri", detail: "is required")]))
        }
        guard let userId = request.queryValue("userId"), SessionInput.isValidUserId(userId) else {
            throw ResponseError(.problem(
                400, "Query parameter userId is required (1 to \(SessionInput.maxUserIdLength) characters, no control characters): links are resolved as a new session of that user would follow them.",
                type: ProblemType.malformed, errors: [.init(pointer: "userId", detail: "is required: 1 to \(SessionInput.maxUserIdLength) characters with no control characters")]))
        }
        self.uri = uri
        self.userId = userId
        client = try Self.client(request)
        var attributes: [String: JSONValue] = [:]
        for item in request.query where item.name != "uri" && item.name != "userId" && !item.name.hasPrefix("client.")
            && attributes.count < SessionInput.maxAttributes {
            attributes[item.name] = .string(item.value)
        }
        self.attributes = attributes
    }

    /// The client named by `client.platform`, `client.appVersion` and `client.features`
    /// (comma-separated, or repeated; present but empty: a client that renders nothing), nil
    /// when none of them is given. Checked as a session's `client` is, problems named by parameter.
    static func client(_ request: Request) throws(ResponseError) -> ClientCapabilities? {
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
}

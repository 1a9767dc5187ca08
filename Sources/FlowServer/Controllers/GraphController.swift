// Flow graphs: GET /v1/flows/{name}/graph (admin) and GET /v1/sessions/{id}/graph (session token),
// as SVG laid out by Graphviz, DOT, or Mermaid.
import FlowEngine
import FlowGraph
import HTTPServer

/// `GET /v1/flows/{name}/graph?format=&version=` and `GET /v1/sessions/{id}/graph?format=`.
struct GraphController: Controller {
    let sessions: SessionService
    let registry: DefinitionRegistry
    let renderer: GraphRenderer
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/flows/{name}/graph", admin, limits: limits, flowGraph)
        router.route("GET", "/v1/sessions/{id}/graph", limits: limits, sessionGraph)
    }

    /// The live versions, or `version` of flow `name` over the live rest.
    func flowGraph(_ request: FlowGraphRequest) throws(ResponseError) -> GraphAnswer {
        let name = request.name
        var versions = registry.liveVersions
        if let version = request.version {
            guard registry.flow(name, version: version) != nil else {
                throw ResponseError(.problem(404, "Flow \(name) has no version \(version).", type: ProblemType.notFound))
            }
            versions[name] = version
        } else if versions[name] == nil {
            throw ResponseError(.problem(404, "There is no live flow \(name).", type: ProblemType.notFound))
        }
        guard let catalog = registry.catalog(for: versions) else {
            throw ResponseError(.problem(404, "There is no live flow \(name).", type: ProblemType.notFound))
        }
        return try renderer.render(FlowGraph(catalog: catalog, root: name, versions: versions), format: request.format)
    }

    /// The session's flows at their versions, its screens marked.
    func sessionGraph(_ request: SessionGraphRequest) throws(ResponseError) -> GraphAnswer {
        let session = request.session
        let graph = try sessionCall { () throws(SessionError) in
            try sessions.withSession(session.id, token: session.token) { session in
                let versions = DefinitionRegistry.decode(String(decoding: session.flowVersionsJSON, as: UTF8.self)) ?? [:]
                return FlowGraph(catalog: session.catalog, root: session.tree.root.flow, versions: versions,
                                 marks: ScreenMarks(tree: session.tree))
            }
        }
        return try renderer.render(graph, format: request.format)
    }
}

extension Request {
    /// `?format=`: svg (the default), dot or mermaid, else 400.
    func graphFormat() throws(ResponseError) -> GraphFormat {
        guard let text = queryValue("format") else { return .svg }
        guard let format = GraphFormat(rawValue: text) else {
            throw ResponseError(.problem(400, "Query parameter format must be svg, dot or mermaid; found \(text.prefix(40)).",
                                         type: ProblemType.malformed, errors: [.init(pointer: "format", detail: "must be svg, dot or mermaid")]))
        }
        return format
    }
}

/// `GET /v1/flows/{name}/graph`: `{name}`, `?format=`, and `?version=` (nil: the live one).
struct FlowGraphRequest: RouteRequest {
    let name: String
    let format: GraphFormat
    let version: Int?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        name = request.parameter("name")
        format = try request.graphFormat()
        version = request.queryValue("version") == nil ? nil : try request.integerQuery("version", default: 1, range: 1...Int.max)
    }
}

/// `GET /v1/sessions/{id}/graph`: the session and `?format=`.
struct SessionGraphRequest: RouteRequest {
    let session: SessionRequest
    let format: GraphFormat

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        session = SessionRequest(request, limits: limits)
        format = try request.graphFormat()
    }
}

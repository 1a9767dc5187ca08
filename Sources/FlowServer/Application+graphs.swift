// Flow graphs: GET /v1/flows/{name}/graph (admin) and GET /v1/sessions/{id}/graph (session token),
// as SVG laid out by Graphviz, DOT, or Mermaid.
import FlowEngine
import FlowGraph
import HTTPServer
import Logging
import Locking

extension Application {
    static func addGraphRoutes(to router: inout Router, sessions: SessionService, registry: DefinitionRegistry,
                               admin: AdminAuthorization, renderer: GraphRenderer) {
        router.adminRoute("GET", "/v1/flows/{name}/graph", admin) { request throws(ResponseError) in
            let name = request.pathParameters["name"] ?? ""
            let format = try graphFormat(request)
            var versions = registry.liveVersions
            if request.queryValue("version") != nil {
                let version = try integerQuery(request, "version", default: 1, range: 1...Int.max)
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
            return try renderer.response(FlowGraph(catalog: catalog, root: name, versions: versions), format: format)
        }

        router.route("GET", "/v1/sessions/{id}/graph") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let format = try graphFormat(request)
            let graph = try sessionCall { () throws(SessionError) in
                try sessions.withSession(id, token: BearerToken.presented(in: request)) { session in
                    let versions = DefinitionRegistry.decode(String(decoding: session.flowVersionsJSON, as: UTF8.self)) ?? [:]
                    return FlowGraph(catalog: session.catalog, root: session.tree.root.flow, versions: versions,
                                     marks: ScreenMarks(tree: session.tree))
                }
            }
            return try renderer.response(graph, format: format)
        }
    }

    static func graphFormat(_ request: Request) throws(ResponseError) -> GraphFormat {
        guard let text = request.queryValue("format") else { return .svg }
        guard let format = GraphFormat(rawValue: text) else {
            throw ResponseError(.problem(400, "Query parameter format must be svg, dot or mermaid; found \(text.prefix(40)).",
                                         type: ProblemType.malformed, errors: [.init(pointer: "format", detail: "must be svg, dot or mermaid")]))
        }
        return format
    }
}

/// Writes graphs in the asked format, laying SVGs out with Graphviz and keeping the latest
/// ones: sessions at the same screen of the same flows share a picture.
final class GraphRenderer: Sendable {
    static let cachedPictures = 128

    private let logger: Logger
    /// Pictures by their DOT source, the least recently used dropped when full.
    private let cache: PThreadMutex<LRUTable<String, [UInt8]>>

    init(logger: Logger, capacity: Int = GraphRenderer.cachedPictures) {
        self.logger = logger
        cache = PThreadMutex(LRUTable(capacity: capacity))
    }

    /// Pictures kept, the most kept, and how many were evicted to make room (for `/metrics`).
    var figures: CacheFigures { cache.withLock { $0.figures } }

    /// The DOT sources of the pictures kept, the most recently used first (for tests).
    var picturesByRecency: [String] { cache.withLock { $0.keysByRecency } }

    func response(_ graph: FlowGraph, format: GraphFormat) throws(ResponseError) -> Response {
        let body: [UInt8]
        switch format {
        case .dot: body = Array(graph.dot().utf8)
        case .mermaid: body = Array(graph.mermaid().utf8)
        case .svg: body = try svg(graph)
        }
        return Response.bytes(body, contentType: format.contentType)
    }

    private func svg(_ graph: FlowGraph) throws(ResponseError) -> [UInt8] {
        guard graph.canLayOut else {
            throw ResponseError(.problem(
                422, "The graph is too large to lay out (\(graph.nodes.count) screens, \(graph.edges.count) edges; at most \(FlowGraph.maxNodes) screens and \(FlowGraph.maxEdges) edges); ask for format=dot or format=mermaid.",
                title: "Unprocessable Content"))
        }
        let dot = graph.dot()
        if let picture = cache.withLock({ $0.value(forKey: dot) }) { return picture }
        let picture: [UInt8]
        do {
            picture = try Graphviz.shared.svg(dot: dot)
        } catch {
            logger.error("graph layout failed", metadata: ["error": "\(error)"])
            throw ResponseError(.problem(500, "The graph could not be laid out.", title: "Internal Server Error"))
        }
        cache.withLock { $0.updateValue(picture, forKey: dot) }
        return picture
    }
}

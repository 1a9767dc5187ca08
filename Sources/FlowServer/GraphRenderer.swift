// Flow graphs rendered for the graph routes: SVG laid out by Graphviz (the latest pictures kept),
// DOT, or Mermaid.
import FlowGraph
import HTTPServer
import Locking
import Logging

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

    func render(_ graph: FlowGraph, format: GraphFormat) throws(ResponseError) -> GraphAnswer {
        let body: [UInt8]
        switch format {
        case .dot: body = Array(graph.dot().utf8)
        case .mermaid: body = Array(graph.mermaid().utf8)
        case .svg: body = try svg(graph)
        }
        return GraphAnswer(body: body, contentType: format.contentType)
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

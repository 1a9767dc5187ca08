// Graphviz: lays out DOT text with the dot engine and renders SVG, through libgvc.
import CGraphviz
import Synchronization

/// The one Graphviz context of the process. Graphviz keeps global state (its parser, its
/// plugins), so every call holds one lock; layouts of the graphs drawn here take milliseconds.
///
/// ```swift
/// let svg = try Graphviz.shared.svg(dot: graph.dot())
/// ```
public final class Graphviz: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static let shared = Graphviz()

    private let context: Mutex<OpaquePointer?>

    private init() {
        context = Mutex(gvContext())
    }

    /// `dot` laid out and rendered as an SVG document.
    public func svg(dot: String) throws(Failure) -> [UInt8] {
        try render(dot: dot, format: "svg")
    }

    private func render(dot: String, format: String) throws(Failure) -> [UInt8] {
        let outcome: Result<[UInt8], Failure> = context.withLock { context in
            guard let context else { return .failure(Failure(description: "Graphviz could not start (gvContext failed)")) }
            var result: UnsafeMutablePointer<CChar>?
            var length: UInt32 = 0
            let code = flowstack_graphviz_render(context, dot, format, &result, &length)
            defer { if let result { gvFreeRenderData(result) } }
            guard code == 0, let result else {
                let reason = switch code {
                case 1: "could not read the DOT text"
                case 2: "could not lay out the graph (is libgvc's dot plugin installed and configured?)"
                default: "could not render \(format) (is libgvc's core plugin installed?)"
                }
                return .failure(Failure(description: "Graphviz " + reason))
            }
            return .success(result.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                Array(UnsafeBufferPointer(start: $0, count: Int(length)))
            })
        }
        return try outcome.get()
    }
}

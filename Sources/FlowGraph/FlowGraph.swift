// FlowGraph: the picture of a set of flow definitions: screens as nodes, actions as labelled
// edges, child and presented flows as nested clusters, deep links as entry points. Built from a
// catalog; written as DOT or Mermaid text, or laid out by Graphviz as SVG.
import FlowEngine

/// A graph of flows, ready to be written in any ``GraphFormat``.
///
/// ```swift
/// let graph = FlowGraph(catalog: catalog, root: "app")
/// print(graph.dot())
/// ```
public struct FlowGraph: Sendable, Equatable {
    /// A flow drawn as a cluster; `parent` is the cluster of the flow that first names it.
    public struct Cluster: Sendable, Equatable {
        public var flow: String
        public var kind: FlowKind?
        public var version: Int?
        public var parent: Int?
        /// Reached through a `present` effect rather than as an entry.
        public var presented: Bool
        /// A tabbed flow's tab screens, drawn side by side.
        public var tabs: [Int] = []
    }

    /// A screen of one flow.
    public struct Node: Sendable, Equatable {
        public enum Role: Sendable, Equatable {
            case screen(feature: String)
            /// A native step the app runs (`{"handoff": "purchase"}`): a screen whose feature is
            /// the kind, drawn apart from the screens the app renders.
            case handoff(kind: String)
            /// Where the root flow starts.
            case start
            /// A flow the catalog does not define.
            case missingFlow(String)
            /// Stands for a flow with no screens of its own, so edges can reach its cluster.
            case anchor
            /// A deep link of the root flow: an entry point labelled with its pattern.
            case link(pattern: String)
        }
        public var role: Role
        public var cluster: Int?
        public var mark: Mark

        /// The node's stable id, also its id in SVG: `screen-<flow>-<feature>`, `link-<index>`.
        public var id: String
    }

    /// How a session's state marks a screen.
    public enum Mark: Sendable, Equatable {
        case none
        /// The screen on top.
        case current
        /// On screen behind the top, or in the stack under it.
        case onStack
    }

    public enum EdgeStyle: Sendable, Equatable {
        /// push, setRoot, replaceRoot, selectTab, or a rule that moves nothing.
        case forward
        /// pop, popTo, popToRoot, dismiss, dismissAll.
        case back
        case present
        case start
        /// From a deep link to where following it leads.
        case link
        /// From a guarded rule's source to the flow its guard shows when it does not hold.
        case guarded
        /// From a rule with a `result` that names its receiver (`to`) to that screen.
        case result
    }

    public struct Edge: Sendable, Equatable {
        public var from: Int
        public var to: Int
        /// The edge leaves, or reaches, a whole cluster (Graphviz's `ltail`/`lhead`).
        public var fromCluster: Int?
        public var toCluster: Int?
        /// Line by line: the action type with its params, then its condition and side effects.
        public var label: [String]
        public var style: EdgeStyle
        /// The rule depends on a flag: drawn in its own colour.
        public var flagged: Bool
    }

    public internal(set) var clusters: [Cluster] = []
    public internal(set) var nodes: [Node] = []
    public internal(set) var edges: [Edge] = []
    /// Edges or flows past ``maxEdges`` or ``maxClusters`` were left out.
    public internal(set) var truncated = false
    /// The flow the graph starts from.
    public let root: String
}

/// The formats a graph can be written in.
public enum GraphFormat: String, Sendable, CaseIterable {
    case svg, dot, mermaid

    /// The Content-Type of a graph in this format.
    public var contentType: String {
        switch self {
        case .svg: "image/svg+xml"
        case .dot: "text/vnd.graphviz; charset=utf-8"
        case .mermaid: "text/vnd.mermaid; charset=utf-8"
        }
    }
}

/// Screens of a session: which one is on top and which are behind it.
public struct ScreenMarks: Sendable, Equatable {
    public struct Screen: Hashable, Sendable {
        public var flow: String
        public var feature: String

        public init(flow: String, feature: String) {
            self.flow = flow
            self.feature = feature
        }
    }

    public var current: Screen?
    public var onStack: Set<Screen>

    public init(current: Screen? = nil, onStack: Set<Screen> = []) {
        self.current = current
        self.onStack = onStack
    }

    /// The marks of a session's state: its top screen, and every screen in `screens`.
    public init(tree: FlowTree) {
        let screens = tree.screens
        self.current = screens.last.map { Screen(flow: $0.flow, feature: $0.feature) }
        self.onStack = Set(screens.dropLast().map { Screen(flow: $0.flow, feature: $0.feature) })
    }

    func mark(flow: String, feature: String) -> FlowGraph.Mark {
        let screen = Screen(flow: flow, feature: feature)
        if screen == current { return .current }
        return onStack.contains(screen) ? .onStack : .none
    }
}

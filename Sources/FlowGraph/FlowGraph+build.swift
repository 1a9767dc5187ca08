// FlowGraph+build: reads a catalog into clusters, screens and edges; the builder's flows and screens passes (edges and labels: FlowGraphBuilder+edges, +labels).
import FlowEngine
import JSON

extension FlowGraph {
    /// Bounds that keep any catalog drawable in bounded time: past `maxClusters` flows or
    /// `maxEdges` edges a graph is cut short and says so (``truncated``); Graphviz lays out
    /// graphs of at most `maxNodes` screens (``canLayOut``).
    public static let maxClusters = 64
    public static let maxNodes = 512
    public static let maxEdges = 2048

    /// Whether the graph is small and whole enough to lay out as SVG.
    public var canLayOut: Bool { !truncated && nodes.count <= Self.maxNodes }

    /// Draws `root` and every flow it can reach (initial entries, pushed, set and presented
    /// flows), each as a cluster inside the flow that first names it, and each of the root's
    /// links as an entry point with an edge to where it leads: the screens its last action
    /// reaches from anywhere (as the action's own edges show), or the root's initial entries
    /// for a link with no actions.
    ///
    /// - Parameters:
    ///   - versions: flow versions to show in the cluster labels.
    ///   - marks: a session's screens to highlight.
    public init(catalog: FlowCatalog, root: String, versions: [String: Int] = [:], marks: ScreenMarks = ScreenMarks()) {
        var builder = FlowGraphBuilder(catalog: catalog, versions: versions, marks: marks)
        builder.build(root: root)
        self.root = root
        self.clusters = builder.clusters
        self.nodes = builder.nodes
        self.edges = builder.edges
        self.truncated = builder.truncated
    }
}

/// Builds a ``FlowGraph`` in three passes: the flows reachable from the root, the screens each
/// owns, then one edge per rule and source screen.
struct FlowGraphBuilder {
    let catalog: FlowCatalog
    let versions: [String: Int]
    let marks: ScreenMarks

    var clusters: [FlowGraph.Cluster] = []
    var nodes: [FlowGraph.Node] = []
    var edges: [FlowGraph.Edge] = []
    /// The action type each edge draws, for the edges of links.
    var edgeActions: [String?] = []
    var truncated = false

    var clusterOfFlow: [String: Int] = [:]
    var children: [Int: [Int]] = [:]
    var screenNodes: [ScreenMarks.Screen: Int] = [:]
    var entries: [Int: Int] = [:]
    var entriesBeingFound: Set<Int> = []
    /// For pop: the screens of the same flow each screen is pushed from.
    var pushedFrom: [Int: [Int]] = [:]
    /// For dismiss: the screens each presented cluster is presented from.
    var presenters: [Int: [Int]] = [:]

    /// A rule whose target is known only once every push and present is drawn.
    struct BackEdge {
        var cluster: Int
        var source: Int
        var sourceCluster: Int?
        var label: [String]
        var flagged: Bool
        var effect: FlowEffect
        var action: String
    }

    init(catalog: FlowCatalog, versions: [String: Int], marks: ScreenMarks) {
        self.catalog = catalog
        self.versions = versions
        self.marks = marks
    }

    mutating func build(root: String) {
        discoverFlows(from: root)
        for index in clusters.indices { addOwnedScreens(of: index) }
        addStartEdges()
        var backEdges: [BackEdge] = []
        for index in clusters.indices {
            guard let definition = catalog[clusters[index].flow] else { continue }
            for handler in definition.handlers {
                for rule in handler.rules {
                    addEdges(for: rule, action: handler.action, in: index, deferring: &backEdges)
                }
            }
        }
        for edge in backEdges { addBackEdge(edge) }
        addLinkEdges()
    }

    // MARK: Flows

    mutating func discoverFlows(from root: String) {
        clusters.append(FlowGraph.Cluster(flow: root, kind: catalog[root]?.kind, version: versions[root], parent: nil, presented: false))
        clusterOfFlow[root] = 0
        var next = 0
        while next < clusters.count {
            let index = next
            next += 1
            guard let definition = catalog[clusters[index].flow] else { continue }
            for (flow, presented) in Self.references(of: definition) where clusterOfFlow[flow] == nil {
                guard clusters.count < FlowGraph.maxClusters else {
                    truncated = true
                    break
                }
                clusterOfFlow[flow] = clusters.count
                children[index, default: []].append(clusters.count)
                clusters.append(FlowGraph.Cluster(
                    flow: flow, kind: catalog[flow]?.kind, version: versions[flow], parent: index, presented: presented))
            }
        }
    }

    /// The flows a definition names, in order: initial entries, then effects (a guard's `else`
    /// after the rule's own).
    static func references(of definition: FlowDefinition) -> [(flow: String, presented: Bool)] {
        var references: [(String, Bool)] = []
        for entry in definition.initial {
            if case .flow(let name, _) = entry.target { references.append((name, false)) }
        }
        for handler in definition.handlers {
            for rule in handler.rules {
                for effect in rule.effects + (rule.guarded?.otherwise ?? []) {
                    if let shown = shownFlow(effect) { references.append(shown) }
                }
            }
        }
        return references
    }

    /// The flow an effect shows, and whether it presents it.
    static func shownFlow(_ effect: FlowEffect) -> (flow: String, presented: Bool)? {
        switch effect {
        case .push(.flow(let name, _)), .setRoot(.flow(let name, _)), .replaceRoot(.flow(let name, _)):
            (name, false)
        case .present(let presentation):
            (presentation.flow, true)
        default:
            nil
        }
    }

    // MARK: Screens

    mutating func addOwnedScreens(of cluster: Int) {
        guard let definition = catalog[clusters[cluster].flow] else {
            _ = addNode(.missingFlow(clusters[cluster].flow), cluster: cluster, id: "flow-\(clusters[cluster].flow)")
            return
        }
        for entry in definition.initial {
            let node: Int
            switch entry.target {
            case .screen(let feature, _, _): node = screen(feature, in: cluster)
            case .handoff(let kind, _): node = screen(kind, in: cluster, handoff: true)
            case .flow: continue
            }
            if definition.kind == .tabbed { clusters[cluster].tabs.append(node) }
        }
        for handler in definition.handlers {
            for rule in handler.rules {
                for effect in rule.effects + (rule.guarded?.otherwise ?? []) {
                    switch effect {
                    case .push(.screen(let feature, _, _)), .setRoot(.screen(let feature, _, _)), .replaceRoot(.screen(let feature, _, _)),
                         .popTo(.feature(let feature)):
                        _ = screen(feature, in: cluster)
                    case .push(.handoff(let kind, _)), .setRoot(.handoff(let kind, _)), .replaceRoot(.handoff(let kind, _)):
                        _ = screen(kind, in: cluster, handoff: true)
                    default:
                        break
                    }
                }
            }
        }
    }

    /// The node of `feature` in the cluster's flow, made on first use; a hand-off's node is a
    /// screen whose feature is the kind, marked as a hand-off whenever an entry makes it one.
    mutating func screen(_ feature: String, in cluster: Int, handoff: Bool = false) -> Int {
        let key = ScreenMarks.Screen(flow: clusters[cluster].flow, feature: feature)
        if let node = screenNodes[key] {
            if handoff { nodes[node].role = .handoff(kind: feature) }
            return node
        }
        let node = addNode(handoff ? .handoff(kind: feature) : .screen(feature: feature), cluster: cluster,
                           id: "screen-\(key.flow)-\(feature)", mark: marks.mark(flow: key.flow, feature: feature))
        screenNodes[key] = node
        return node
    }

    mutating func addNode(_ role: FlowGraph.Node.Role, cluster: Int?, id: String, mark: FlowGraph.Mark = .none) -> Int {
        nodes.append(FlowGraph.Node(role: role, cluster: cluster, mark: mark, id: id))
        return nodes.count - 1
    }

    /// The screen a `from` names, as seen by a rule of `cluster`'s flow: a screen of that flow
    /// or of a flow inside it (an action bubbles up from there), else a new screen of its own.
    mutating func source(_ feature: String, in cluster: Int) -> Int {
        var queue = [cluster]
        var next = 0
        while next < queue.count {
            let index = queue[next]
            next += 1
            if let node = screenNodes[ScreenMarks.Screen(flow: clusters[index].flow, feature: feature)] { return node }
            queue += children[index] ?? []
        }
        return screen(feature, in: cluster)
    }

    /// The node an edge into the cluster points at: its visible initial entry (the top of a
    /// stack, the selected tab), reached through child flows; an anchor when it has none.
    mutating func entry(of cluster: Int) -> Int {
        if let node = entries[cluster] { return node }
        var node: Int?
        if !entriesBeingFound.contains(cluster), let definition = catalog[clusters[cluster].flow] {
            entriesBeingFound.insert(cluster)
            let visible = definition.kind == .tabbed && definition.initial.indices.contains(definition.selected)
                ? definition.initial[definition.selected] : definition.initial.last
            switch visible?.target {
            case .screen(let feature, _, _)?: node = screen(feature, in: cluster)
            case .handoff(let kind, _)?: node = screen(kind, in: cluster, handoff: true)
            case .flow(let name, _)?: node = clusterOfFlow[name].map { entry(of: $0) }
            case nil: node = nodes.indices.first { nodes[$0].cluster == cluster }
            }
            entriesBeingFound.remove(cluster)
        } else if catalog[clusters[cluster].flow] == nil {
            node = nodes.indices.first { nodes[$0].cluster == cluster }
        }
        let found = node ?? addNode(.anchor, cluster: cluster, id: "anchor-\(clusters[cluster].flow)")
        entries[cluster] = found
        return found
    }

    /// Where a target entry points: a screen of the cluster, or a child flow's cluster.
    mutating func target(_ target: EntryTarget, in cluster: Int) -> (node: Int, cluster: Int?) {
        switch target {
        case .screen(let feature, _, _):
            return (screen(feature, in: cluster), nil)
        case .handoff(let kind, _):
            return (screen(kind, in: cluster, handoff: true), nil)
        case .flow(let name, _):
            guard let child = clusterOfFlow[name] else { return (entry(of: cluster), cluster) }
            return (entry(of: child), child)
        }
    }
}

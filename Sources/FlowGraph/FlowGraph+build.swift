// FlowGraph+build: reads a catalog's definitions into clusters, screens and labelled edges.
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
        var builder = Builder(catalog: catalog, versions: versions, marks: marks)
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
private struct Builder {
    let catalog: FlowCatalog
    let versions: [String: Int]
    let marks: ScreenMarks

    var clusters: [FlowGraph.Cluster] = []
    var nodes: [FlowGraph.Node] = []
    var edges: [FlowGraph.Edge] = []
    /// The action type each edge draws, for the edges of links.
    private var edgeActions: [String?] = []
    var truncated = false

    private var clusterOfFlow: [String: Int] = [:]
    private var children: [Int: [Int]] = [:]
    private var screenNodes: [ScreenMarks.Screen: Int] = [:]
    private var entries: [Int: Int] = [:]
    private var entriesBeingFound: Set<Int> = []
    /// For pop: the screens of the same flow each screen is pushed from.
    private var pushedFrom: [Int: [Int]] = [:]
    /// For dismiss: the screens each presented cluster is presented from.
    private var presenters: [Int: [Int]] = [:]

    /// A rule whose target is known only once every push and present is drawn.
    private struct BackEdge {
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

    private mutating func discoverFlows(from root: String) {
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
    private static func references(of definition: FlowDefinition) -> [(flow: String, presented: Bool)] {
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
    private static func shownFlow(_ effect: FlowEffect) -> (flow: String, presented: Bool)? {
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

    private mutating func addOwnedScreens(of cluster: Int) {
        guard let definition = catalog[clusters[cluster].flow] else {
            _ = addNode(.missingFlow(clusters[cluster].flow), cluster: cluster, id: "flow-\(clusters[cluster].flow)")
            return
        }
        for entry in definition.initial {
            let node: Int
            switch entry.target {
            case .screen(let feature, _): node = screen(feature, in: cluster)
            case .handoff(let kind, _): node = screen(kind, in: cluster, handoff: true)
            case .flow: continue
            }
            if definition.kind == .tabbed { clusters[cluster].tabs.append(node) }
        }
        for handler in definition.handlers {
            for rule in handler.rules {
                for effect in rule.effects + (rule.guarded?.otherwise ?? []) {
                    switch effect {
                    case .push(.screen(let feature, _)), .setRoot(.screen(let feature, _)), .replaceRoot(.screen(let feature, _)),
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
    private mutating func screen(_ feature: String, in cluster: Int, handoff: Bool = false) -> Int {
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

    private mutating func addNode(_ role: FlowGraph.Node.Role, cluster: Int?, id: String, mark: FlowGraph.Mark = .none) -> Int {
        nodes.append(FlowGraph.Node(role: role, cluster: cluster, mark: mark, id: id))
        return nodes.count - 1
    }

    /// The screen a `from` names, as seen by a rule of `cluster`'s flow: a screen of that flow
    /// or of a flow inside it (an action bubbles up from there), else a new screen of its own.
    private mutating func source(_ feature: String, in cluster: Int) -> Int {
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
    private mutating func entry(of cluster: Int) -> Int {
        if let node = entries[cluster] { return node }
        var node: Int?
        if !entriesBeingFound.contains(cluster), let definition = catalog[clusters[cluster].flow] {
            entriesBeingFound.insert(cluster)
            let visible = definition.kind == .tabbed && definition.initial.indices.contains(definition.selected)
                ? definition.initial[definition.selected] : definition.initial.last
            switch visible?.target {
            case .screen(let feature, _)?: node = screen(feature, in: cluster)
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
    private mutating func target(_ target: EntryTarget, in cluster: Int) -> (node: Int, cluster: Int?) {
        switch target {
        case .screen(let feature, _):
            return (screen(feature, in: cluster), nil)
        case .handoff(let kind, _):
            return (screen(kind, in: cluster, handoff: true), nil)
        case .flow(let name, _):
            guard let child = clusterOfFlow[name] else { return (entry(of: cluster), cluster) }
            return (entry(of: child), child)
        }
    }

    // MARK: Edges

    private mutating func addStartEdges() {
        guard let definition = catalog[clusters[0].flow] else { return }
        let start = addNode(.start, cluster: nil, id: "start")
        for entry in definition.initial {
            let (node, cluster) = target(entry.target, in: 0)
            let condition = entry.when.map { ["when " + Self.describe($0)] } ?? []
            addEdge(from: start, to: node, toCluster: cluster, label: condition, style: .start,
                    flagged: entry.when?.mentionsFlag ?? false)
        }
    }

    private mutating func addEdges(for rule: FlowRule, action: String, in cluster: Int, deferring backEdges: inout [BackEdge]) {
        if rule.effects.contains(.bubble) { return }  // the parent's rule draws it
        let label = Self.label(action: action, rule: rule)
        let flagged = rule.when?.mentionsFlag ?? false
        var sources: [(node: Int, cluster: Int?)] = []
        if let from = rule.from {
            for feature in from { sources.append((source(feature, in: cluster), nil)) }
        } else {
            // A rule that names no screen takes the action from every screen a child flow
            // bubbles it from (the child checks those; the parent trusts it: `via`), and, unless
            // it names the children it comes through, from its own screens.
            var found = rule.via == nil ? nodes.indices.filter { nodes[$0].cluster == cluster && Self.isScreen(nodes[$0]) } : []
            for node in bubbledSources(of: action, into: cluster, via: rule.via) where !found.contains(node) { found.append(node) }
            sources = found.isEmpty ? [(entry(of: cluster), cluster)] : found.map { ($0, nil) }
        }
        let moving = rule.effects.last { Self.moves($0) }
        for (source, sourceCluster) in sources {
            switch moving {
            case .push(let entry)?, .setRoot(let entry)?, .replaceRoot(let entry)?:
                let (node, toCluster) = target(entry, in: cluster)
                if case .push? = moving, toCluster == nil, nodes[source].cluster == cluster { pushedFrom[node, default: []].append(source) }
                addEdge(from: source, to: node, fromCluster: sourceCluster, toCluster: toCluster, label: label, style: .forward, flagged: flagged, action: action)
            case .present(let presentation)?:
                let child = clusterOfFlow[presentation.flow] ?? cluster
                presenters[child, default: []].append(source)
                addEdge(from: source, to: entry(of: child), fromCluster: sourceCluster, toCluster: child,
                        label: label, style: .present, flagged: flagged, action: action)
            case .popTo(.feature(let feature))?:
                addEdge(from: source, to: screen(feature, in: cluster), fromCluster: sourceCluster, label: label, style: .back, flagged: flagged, action: action)
            case .popToRoot?:
                let first = catalog[clusters[cluster].flow]?.initial.first
                let root: (node: Int, cluster: Int?) = first.map { target($0.target, in: cluster) } ?? (entry(of: cluster), nil)
                addEdge(from: source, to: root.node, fromCluster: sourceCluster, toCluster: root.cluster, label: label, style: .back, flagged: flagged, action: action)
            case .selectTab(let choice)?:
                for (node, toCluster) in tabs(of: cluster, choice: choice) where node != source {
                    addEdge(from: source, to: node, fromCluster: sourceCluster, toCluster: toCluster, label: label, style: .forward, flagged: flagged, action: action)
                }
            case .pop?, .popTo?, .dismiss?, .dismissAll?:
                backEdges.append(BackEdge(cluster: cluster, source: source, sourceCluster: sourceCluster,
                                          label: label, flagged: flagged, effect: moving ?? .pop, action: action))
            default:
                addEdge(from: source, to: source, label: label, style: .forward, flagged: flagged, action: action)
            }
            if let guarded = rule.guarded { addGuardEdge(guarded, from: source, sourceCluster: sourceCluster, in: cluster) }
            if let (receiver, into) = resultReceiver(of: rule, in: cluster) {
                addEdge(from: source, to: receiver, fromCluster: sourceCluster, label: ["result into \(into)"], style: .result, flagged: flagged)
            }
        }
    }

    /// The dashed edge to the flow a guard shows when it does not hold; its presenters are
    /// recorded so that flow's dismiss leads back to them.
    private mutating func addGuardEdge(_ guarded: FlowGuard, from source: Int, sourceCluster: Int?, in cluster: Int) {
        guard let shown = guarded.otherwise.lazy.compactMap(Self.shownFlow).first else { return }
        let child = clusterOfFlow[shown.flow] ?? cluster
        if shown.presented { presenters[child, default: []].append(source) }
        addEdge(from: source, to: entry(of: child), fromCluster: sourceCluster, toCluster: child == cluster ? nil : child,
                label: ["guard: " + Self.describe(guarded.when)], style: .guarded, flagged: guarded.when.mentionsFlag)
    }

    /// The screen a rule's `result` names with `to`: in the handling flow, else in the nearest
    /// flow around it, else anywhere drawn; nil without `to` (the screen on top after the
    /// rule's own moves, which its edge already reaches) or when no such screen is drawn.
    private func resultReceiver(of rule: FlowRule, in cluster: Int) -> (node: Int, into: String)? {
        let named = rule.effects.lazy.compactMap { effect -> FlowEffect.ScreenResult? in
            if case .result(let result) = effect, result.to != nil { return result }
            return nil
        }.first
        guard let result = named, let feature = result.to else { return nil }
        var around: Int? = cluster
        while let index = around {
            if let node = screenNodes[ScreenMarks.Screen(flow: clusters[index].flow, feature: feature)] { return (node, result.into) }
            around = clusters[index].parent
        }
        return nodes.indices.first { nodes[$0].role == .screen(feature: feature) }.map { ($0, result.into) }
    }

    /// The screens from which a flow inside `cluster` (one of `via`, when given) passes `action`
    /// up to it: the `from` of each `bubble` rule of a child (its own screens when the rule names
    /// none), and the same one level further down through a child that does not name the action.
    private mutating func bubbledSources(of action: String, into cluster: Int, via: [String]?) -> [Int] {
        var sources: [Int] = []
        var queue = (children[cluster] ?? []).filter { via?.contains(clusters[$0].flow) ?? true }
        var next = 0
        while next < queue.count {
            let child = queue[next]
            next += 1
            guard let definition = catalog[clusters[child].flow] else { continue }
            guard let rules = definition.rules(for: action) else {
                queue += children[child] ?? []
                continue
            }
            for rule in rules where rule.bubbles {
                if let from = rule.from {
                    for feature in from { sources.append(source(feature, in: child)) }
                } else {
                    sources += nodes.indices.filter { nodes[$0].cluster == child && Self.isScreen(nodes[$0]) }
                    queue += children[child] ?? []
                }
            }
        }
        return sources
    }

    private mutating func addBackEdge(_ edge: BackEdge) {
        var targets: [Int] = []
        switch edge.effect {
        case .dismiss, .dismissAll:
            // Back to whatever presented the nearest presented flow around the source.
            var cluster = nodes[edge.source].cluster
            while let index = cluster, !clusters[index].presented { cluster = clusters[index].parent }
            targets = cluster.flatMap { presenters[$0] } ?? []
        default:
            targets = pushedFrom[edge.source] ?? []
            if targets.isEmpty, let first = catalog[clusters[edge.cluster].flow]?.initial.first {
                targets = [target(first.target, in: edge.cluster).node]
            }
        }
        if targets.isEmpty { targets = [edge.source] }
        var seen: Set<Int> = []
        for node in targets where seen.insert(node).inserted {
            addEdge(from: edge.source, to: node, fromCluster: edge.sourceCluster, label: edge.label, style: .back, flagged: edge.flagged,
                    action: edge.action)
        }
    }

    /// The tabs a selectTab reaches: one by index, or every tab when the index is a param.
    private mutating func tabs(of cluster: Int, choice: FlowEffect.TabChoice) -> [(node: Int, cluster: Int?)] {
        guard let definition = catalog[clusters[cluster].flow] else { return [] }
        switch choice {
        case .index(let index):
            guard definition.initial.indices.contains(index) else { return [] }
            return [target(definition.initial[index].target, in: cluster)]
        case .param:
            return definition.initial.map { target($0.target, in: cluster) }
        }
    }

    /// Each link is a node outside every cluster, added last so the ids and order of the other
    /// nodes do not depend on links. Its edges go where its last action's edges go (a link runs
    /// from the cold-start stack, so any source of that action may be the one it starts from);
    /// with no actions, or an action no edge draws (`back`), to the root's initial entries.
    private mutating func addLinkEdges() {
        guard let definition = catalog[clusters[0].flow], !definition.links.isEmpty else { return }
        let drawn = edges.count
        for (index, link) in definition.links.enumerated() {
            let node = addNode(.link(pattern: link.pattern.text), cluster: nil, id: "link-\(index)")
            var label: [String] = []
            if let when = link.when { label.append("when " + Self.describe(when)) }
            if !link.actions.isEmpty { label.append(link.actions.map(\.type).joined(separator: " → ")) }
            let flagged = link.when?.mentionsFlag ?? false
            var targets: [(node: Int, cluster: Int?, label: [String], flagged: Bool)] = []
            if let last = link.actions.last?.type {
                for edgeIndex in 0..<drawn where edgeActions[edgeIndex] == last {
                    let edge = edges[edgeIndex]
                    guard !targets.contains(where: { $0.node == edge.to && $0.cluster == edge.toCluster }) else { continue }
                    targets.append((edge.to, edge.toCluster, label, flagged))
                }
            }
            if targets.isEmpty {
                for entry in definition.initial {
                    let (target, cluster) = target(entry.target, in: 0)
                    let condition = entry.when.map { ["when " + Self.describe($0)] } ?? []
                    targets.append((target, cluster, label + condition, flagged || (entry.when?.mentionsFlag ?? false)))
                }
            }
            for target in targets {
                addEdge(from: node, to: target.node, toCluster: target.cluster, label: target.label, style: .link, flagged: target.flagged)
            }
        }
    }

    private mutating func addEdge(from: Int, to: Int, fromCluster: Int? = nil, toCluster: Int? = nil,
                                  label: [String], style: FlowGraph.EdgeStyle, flagged: Bool, action: String? = nil) {
        guard edges.count < FlowGraph.maxEdges else {
            truncated = true
            return
        }
        edges.append(FlowGraph.Edge(from: from, to: to, fromCluster: fromCluster, toCluster: toCluster,
                                    label: label, style: style, flagged: flagged))
        edgeActions.append(action)
    }

    // MARK: Labels

    private static func isScreen(_ node: FlowGraph.Node) -> Bool {
        switch node.role {
        case .screen, .handoff: true
        default: false
        }
    }

    private static func moves(_ effect: FlowEffect) -> Bool {
        switch effect {
        case .setUser, .bubble, .result: false
        default: true
        }
    }

    /// `type {param, optional?}`, then `when …`, then `guard: …`, then side effects such as
    /// `setUser onboarded=true` and `→ result into address`.
    static func label(action: String, rule: FlowRule) -> [String] {
        var first = action
        if !rule.params.isEmpty {
            first += " {" + rule.params.map { $0.required ? $0.name : $0.name + "?" }.joined(separator: ", ") + "}"
        }
        if rule.interactive { first += " (interactive)" }
        var lines = [first]
        if let when = rule.when { lines.append("when " + describe(when)) }
        if let guarded = rule.guarded { lines.append("guard: " + describe(guarded.when)) }
        for effect in rule.effects {
            switch effect {
            case .setUser(let values):
                lines.append("setUser " + values.keys.map { "\($0)=\(values[$0]?.abbreviatedJSON(limit: 30) ?? "null")" }.joined(separator: ", "))
            case .result(let result):
                lines.append("→ result into \(result.into)" + (result.to.map { " of \($0)" } ?? ""))
            default:
                break
            }
        }
        return lines
    }

    /// A condition as people read it: `flag eu-face-scan is true`, `not (user onboarded is true)`.
    static func describe(_ condition: FlowCondition) -> String {
        switch condition {
        case .test(let source, let key, let test):
            let value: String
            switch test {
            case .equals(let v), .notEquals(let v): value = v.abbreviatedJSON(limit: 30)
            case .oneOf(let values), .noneOf(let values): value = JSONValue.array(values).abbreviatedJSON(limit: 40)
            case .exists(let exists): value = exists ? "true" : "false"
            }
            return "\(source.rawValue) \(key) \(test.keyword) \(value)"
        case .all(let conditions):
            return conditions.map { grouped($0) }.joined(separator: " and ")
        case .any(let conditions):
            return conditions.map { grouped($0) }.joined(separator: " or ")
        case .not(let condition):
            return "not " + grouped(condition)
        }
    }

    private static func grouped(_ condition: FlowCondition) -> String {
        if case .test = condition { return describe(condition) }
        return "(" + describe(condition) + ")"
    }
}

extension FlowCondition {
    /// Whether a flag's value decides it anywhere inside.
    var mentionsFlag: Bool {
        switch self {
        case .test(let source, _, _): source == .flag
        case .all(let conditions), .any(let conditions): conditions.contains { $0.mentionsFlag }
        case .not(let condition): condition.mentionsFlag
        }
    }
}

// FlowGraphBuilder+edges: the third pass — one edge per rule and source screen, bubbled actions, back edges, tabs and links.

import FlowEngine
import JSON

extension FlowGraphBuilder {
    mutating func addStartEdges() {
        guard let definition = catalog[clusters[0].flow] else { return }
        let start = addNode(.start, cluster: nil, id: "start")
        for entry in definition.initial {
            let (node, cluster) = target(entry.target, in: 0)
            let condition = entry.when.map { ["when " + Self.describe($0)] } ?? []
            addEdge(from: start, to: node, toCluster: cluster, label: condition, style: .start,
                    flagged: entry.when?.mentionsFlag ?? false)
        }
    }

    mutating func addEdges(for rule: FlowRule, action: String, in cluster: Int, deferring backEdges: inout [BackEdge]) {
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
    mutating func addGuardEdge(_ guarded: FlowGuard, from source: Int, sourceCluster: Int?, in cluster: Int) {
        guard let shown = guarded.otherwise.lazy.compactMap(Self.shownFlow).first else { return }
        let child = clusterOfFlow[shown.flow] ?? cluster
        if shown.presented { presenters[child, default: []].append(source) }
        addEdge(from: source, to: entry(of: child), fromCluster: sourceCluster, toCluster: child == cluster ? nil : child,
                label: ["guard: " + Self.describe(guarded.when)], style: .guarded, flagged: guarded.when.mentionsFlag)
    }

    /// The screen a rule's `result` names with `to`: in the handling flow, else in the nearest
    /// flow around it, else anywhere drawn; nil without `to` (the screen on top after the
    /// rule's own moves, which its edge already reaches) or when no such screen is drawn.
    func resultReceiver(of rule: FlowRule, in cluster: Int) -> (node: Int, into: String)? {
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
    mutating func bubbledSources(of action: String, into cluster: Int, via: [String]?) -> [Int] {
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

    mutating func addBackEdge(_ edge: BackEdge) {
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
    mutating func tabs(of cluster: Int, choice: FlowEffect.TabChoice) -> [(node: Int, cluster: Int?)] {
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
    mutating func addLinkEdges() {
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

    mutating func addEdge(from: Int, to: Int, fromCluster: Int? = nil, toCluster: Int? = nil,
                                  label: [String], style: FlowGraph.EdgeStyle, flagged: Bool, action: String? = nil) {
        guard edges.count < FlowGraph.maxEdges else {
            truncated = true
            return
        }
        edges.append(FlowGraph.Edge(from: from, to: to, fromCluster: fromCluster, toCluster: toCluster,
                                    label: label, style: style, flagged: flagged))
        edgeActions.append(action)
    }
}

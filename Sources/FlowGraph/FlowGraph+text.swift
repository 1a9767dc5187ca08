// FlowGraph+text: the graph as Graphviz DOT and as a Mermaid flowchart.

extension FlowGraph {
    static let currentFill = "#ffd54f"
    static let onStackFill = "#fff4c7"
    static let flaggedColor = "#c2185b"
    static let linkColor = "#00796b"
    static let linkFill = "#e0f2f1"
    static let handoffColor = "#5e35b1"
    static let handoffFill = "#ede7f6"
    static let guardColor = "#6a1b9a"
    static let resultColor = "#2e7d32"

    /// The cluster's label: `modal · stacked · v2 · presented`.
    func title(of cluster: Cluster) -> String {
        var parts = [cluster.flow]
        if let kind = cluster.kind { parts.append(kind.rawValue) } else { parts.append("not defined") }
        if let version = cluster.version { parts.append("v\(version)") }
        if cluster.presented { parts.append("presented") }
        return parts.joined(separator: " · ")
    }

    func label(of node: Node) -> String {
        switch node.role {
        case .screen(let feature): feature
        case .handoff(let kind): "handoff: \(kind)"
        case .start: ""
        case .missingFlow(let flow): "flow \(flow)"
        case .anchor: ""
        case .link(let pattern): "link \(pattern)"
        }
    }

    /// Nodes and child clusters of each cluster, and the nodes outside every cluster.
    private func layout() -> (nodes: [Int: [Int]], children: [Int: [Int]], top: [Int], roots: [Int]) {
        var nodesByCluster: [Int: [Int]] = [:]
        var top: [Int] = []
        for (index, node) in nodes.enumerated() {
            if let cluster = node.cluster { nodesByCluster[cluster, default: []].append(index) } else { top.append(index) }
        }
        var children: [Int: [Int]] = [:]
        var roots: [Int] = []
        for (index, cluster) in clusters.enumerated() {
            if let parent = cluster.parent { children[parent, default: []].append(index) } else { roots.append(index) }
        }
        return (nodesByCluster, children, top, roots)
    }

    // MARK: DOT

    /// The graph in Graphviz's DOT language; node ids are kept as SVG ids.
    public func dot() -> String {
        let (nodesByCluster, children, top, roots) = layout()
        var out = "digraph flows {\n"
        var graphLabel = "flows from \(root)"
        if truncated { graphLabel += " (cut short: more than \(Self.maxClusters) flows or \(Self.maxEdges) edges)" }
        out += "  graph [compound=true, rankdir=TB, fontname=\"Helvetica\", fontsize=12, nodesep=0.35, ranksep=0.45, "
        out += "label=\(Self.dotQuoted(graphLabel)), labelloc=t, id=\(Self.dotQuoted("graph-\(root)"))];\n"
        out += "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#3f51b5\", fontname=\"Helvetica\", fontsize=11];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#455a64\", fontcolor=\"#263238\"];\n"
        for node in top { out += dotNode(node, indent: "  ") }
        func writeCluster(_ index: Int, indent: String) {
            let cluster = clusters[index]
            out += "\(indent)subgraph cluster_\(index) {\n"
            out += "\(indent)  id=\(Self.dotQuoted("cluster-\(cluster.flow)")); label=\(Self.dotQuoted(title(of: cluster))); "
            out += "style=\(cluster.presented ? "\"rounded,dashed\"" : "rounded"); color=\"#90a4ae\"; fontcolor=\"#37474f\";\n"
            for node in nodesByCluster[index] ?? [] { out += dotNode(node, indent: indent + "  ") }
            if cluster.tabs.count > 1 {
                out += "\(indent)  { rank=same; " + cluster.tabs.map { Self.dotQuoted(nodes[$0].id) + "; " }.joined() + "}\n"
            }
            for child in children[index] ?? [] { writeCluster(child, indent: indent + "  ") }
            out += "\(indent)}\n"
        }
        for cluster in roots { writeCluster(cluster, indent: "  ") }
        for edge in edges {
            var attributes: [String] = []
            if !edge.label.isEmpty { attributes.append("label=\"" + edge.label.map(Self.dotEscaped).joined(separator: "\\n") + "\"") }
            if let tail = edge.fromCluster, edge.from != edge.to { attributes.append("ltail=cluster_\(tail)") }
            if let head = edge.toCluster, edge.from != edge.to { attributes.append("lhead=cluster_\(head)") }
            switch edge.style {
            case .forward: break
            case .back: attributes.append("style=dashed, constraint=false")
            case .present: attributes.append("style=bold, arrowhead=empty")
            case .start: attributes.append("color=\"#263238\"")
            case .link: attributes.append("color=\"\(Self.linkColor)\", fontcolor=\"\(Self.linkColor)\", arrowhead=vee")
            case .guarded: attributes.append("style=dashed, color=\"\(Self.guardColor)\", fontcolor=\"\(Self.guardColor)\", arrowhead=empty")
            case .result: attributes.append("style=dotted, constraint=false, color=\"\(Self.resultColor)\", fontcolor=\"\(Self.resultColor)\"")
            }
            if edge.flagged { attributes.append("color=\"\(Self.flaggedColor)\", fontcolor=\"\(Self.flaggedColor)\"") }
            out += "  \(Self.dotQuoted(nodes[edge.from].id)) -> \(Self.dotQuoted(nodes[edge.to].id))"
            out += attributes.isEmpty ? ";\n" : " [\(attributes.joined(separator: ", "))];\n"
        }
        out += "}\n"
        return out
    }

    private func dotNode(_ index: Int, indent: String) -> String {
        let node = nodes[index]
        var attributes = ["id=\(Self.dotQuoted(node.id))", "label=\(Self.dotQuoted(label(of: node)))"]
        switch node.role {
        case .screen:
            switch node.mark {
            case .current: attributes += ["class=\"current\"", "fillcolor=\"\(Self.currentFill)\"", "color=\"#e65100\"", "penwidth=2.5"]
            case .onStack: attributes += ["class=\"onstack\"", "fillcolor=\"\(Self.onStackFill)\""]
            case .none: break
            }
        case .handoff:
            // The app runs it natively: a component box, dashed, in its own colour; marked like a screen.
            attributes += ["shape=component", "style=\"filled,dashed\"", "color=\"\(Self.handoffColor)\""]
            switch node.mark {
            case .current: attributes += ["class=\"handoff current\"", "fillcolor=\"\(Self.currentFill)\"", "penwidth=2.5"]
            case .onStack: attributes += ["class=\"handoff onstack\"", "fillcolor=\"\(Self.onStackFill)\""]
            case .none: attributes += ["class=\"handoff\"", "fillcolor=\"\(Self.handoffFill)\""]
            }
        case .start: attributes += ["shape=circle", "width=0.18", "fixedsize=true", "fillcolor=\"#263238\"", "style=filled"]
        case .missingFlow: attributes += ["shape=folder", "style=dashed"]
        case .anchor: attributes += ["shape=point", "width=0.08"]
        case .link: attributes += ["class=\"link\"", "shape=cds", "fillcolor=\"\(Self.linkFill)\"", "color=\"\(Self.linkColor)\""]
        }
        return "\(indent)\(Self.dotQuoted(node.id)) [\(attributes.joined(separator: ", "))];\n"
    }

    static func dotQuoted(_ text: String) -> String { "\"" + dotEscaped(text) + "\"" }

    /// Escapes for a quoted DOT string whose backslash sequences (`\n`, `\l`, `\N`) Graphviz
    /// would otherwise interpret; line breaks become spaces.
    static func dotEscaped(_ text: String) -> String {
        escaped(text) { character in
            switch character {
            case "\\": "\\\\"
            case "\"": "\\\""
            case "\n", "\r", "\r\n": " "
            default: nil
            }
        }
    }

    /// `text` with each character that `replacement` names replaced by what it returns.
    static func escaped(_ text: String, _ replacement: (Character) -> String?) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            if let replaced = replacement(character) { out += replaced } else { out.append(character) }
        }
        return out
    }

    // MARK: Mermaid

    /// The graph as a Mermaid flowchart: flows as subgraphs, marks as classes.
    public func mermaid() -> String {
        let (nodesByCluster, children, top, roots) = layout()
        var out = "flowchart TB\n"
        func nodeLine(_ index: Int, indent: String) -> String {
            let node = nodes[index]
            switch node.role {
            case .start: return "\(indent)n\(index)((start))\n"
            case .anchor: return "\(indent)n\(index)[ ]\n"
            case .missingFlow: return "\(indent)n\(index)[/\"\(Self.mermaidEscaped(label(of: node)))\"/]\n"
            case .screen: return "\(indent)n\(index)(\"\(Self.mermaidEscaped(label(of: node)))\")\n"
            case .handoff: return "\(indent)n\(index){{\"\(Self.mermaidEscaped(label(of: node)))\"}}\n"
            case .link: return "\(indent)n\(index)>\"\(Self.mermaidEscaped(label(of: node)))\"]\n"
            }
        }
        for node in top { out += nodeLine(node, indent: "  ") }
        func writeCluster(_ index: Int, indent: String) {
            out += "\(indent)subgraph c\(index)[\"\(Self.mermaidEscaped(title(of: clusters[index])))\"]\n"
            for node in nodesByCluster[index] ?? [] { out += nodeLine(node, indent: indent + "  ") }
            for child in children[index] ?? [] { writeCluster(child, indent: indent + "  ") }
            out += "\(indent)end\n"
        }
        for cluster in roots { writeCluster(cluster, indent: "  ") }
        var flaggedLinks: [Int] = []
        var guardLinks: [Int] = []
        var resultLinks: [Int] = []
        for (number, edge) in edges.enumerated() {
            let from = edge.fromCluster.map { "c\($0)" } ?? "n\(edge.from)"
            let to = edge.from != edge.to ? (edge.toCluster.map { "c\($0)" } ?? "n\(edge.to)") : "n\(edge.to)"
            let arrow = switch edge.style {
            case .back, .guarded, .result: "-.->"
            case .present: "==>"
            case .forward, .start, .link: "-->"
            }
            let label = edge.label.isEmpty ? "" : "|\"" + edge.label.map(Self.mermaidEscaped).joined(separator: "<br/>") + "\"|"
            out += "  \(from) \(arrow)\(label) \(to)\n"
            if edge.flagged {
                flaggedLinks.append(number)
            } else if edge.style == .guarded {
                guardLinks.append(number)
            } else if edge.style == .result {
                resultLinks.append(number)
            }
        }
        out += "  classDef current fill:\(Self.currentFill),stroke:#e65100,stroke-width:3px\n"
        out += "  classDef onstack fill:\(Self.onStackFill)\n"
        if nodes.contains(where: { if case .link = $0.role { true } else { false } }) {
            out += "  classDef link fill:\(Self.linkFill),stroke:\(Self.linkColor)\n"
        }
        if nodes.contains(where: { if case .handoff = $0.role { true } else { false } }) {
            out += "  classDef handoff fill:\(Self.handoffFill),stroke:\(Self.handoffColor),stroke-dasharray:4 3\n"
        }
        for (index, node) in nodes.enumerated() {
            switch node.mark {
            case .current: out += "  class n\(index) current\n"
            case .onStack: out += "  class n\(index) onstack\n"
            case .none:
                switch node.role {
                case .link: out += "  class n\(index) link\n"
                case .handoff: out += "  class n\(index) handoff\n"
                default: break
                }
            }
        }
        for (links, color) in [(flaggedLinks, Self.flaggedColor), (guardLinks, Self.guardColor), (resultLinks, Self.resultColor)] where !links.isEmpty {
            out += "  linkStyle \(links.map(String.init).joined(separator: ",")) stroke:\(color),color:\(color)\n"
        }
        return out
    }

    /// Escapes for a quoted Mermaid label: entity codes for what Mermaid would read as syntax.
    static func mermaidEscaped(_ text: String) -> String {
        escaped(text) { character in
            switch character {
            case "#": "#35;"
            case "\"": "#quot;"
            case "<": "#lt;"
            case ">": "#gt;"
            case "|": "#124;"
            case "\n", "\r", "\r\n": " "
            default: nil
            }
        }
    }
}

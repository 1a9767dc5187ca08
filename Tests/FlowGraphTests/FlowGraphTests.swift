// Flow graphs of the sample app and of made-up flows, in every format, through the real Graphviz.
import FlowEngine
import FlowGraph
import Foundation
import JSON
import Testing

struct FlowGraphTests {
    /// The sample app as the repo ships it (flows/*.json).
    static func sampleCatalog() throws -> FlowCatalog {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appending(path: "flows")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
        #expect(files.count == 8)
        return FlowCatalog(try files.map { try FlowDefinition.parse(Array(try Data(contentsOf: $0))) })
    }

    static func catalog(_ documents: String...) throws -> FlowCatalog {
        FlowCatalog(try documents.map { try FlowDefinition.parse(Array($0.utf8)) })
    }

    static func svgText(_ graph: FlowGraph) throws -> String {
        String(decoding: try Graphviz.shared.svg(dot: graph.dot()), as: UTF8.self)
    }

    /// Every screen and every action type of the sample flows appears in each format.
    @Test(arguments: GraphFormat.allCases)
    func everyScreenAndActionOfTheSampleAppIsDrawn(format: GraphFormat) throws {
        let catalog = try Self.sampleCatalog()
        let graph = FlowGraph(catalog: catalog, root: "app")
        let text = switch format {
        case .dot: graph.dot()
        case .mermaid: graph.mermaid()
        case .svg: try Self.svgText(graph).replacingOccurrences(of: "&#45;", with: "-")  // Graphviz writes '-' as an entity
        }
        var screens: Set<String> = []
        var actions: Set<String> = []
        for definition in catalog.definitions.values {
            for entry in definition.initial { if case .screen(let feature, _, _) = entry.target { screens.insert(feature) } }
            for handler in definition.handlers {
                actions.insert(handler.action)
                for rule in handler.rules {
                    for effect in rule.effects { if case .push(.screen(let feature, _, _)) = effect { screens.insert(feature) } }
                }
            }
        }
        #expect(screens == [
            "onboarding.first", "onboarding.second", "onboarding.faceScan", "home.first", "home.second", "modal", "login.form", "checkout.cart",
            "checkout.review", "address.list", "address.form", "paywall.offer",
        ])
        #expect(actions.count == 23)
        for screen in screens { #expect(text.contains(">\(screen)<") || text.contains("\"\(screen)\""), "\(format): screen \(screen)") }
        for action in actions { #expect(text.contains(action), "\(format): action \(action)") }
        for flow in ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"] {
            #expect(text.contains("\(flow) · "), "\(format): flow \(flow)")
        }
        #expect(text.contains("flag eu-face-scan is true"))
        if format == .svg {
            #expect(text.hasPrefix("<?xml"))
            #expect(text.contains("<svg"))
            #expect(text.contains(#"id="screen-onboarding-onboarding.faceScan""#))
        }
    }

    /// Edges go where the engine would go: pushes forward, a pop back to the screen pushed from,
    /// a bubbled action from the child's screen to the parent's target, a dismiss to the presenters.
    @Test func edgesFollowTheRules() throws {
        let graph = FlowGraph(catalog: try Self.sampleCatalog(), root: "app")
        func edges(_ action: String) -> [String] {
            graph.edges.filter { $0.style != .link && $0.label.first?.hasPrefix(action) == true }
                .map { "\(graph.nodes[$0.from].id) -> \(graph.nodes[$0.to].id)" }.sorted()
        }
        #expect(edges("onboarding.showSecond") == ["screen-onboarding-onboarding.first -> screen-onboarding-onboarding.second"])
        #expect(edges("onboarding.returnToFirst") == ["screen-onboarding-onboarding.second -> screen-onboarding-onboarding.first"])
        #expect(edges("onboarding.completed") == [
            "screen-onboarding-onboarding.second -> screen-home-home.first",
            "screen-onboarding-onboarding.second -> screen-onboarding-onboarding.faceScan",
        ])
        #expect(edges("home.presentModal") == ["screen-home-home.first -> screen-modal-modal", "screen-home-home.second -> screen-modal-modal"])
        #expect(edges("modal.dismiss") == ["screen-modal-modal -> screen-home-home.first", "screen-modal-modal -> screen-home-home.second"])
        #expect(edges("home.selectTab") == ["screen-home-home.first -> screen-home-home.second", "screen-home-home.second -> screen-home-home.first"])
        let flagged = graph.edges.filter(\.flagged).map { graph.nodes[$0.to].id }
        #expect(flagged == ["screen-paywall-paywall.offer", "screen-paywall-paywall.offer", "screen-onboarding-onboarding.faceScan"])
        #expect(graph.clusters.map(\.flow) == ["app", "home", "onboarding", "modal", "checkout", "login", "paywall", "address"])
        #expect(graph.clusters.map(\.presented) == [false, false, false, true, true, true, true, true])
        #expect(!graph.truncated && graph.canLayOut)
    }

    /// A rule that returns a result draws the edge of its pop or dismiss, to the screen that
    /// receives it, not a loop on the screen it leaves.
    @Test func resultsFollowTheirPopOrDismiss() throws {
        let graph = FlowGraph(catalog: try Self.sampleCatalog(), root: "app")
        func edges(_ action: String) -> [String] {
            graph.edges.filter { $0.label.first?.hasPrefix(action) == true }
                .map { "\(graph.nodes[$0.from].id) -> \(graph.nodes[$0.to].id)" }.sorted()
        }
        #expect(edges("purchase.failed") == ["screen-paywall-purchase -> screen-paywall-paywall.offer"])
        #expect(edges("purchase.cancelled") == ["screen-paywall-purchase -> screen-paywall-paywall.offer"])
        // Two rules: a tap on a row, and an address the app has in hand.
        #expect(edges("address.chosen") == ["screen-address-address.list -> screen-checkout-checkout.review", "screen-address-address.list -> screen-checkout-checkout.review"])
        #expect(graph.edges.contains { $0.label.first == "address.chosen · tap on row address.row" })
        #expect(graph.edges.contains { $0.label == ["address.removed · tap on row address.row", "removeRow"] })
        // The form pops back to the list it inserts into; a removal is a loop on the list.
        #expect(edges("address.added") == ["screen-address-address.form -> screen-address-address.list"])
        #expect(edges("address.removed") == ["screen-address-address.list -> screen-address-address.list"])
        #expect(graph.edges.contains { $0.label.contains("insertRow in address.list") })
        #expect(edges("address.saved") == ["screen-address-address.form -> screen-checkout-checkout.review"])
    }

    /// A guarded rule draws two edges: to what it does when the guard holds (labelled with the
    /// guard), and to the flow its `else` shows when it does not.
    @Test func guardsDrawBothWays() throws {
        let graph = FlowGraph(catalog: try Self.sampleCatalog(), root: "app")
        let edges = graph.edges
            .filter { graph.nodes[$0.from].id == "screen-home-home.first" && ($0.label.first == "home.checkout" || $0.style == .guarded) }
            .map { "\(graph.nodes[$0.to].id): \($0.label.joined(separator: "; "))" }.sorted()
        #expect(edges == [
            "screen-checkout-checkout.cart: home.checkout; guard: user loggedIn is true",
            "screen-login-login.form: guard: user loggedIn is true",
        ])
    }

    /// Each link of the sample app is an entry point labelled with its pattern, with edges to
    /// where it leads: `/home` to the root's initial entries, the others to where their last
    /// action goes.
    @Test func linksAreEntryPoints() throws {
        let graph = FlowGraph(catalog: try Self.sampleCatalog(), root: "app")
        let links = graph.nodes.filter { if case .link = $0.role { true } else { false } }
        #expect(links.map(\.id) == ["link-0", "link-1", "link-2"])
        #expect(links.map(\.role) == [.link(pattern: "/home"), .link(pattern: "/home/{tab}"), .link(pattern: "/modal/{content}")])
        #expect(links.allSatisfy { $0.cluster == nil && $0.mark == .none })
        func targets(_ id: String) -> [String] {
            graph.edges.filter { graph.nodes[$0.from].id == id }.map { graph.nodes[$0.to].id }.sorted()
        }
        #expect(targets("link-0") == ["screen-home-home.first", "screen-onboarding-onboarding.first"])
        #expect(targets("link-1") == ["screen-home-home.first", "screen-home-home.second"])
        #expect(targets("link-2") == ["screen-modal-modal"])
        let modalEdge = try #require(graph.edges.first { graph.nodes[$0.from].id == "link-2" })
        #expect(modalEdge.style == .link)
        #expect(modalEdge.label == ["when user onboarded is true", "home.presentModal"])
        #expect(modalEdge.toCluster.map { graph.clusters[$0].flow } == "modal")
        let homeEdges = graph.edges.filter { graph.nodes[$0.from].id == "link-0" }.map(\.label)
        #expect(homeEdges == [["when user onboarded is true"], ["when user onboarded isNot true"]])

        let dot = graph.dot()
        #expect(dot.contains(#""link-2" [id="link-2", label="link /modal/{content}", class="link", shape=cds"#))
        #expect(dot.contains(##""link-2" -> "screen-modal-modal" [label="when user onboarded is true\nhome.presentModal", lhead=cluster_3, color="#00796b""##))
        let mermaid = graph.mermaid()
        #expect(mermaid.contains(#">"link /modal/{content}"]"#))
        #expect(mermaid.contains("classDef link"))
        let svg = try Self.svgText(graph).replacingOccurrences(of: "&#45;", with: "-")
        #expect(svg.contains(#"<g id="link-2" class="node link">"#))
        #expect(svg.contains(">link /modal/{content}<"))
    }

    /// A link whose last action draws no edge (`back`) points at the root's initial entries,
    /// and a link whose `when` reads a flag is drawn in the flag colour.
    @Test func linksOfOtherShapes() throws {
        let catalog = try Self.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": ["a.start"],
             "on": {"t.open": [{"do": [{"push": "a.page"}]}]},
             "links": [
               {"pattern": "/back", "actions": [{"type": "t.open"}, {"type": "back"}]},
               {"pattern": "myapp://x/page", "when": {"flag": "beta", "is": true}, "actions": [{"type": "t.open"}]}
             ]}
            """#)
        let graph = FlowGraph(catalog: catalog, root: "app")
        let edges = graph.edges.filter { $0.style == .link }
        #expect(edges.map { "\(graph.nodes[$0.from].id) -> \(graph.nodes[$0.to].id)" } == [
            "link-0 -> screen-app-a.start", "link-1 -> screen-app-a.page",
        ])
        #expect(edges.map(\.flagged) == [false, true])
        #expect(edges.first?.label == ["t.open → back"])
        #expect(try Self.svgText(graph).contains("link myapp://x/page"))
        #expect(FlowGraph(catalog: catalog, root: "app").nodes.count == graph.nodes.count)
    }

    /// A session's screens are marked: the top as current, those behind it as on the stack.
    @Test func marksShowWhereASessionIs() throws {
        let catalog = try Self.sampleCatalog()
        var tree = try FlowEngine.start(catalog: catalog, context: FlowContext(userId: "u"))
        tree = try FlowEngine.apply(FlowAction(type: "onboarding.showSecond"), to: tree, catalog: catalog, context: FlowContext(userId: "u")).tree
        let graph = FlowGraph(catalog: catalog, root: "app", versions: ["app": 3], marks: ScreenMarks(tree: tree))
        let marked = graph.nodes.filter { $0.mark != .none }.map { "\($0.id) \($0.mark)" }.sorted()
        #expect(marked == ["screen-onboarding-onboarding.first onStack", "screen-onboarding-onboarding.second current"])
        #expect(graph.dot().contains(#"app · stacked · v3"#))
        #expect(graph.mermaid().contains("class n3 current") || graph.mermaid().contains(" current\n"))
        let svg = try Self.svgText(graph)
        #expect(svg.contains(#"<g id="screen&#45;onboarding&#45;onboarding.second" class="node current">"#))
        #expect(svg.contains(#"<g id="screen&#45;onboarding&#45;onboarding.first" class="node onstack">"#))
        #expect(!svg.contains(#"onboarding.faceScan" class="node current""#))
    }

    /// Names that mean something in DOT or Mermaid (quotes, backslashes, pipes, #) are drawn as
    /// written and cannot break the document.
    @Test func namesAreEscaped() throws {
        let catalog = try Self.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": ["a\"b\\n|c#d<e>"],
             "on": {"go\"now": [{"from": "a\"b\\n|c#d<e>", "do": [{"push": "x\\\"y"}]}]}}
            """#)
        let graph = FlowGraph(catalog: catalog, root: "app")
        let dot = graph.dot()
        #expect(dot.contains(#"label="a\"b\\n|c#d<e>""#))
        #expect(dot.contains(#"label="go\"now""#))
        let svg = try Self.svgText(graph)
        #expect(svg.contains("a&quot;b\\n|c#d&lt;e&gt;"))
        let mermaid = graph.mermaid()
        #expect(mermaid.contains(#"("a#quot;b\n#124;c#35;d#lt;e#gt;")"#))
        #expect(!mermaid.contains("a\"b"))
    }

    /// A shop whose checkout is guarded by a login, whose purchase is a native hand-off, and
    /// whose address picker returns its choice to the review.
    static func guardsHandoffsAndResults() throws -> FlowCatalog {
        try catalog(
            #"""
            {"name": "app", "kind": "stacked", "initial": ["shop"],
             "on": {
               "shop.checkout": [{"from": "shop",
                 "guard": {"when": {"user": "loggedIn", "is": true}, "else": {"present": {"flow": "login", "style": "pageSheet"}}},
                 "do": [{"push": {"flow": "checkout"}}]}],
               "shop.buy": [{"from": "shop", "params": {"productId": "string"},
                 "do": [{"push": {"handoff": "purchase", "params": {"productId": {"$param": "productId"}}}}]}],
               "purchase.failed": [{"from": "purchase", "params": {"reason": "string"},
                 "do": [{"pop": {}}, {"result": {"into": "error", "value": {"$param": "reason"}}}]}]}}
            """#,
            #"{"name": "login", "kind": "stacked", "initial": ["login.form"], "on": {"login.submit": [{"from": "login.form", "do": [{"setUser": {"loggedIn": true}}, {"dismiss": {}}]}]}}"#,
            #"{"name": "checkout", "kind": "stacked", "initial": ["checkout.review"], "on": {"checkout.chooseAddress": [{"from": "checkout.review", "do": [{"present": {"flow": "address", "style": "pageSheet"}}]}]}}"#,
            #"""
            {"name": "address", "kind": "stacked", "initial": ["address.list"],
             "on": {"address.chosen": [{"from": "address.list", "params": {"address": "object"},
               "do": [{"dismiss": {}}, {"result": {"into": "address", "value": {"$param": "address"}, "to": "checkout.review"}}]}]}}
            """#)
    }

    /// A guard draws a dashed edge to the flow it shows (found as a cluster through the guard's
    /// `else` alone), and that flow's dismiss leads back to the guarded screen.
    @Test func guardsAreDrawnToTheirFlow() throws {
        let graph = FlowGraph(catalog: try Self.guardsHandoffsAndResults(), root: "app")
        let login = try #require(graph.clusters.firstIndex { $0.flow == "login" })
        #expect(graph.clusters[login].presented)
        let guarded = graph.edges.filter { $0.style == .guarded }
        #expect(guarded.map { "\(graph.nodes[$0.from].id) -> \(graph.nodes[$0.to].id)" } == ["screen-app-shop -> screen-login-login.form"])
        #expect(guarded.first?.label == ["guard: user loggedIn is true"])
        #expect(guarded.first?.toCluster == login)
        let own = try #require(graph.edges.first { $0.label.first == "shop.checkout" })
        #expect(own.label == ["shop.checkout", "guard: user loggedIn is true"] && own.style == .forward)
        #expect(graph.edges.contains { $0.label.first == "login.submit" && graph.nodes[$0.to].id == "screen-app-shop" })

        let dot = graph.dot()
        #expect(dot.contains(##""screen-app-shop" -> "screen-login-login.form" [label="guard: user loggedIn is true", lhead=cluster_\##(login), style=dashed, color="#6a1b9a""##))
        let mermaid = graph.mermaid()
        #expect(mermaid.contains(#"-.->|"guard: user loggedIn is true"| c\#(login)"#))
        #expect(mermaid.contains("login · stacked · presented"))
        #expect(try Self.svgText(graph).contains("guard: user loggedIn is true"))
    }

    /// A hand-off is a node of its own shape, labelled with its kind; its outcomes leave from it.
    @Test func handoffsAreDrawnApart() throws {
        let graph = FlowGraph(catalog: try Self.guardsHandoffsAndResults(), root: "app")
        let index = try #require(graph.nodes.firstIndex { $0.id == "screen-app-purchase" })
        #expect(graph.nodes[index].role == .handoff(kind: "purchase"))
        #expect(graph.edges.contains { $0.label.first == "shop.buy {productId}" && $0.to == index })
        // Its pop goes back to the screen that pushed it.
        let failed = try #require(graph.edges.first { $0.label.first == "purchase.failed {reason}" })
        #expect(failed.from == index && graph.nodes[failed.to].id == "screen-app-shop" && failed.style == .back)

        let dot = graph.dot()
        #expect(dot.contains(#""screen-app-purchase" [id="screen-app-purchase", label="handoff: purchase", shape=component"#))
        #expect(dot.contains(#"class="handoff""#))
        let mermaid = graph.mermaid()
        #expect(mermaid.contains(#"n\#(index){{"handoff: purchase"}}"#))
        #expect(mermaid.contains("class n\(index) handoff"))
        #expect(mermaid.contains("classDef handoff"))
        let svg = try Self.svgText(graph)
        #expect(svg.contains(">handoff: purchase<"))
        #expect(svg.contains(#"class="node handoff""#))
        // Marked like any screen when a session is on it.
        let marked = FlowGraph(catalog: try Self.guardsHandoffsAndResults(), root: "app",
                               marks: ScreenMarks(current: .init(flow: "app", feature: "purchase")))
        #expect(marked.dot().contains(#"class="handoff current""#))
    }

    /// A rule with a result says so on its edge; one that names its receiver (`to`) also draws
    /// an edge to that screen.
    @Test func resultsAreLabelled() throws {
        let graph = FlowGraph(catalog: try Self.guardsHandoffsAndResults(), root: "app")
        let failed = try #require(graph.edges.first { $0.label.first == "purchase.failed {reason}" })
        #expect(failed.label == ["purchase.failed {reason}", "→ result into error"])
        #expect(!graph.edges.contains { $0.style == .result && $0.from == failed.from })
        let chosen = graph.edges.filter { $0.label.first == "address.chosen {address}" }
        #expect(chosen.map { graph.nodes[$0.to].id } == ["screen-checkout-checkout.review"])
        #expect(chosen.first?.label == ["address.chosen {address}", "→ result into address of checkout.review"])
        let named = graph.edges.filter { $0.style == .result }
        #expect(named.map { "\(graph.nodes[$0.from].id) -> \(graph.nodes[$0.to].id)" } == ["screen-address-address.list -> screen-checkout-checkout.review"])
        #expect(named.first?.label == ["result into address"])

        let dot = graph.dot()
        #expect(dot.contains(#"label="purchase.failed {reason}\n→ result into error""#))
        #expect(dot.contains(##""screen-address-address.list" -> "screen-checkout-checkout.review" [label="result into address", style=dotted"##))
        let mermaid = graph.mermaid()
        #expect(mermaid.contains(#"|"purchase.failed {reason}<br/>→ result into error"|"#))
        #expect(mermaid.contains(#"-.->|"result into address"|"#))
        #expect(try Self.svgText(graph).contains("result into address"))
    }

    /// Flows that present themselves, reference missing flows, or have no screens still draw.
    @Test func oddCatalogsStillDraw() throws {
        let catalog = try Self.catalog(
            #"{"name": "app", "kind": "stacked", "initial": [{"flow": "loop"}], "on": {"open": [{"do": [{"present": {"flow": "elsewhere"}}]}]}}"#,
            #"{"name": "loop", "kind": "stacked", "initial": ["l"], "on": {"again": [{"from": "l", "do": [{"present": {"flow": "loop"}}]}], "close": [{"do": [{"dismiss": {}}]}]}}"#)
        let graph = FlowGraph(catalog: catalog, root: "app")
        #expect(graph.clusters.map(\.flow) == ["app", "loop", "elsewhere"])
        #expect(graph.nodes.contains { $0.role == .missingFlow("elsewhere") })
        #expect(graph.edges.contains { $0.label == ["again"] && graph.nodes[$0.from].id == "screen-loop-l" })
        #expect(graph.dot().contains("elsewhere · not defined"))
        #expect(try Self.svgText(graph).contains("flow elsewhere"))
    }

    /// A flow too large to lay out is cut short or refused as SVG, in bounded time, and says so.
    @Test func hugeFlowsAreBounded() throws {
        let tabs = (0..<400).map { "\"t\($0)\"" }.joined(separator: ",")
        let catalog = try Self.catalog(#"""
            {"name": "app", "kind": "tabbed", "initial": [\#(tabs)],
             "on": {"pick": [{"params": {"index": "integer"}, "do": [{"selectTab": {"$param": "index"}}]}]}}
            """#)
        let start = ContinuousClock.now
        let graph = FlowGraph(catalog: catalog, root: "app")
        #expect(graph.truncated)
        #expect(!graph.canLayOut)
        #expect(graph.edges.count == FlowGraph.maxEdges)
        #expect(graph.dot().contains("cut short"))
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    /// Graphviz reports DOT it cannot read instead of crashing, and keeps working after.
    @Test func graphvizReportsBadInput() throws {
        #expect(throws: Graphviz.Failure.self) { try Graphviz.shared.svg(dot: "digraph { a -> ") }
        #expect(try Graphviz.shared.svg(dot: "digraph { a -> b }").count > 100)
    }
}

// NavigationPlanTests: every transition of the sample app, and jumps between its states, applied as plans.
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import Testing
import TestSupport

/// The sample app's state space, explored breadth first with the engine.
enum SampleSpace {
    /// A state reached, and how (for messages).
    struct Reached {
        var session: SessionState
        var state: NavigationState
        var path: [String]
    }

    /// An applied action: the state before, the action, the state after.
    struct Edge {
        var before: Reached
        var action: FlowAction
        var after: Reached
    }

    static let catalog: FlowCatalog = {
        let flows = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("flows")
        let definitions = ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"].map { name in
            (name, [UInt8](FileManager.default.contents(atPath: flows.appendingPathComponent("\(name).json").path) ?? Data()))
        }
        let (catalog, problems) = FlowCatalog.parse(definitions)
        if !problems.isEmpty { Issue.record("sample flows have problems: \(problems)") }
        return catalog
    }()

    /// New and onboarded users, with `eu-face-scan` on and off.
    static func starts() throws -> [SessionState] {
        var sessions: [SessionState] = []
        for onboarded in [false, true] {
            for faceScan in [false, true] {
                let user: [String: JSONValue] = onboarded ? ["onboarded": true] : [:]
                let context = FlowContext(userId: "u-\(onboarded)-\(faceScan)", attributes: ["country": faceScan ? "DE" : "US"],
                                          flags: ["eu-face-scan": .bool(faceScan)], user: user)
                let tree = try FlowEngine.start(catalog: catalog, context: context)
                let flags = "{\"eu-face-scan\":{\"value\":\(faceScan),\"variant\":\"\(faceScan ? "on" : "off")\",\"reason\":\"STATIC\"}}"
                sessions.append(SessionState(
                    sessionId: "s_\(onboarded)_\(faceScan)", userId: context.userId, version: 0, tree: tree, context: context,
                    catalog: catalog, flagsJSON: Array(flags.utf8), experimentsJSON: Array("{}".utf8)))
            }
        }
        return sessions
    }

    /// The actions to try in a state: each available one with sample params, interactively too
    /// where allowed, and the sample links.
    static func actions(in session: SessionState) -> [FlowAction] {
        actions(in: session, links: ["/home", "/home/1", "/modal/Hi"]) { available in
            switch available.type {
            case "home.selectTab": [["index": 0], ["index": 1]]
            case "home.presentModal": [["content": "Hi"], ["content": "Bye"]]
            default: [[:]]
            }
        }
    }

    /// Each available action with the params `params` gives for it (interaction actions get
    /// progress and velocity), interactively too where allowed, and `links` when no interaction
    /// is pending.
    static func actions(in session: SessionState, links: [String], params: (AvailableAction) -> [JSONObject]) -> [FlowAction] {
        var actions: [FlowAction] = []
        for available in FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context) {
            let variants: [JSONObject]
            switch available.type {
            case FlowAction.interactionUpdate: variants = [["progress": 0.3], ["progress": 0.8]]
            case FlowAction.interactionEnd: variants = [["progress": 0.7], ["progress": 0.2], ["progress": 0.1, "velocity": 500]]
            default: variants = params(available)
            }
            for params in variants {
                actions.append(FlowAction(type: available.type, params: params))
                if available.interactive { actions.append(FlowAction(type: available.type, params: params, interactive: true)) }
            }
        }
        if session.tree.interaction == nil {
            for uri in links { actions.append(FlowAction(type: FlowAction.link, params: ["uri": .string(uri)])) }
        }
        return actions
    }

    /// What identifies a state for the search: the tree and the user's state (versions and
    /// transitions aside).
    static func key(_ session: SessionState) -> String {
        String(decoding: session.tree.navigationJSON(), as: UTF8.self) + session.context.user.sorted { $0.key < $1.key }.description
    }

    /// Breadth first from every start, `depth` actions deep, each state expanded once, at most
    /// `limit` states per start.
    static func explore(from starts: [SessionState], depth: Int, limit: Int = .max,
                        actions: (SessionState) -> [FlowAction] = actions(in:)) throws -> (states: [Reached], edges: [Edge]) {
        var states: [Reached] = []
        var edges: [Edge] = []
        for start in starts {
            var seen: Set<String> = [key(start)]
            var frontier = [Reached(session: start, state: try NavigationState(start), path: [])]
            states += frontier
            for _ in 0..<depth where seen.count < limit {
                var next: [Reached] = []
                for reached in frontier where seen.count < limit {
                    for action in actions(reached.session) {
                        guard let (after, _) = try? reached.session.applying(action) else { continue }
                        let label = action.type + (action.params.isEmpty ? "" : " \(JSONValue.object(action.params).jsonText)")
                            + (action.interactive ? " (interactive)" : "")
                        let target = Reached(session: after, state: try NavigationState(after), path: reached.path + [label])
                        edges.append(Edge(before: reached, action: action, after: target))
                        if seen.insert(key(after)).inserted {
                            next.append(target)
                            states.append(target)
                        }
                    }
                }
                frontier = next
            }
        }
        return (states, edges)
    }

    static let explored: (states: [Reached], edges: [Edge]) = {
        do { return try explore(from: try starts(), depth: 8) } catch {
            Issue.record("exploring the sample app failed: \(error)")
            return ([], [])
        }
    }()
}

/// Applies plans to rendered trees and says where they fall short.
struct PlanChecker {
    var plan: @Sendable (NavigationState?, NavigationState) -> NavigationPlan = { NavigationPlan(from: $0, to: $1) }

    /// Why the plan from `before` does not turn its rendering into that of `after`, if it does not.
    func problem(from before: NavigationState?, to after: NavigationState) -> String? {
        let plan = plan(before, after)
        var rendered = before.map(RenderedTree.init) ?? RenderedTree()
        do throws(RenderError) {
            try rendered.apply(plan)
        } catch {
            return "step refused: \(error)\nplan: \(plan.steps)"
        }
        guard rendered == RenderedTree(after) else {
            return "rendered \(rendered.root.map(Self.outline) ?? "nothing") (interaction \(rendered.interaction?.description ?? "none")), "
                + "expected \(Self.outline(after.root)) (interaction \(RenderedTree(after).interaction?.description ?? "none"))\nplan: \(plan.steps)"
        }
        return nil
    }

    /// Checks every edge (the plan renders the next state; its first step shows the transition;
    /// a screen that received a result and stays is refreshed, not rebuilt) and every state
    /// drawn from nothing.
    func check(states: [SampleSpace.Reached], edges: [SampleSpace.Edge], strict: Bool = true)
        -> (failures: [String], disagreements: [String], named: Int) {
        var failures: [String] = []
        var disagreements: [String] = []
        var named = 0
        for edge in edges {
            if let problem = problem(from: edge.before.state, to: edge.after.state) {
                failures.append("\(edge.after.path.joined(separator: " → ")): \(problem)")
            }
            if edge.after.state.transition != nil { named += 1 }
            if let problem = resultProblem(from: edge.before.state, to: edge.after.state) {
                failures.append("\(edge.after.path.joined(separator: " → ")): \(problem)")
            }
            if let problem = disagreement(from: edge.before.state, to: edge.after.state, strict: strict) {
                disagreements.append("\(edge.after.path.joined(separator: " → ")): \(problem)")
            }
        }
        for reached in states {
            if let problem = problem(from: nil, to: reached.state) { failures.append("first render of \(reached.path): \(problem)") }
            if let type = reached.state.interaction?.transition?.type, ["pop", "popTo", "dismiss"].contains(type),
               NavigationPlan.interactionStep(reached.state) == nil {
                failures.append("\(reached.path): the pending interaction has no step")
            }
        }
        return (failures, disagreements, named)
    }

    /// Why the plan that follows `after`'s transition does not refresh the screen it says
    /// received a result, when that screen was shown before and still is: exactly one refresh
    /// step, for it, with the params it has now (even when the value was already there).
    func resultProblem(from before: NavigationState, to after: NavigationState) -> String? {
        let plan = plan(before, after)
        guard plan.followsTransition, let receipt = after.transition?.result, before.shownRoot.allScreenIds.contains(receipt.id),
              let screen = after.screens.first(where: { $0.id == receipt.id }) else { return nil }
        let refreshes = plan.steps.compactMap { step -> NavigationState.Screen? in
            if case .refresh(let screen) = step.operation { screen } else { nil }
        }
        guard refreshes.count == 1, let refreshed = refreshes.first, refreshed.id == receipt.id, refreshed.params == screen.params else {
            return "result into \(receipt.id) but the plan refreshes \(refreshes.map(\.id))"
        }
        return nil
    }

    /// Why the plan does not show `after`'s transition, when it names one: strictly, its first
    /// step is of the transition's kind, animated and styled as it says; otherwise (a rule with
    /// several effects is named after the last; a guarded action resumed after its guard's flow
    /// was dismissed) some step is, and none before it is animated but the roll-back of a
    /// cancelled swipe.
    func disagreement(from before: NavigationState, to after: NavigationState, strict: Bool = true) -> String? {
        let strict = strict && after.pendingActions.count >= before.pendingActions.count
        let plan = plan(before, after)
        guard let transition = after.transition, !plan.steps.isEmpty else { return nil }
        let shows = { (step: NavigationPlan.Step) in step.interaction != .cancel && step.operation.kind.shows(transitionType: transition.type) }
        guard let index = strict ? (shows(plan.steps[0]) ? 0 : nil) : plan.steps.firstIndex(where: shows) else {
            return "transition \(transition.type) but the plan is \(plan.steps)"
        }
        let step = plan.steps[index]
        guard step.animated == transition.animated, step.style == transition.style else {
            return "transition \(transition.type) animated \(transition.animated) style \(transition.style ?? "nil") but \(step)"
        }
        if plan.steps[..<index].contains(where: { $0.animated && $0.interaction != .cancel }) { return "steps before the transition's are animated: \(plan.steps)" }
        return nil
    }

    /// A tree in one line: `f1 app[f2 onboarding[e3 onboarding.first] ^f9 modal[…]]`.
    static func outline(_ node: NavigationState.Node) -> String {
        let entries = node.entries.map { entry -> String in
            switch entry {
            case .screen(let screen): "\(screen.id) \(screen.feature)"
            case .flow(let child): outline(child)
            }
        }
        let selected = node.selected.map { " sel \($0)" } ?? ""
        let presented = node.presented.map { " ^" + outline($0.node) } ?? ""
        return "\(node.id) \(node.flow)[\(entries.joined(separator: ", "))]\(selected)\(presented)"
    }
}

struct NavigationPlanTests {
    /// Every transition of the sample app (new and onboarded users, face scan on and off,
    /// links, interactive starts, updates, ends and cancels): the plan turns the first state's
    /// rendering into the second's, starts with the step the transition names, and draws the
    /// second from nothing.
    @Test func everySampleTransitionRendersTheNextState() {
        let (states, edges) = SampleSpace.explored
        let (failures, disagreements, named) = PlanChecker().check(states: states, edges: edges)
        print("NavigationPlan: \(edges.count) transitions (\(named) with a transition) between \(states.count) states checked")
        #expect(edges.count > 1000)
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3).joined(separator: "\n\n"))")
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements; first: \(disagreements.prefix(3).joined(separator: "\n\n"))")
    }

    /// Jumps between any two reachable states (corrections, versions made elsewhere, other
    /// sessions) still give plans that render the target.
    @Test func randomJumpsBetweenReachableStatesRenderTheTarget() {
        let states = SampleSpace.explored.states.map(\.state)
        var generator = SeededGenerator(seed: 22)
        let checker = PlanChecker()
        var failures: [String] = []
        let jumps = 5000
        for _ in 0..<jumps {
            guard let from = states.randomElement(using: &generator), let to = states.randomElement(using: &generator) else { break }
            if let problem = checker.problem(from: from, to: to) {
                failures.append("\(PlanChecker.outline(from.root)) → \(PlanChecker.outline(to.root)): \(problem)")
            }
        }
        print("NavigationPlan: \(jumps) random jumps between \(states.count) states checked")
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3).joined(separator: "\n\n"))")
    }

    /// The checker can fail: a planner that drops dismissals is caught.
    @Test func theCheckerCatchesAPlanWithoutDismissals() {
        let broken = PlanChecker { from, to in
            var plan = NavigationPlan(from: from, to: to)
            plan.steps.removeAll { $0.operation == .dismiss }
            return plan
        }
        let caught = SampleSpace.explored.edges.filter { broken.problem(from: $0.before.state, to: $0.after.state) != nil }
        let kinds = Set(caught.compactMap { $0.after.state.transition?.type ?? $0.action.type })
        print("NavigationPlan: dropping dismissals fails \(caught.count) transitions: \(kinds.sorted())")
        #expect(!caught.isEmpty)
        #expect(kinds.contains("dismiss"))
    }
}

extension NavigationState.Node {
    /// The entry ids of every screen in the tree, presented ones included.
    var allScreenIds: Set<String> {
        var ids: Set<String> = []
        for entry in entries {
            switch entry {
            case .screen(let screen): ids.insert(screen.id)
            case .flow(let child): ids.formUnion(child.allScreenIds)
            }
        }
        if let presented { ids.formUnion(presented.node.allScreenIds) }
        return ids
    }
}

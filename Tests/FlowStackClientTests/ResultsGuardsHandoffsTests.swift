// Results, guards and hand-offs on the client: read from state documents, planned for a renderer, predicted from a bundle.
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import Testing

/// A shop like the sample app's checkout and paywall: checkout guarded by a login, an address
/// picker that returns its choice, and a purchase the app runs natively.
enum Shop {
    static let definitions: [(name: String, json: String)] = [
        ("app", #"""
            {"name": "app", "kind": "stacked", "initial": ["shop"],
             "on": {
               "shop.checkout": [{"from": "shop",
                 "guard": {"when": {"user": "loggedIn", "is": true}, "else": {"present": {"flow": "login", "style": "pageSheet"}}},
                 "do": [{"present": {"flow": "checkout", "style": "fullScreen"}}]}],
               "shop.upgrade": [{"from": "shop", "do": [{"present": {"flow": "paywall", "style": "pageSheet"}}]}]}}
            """#),
        ("login", #"""
            {"name": "login", "kind": "stacked", "initial": ["login.form"],
             "on": {"login.submit": [{"from": "login.form", "do": [{"setUser": {"loggedIn": true}}, {"dismiss": {}}]}],
                    "login.cancel": [{"do": [{"dismiss": {}}]}]}}
            """#),
        ("checkout", #"""
            {"name": "checkout", "kind": "stacked", "initial": ["checkout.cart"],
             "on": {"checkout.review": [{"from": "checkout.cart", "do": [{"push": "checkout.review"}]}],
                    "checkout.chooseAddress": [{"from": "checkout.review", "do": [{"present": {"flow": "address", "style": "pageSheet"}}]}],
                    "checkout.close": [{"do": [{"dismiss": {}}]}]}}
            """#),
        ("address", #"""
            {"name": "address", "kind": "stacked", "initial": ["address.list"],
             "on": {"address.chosen": [{"from": "address.list", "params": {"address": "object"},
                      "do": [{"dismiss": {}}, {"result": {"into": "address", "value": {"$param": "address"}}}]}],
                    "address.add": [{"from": "address.list", "do": [{"push": "address.form"}]}],
                    "address.saved": [{"from": "address.form", "params": {"address": "object"},
                      "do": [{"dismiss": {}}, {"result": {"into": "address", "value": {"$param": "address"}, "to": "checkout.review"}}]}]}}
            """#),
        ("paywall", #"""
            {"name": "paywall", "kind": "stacked", "initial": ["paywall.offer"],
             "on": {"paywall.buy": [{"from": "paywall.offer", "params": {"productId": "string"},
                      "do": [{"push": {"handoff": "purchase", "params": {"productId": {"$param": "productId"}}}}]}],
                    "purchase.completed": [{"from": "purchase", "params": {"transactionId": "string"},
                      "do": [{"setUser": {"premium": true}}, {"dismiss": {}}]}],
                    "purchase.cancelled": [{"from": "purchase", "do": [{"pop": {}}]}],
                    "purchase.failed": [{"from": "purchase", "params": {"reason": "string"},
                      "do": [{"pop": {}}, {"result": {"into": "error", "value": {"$param": "reason"}}}]}]}}
            """#),
    ]

    static let catalog: FlowCatalog = {
        let (catalog, problems) = FlowCatalog.parse(definitions.map { ($0.name, Array($0.json.utf8)) })
        if !problems.isEmpty { Issue.record("the shop's flows have problems: \(problems)") }
        return catalog
    }()

    /// The session at version 0 for a user signed in or not.
    static func start(loggedIn: Bool = false) throws -> SessionState {
        let context = FlowContext(userId: "u-shop", user: loggedIn ? ["loggedIn": true] : [:])
        let tree = try FlowEngine.start(catalog: catalog, context: context)
        return SessionState(sessionId: "s_shop_\(loggedIn)", userId: "u-shop", version: 0, tree: tree, context: context, catalog: catalog,
                            flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
    }

    static let address: JSONValue = ["line": "1 Main St", "city": "Lyon"]

    /// Sample params for the shop's actions that need them.
    static func params(_ available: AvailableAction) -> [JSONObject] {
        switch available.type {
        case "address.chosen", "address.saved": [["address": address]]
        case "paywall.buy": [["productId": "pro"]]
        case "purchase.completed": [["transactionId": "t-1"]]
        case "purchase.failed": [["reason": "declined"]]
        default: [[:]]
        }
    }
}

struct ResultsGuardsHandoffsTests {
    /// Applies `actions` from `start`, returning each next state with the plan from the one before
    /// (each plan checked on a rendered tree).
    func walk(from start: SessionState, _ actions: [FlowAction]) throws -> [(NavigationState, NavigationPlan)] {
        var session = start
        var shown = try NavigationState(session)
        var plans: [(NavigationState, NavigationPlan)] = []
        for action in actions {
            session = try session.applying(action).next
            let next = try NavigationState(session)
            let plan = NavigationPlan(from: shown, to: next)
            #expect(PlanChecker().problem(from: shown, to: next) == nil, "\(action.type)")
            plans.append((next, plan))
            shown = next
        }
        return plans
    }

    func descriptions(_ plan: NavigationPlan) -> [String] { plan.steps.map(\.description) }

    /// A state document's pending actions, hand-off screens and result receipts are read; a
    /// document from a server that does not send `pendingActions` reads as none.
    @Test func statesCarryPendingActionsHandoffsAndResults() throws {
        let text = #"""
            {"sessionId":"s","userId":"u","version":4,
             "root":{"id":"f1","flow":"app","kind":"stacked","entries":[
               {"id":"e2","feature":"shop","params":{"error":"declined"}},
               {"id":"e3","feature":"purchase","params":{"productId":"pro"},"handoff":"purchase"}],"presented":null},
             "screens":[{"id":"e2","feature":"shop","params":{"error":"declined"},"flow":"app","flowId":"f1"},
                        {"id":"e3","feature":"purchase","params":{"productId":"pro"},"flow":"app","flowId":"f1","handoff":"purchase"}],
             "top":{"id":"e3","feature":"purchase","params":{"productId":"pro"},"flow":"app","flowId":"f1","handoff":"purchase"},
             "transition":{"type":"pop","from":null,"to":{"id":"e2","feature":"shop","params":{},"flow":"app","flowId":"f1"},
                           "animated":true,"style":null,"interactive":false,"result":{"id":"e2","feature":"shop","into":"error"}},
             "interaction":null,"pendingLink":null,
             "pendingActions":[{"action":{"type":"shop.checkout","from":"e2","params":{"n":1}},"source":"e2","guard":{"flow":"login","flowId":"f9"}}],
             "handledBy":"app","flags":{},"experiments":{}}
            """#
        let state = try NavigationState(json: try JSONParser.parse(text))
        #expect(state.top?.handoff == "purchase")
        #expect(state.screens.map(\.handoff) == [nil, "purchase"])
        guard case .screen(let entry) = state.root.entries.last else { Issue.record("no hand-off entry"); return }
        #expect(entry.handoff == "purchase")
        #expect(state.transition?.result?.id == "e2" && state.transition?.result?.feature == "shop" && state.transition?.result?.into == "error")
        #expect(state.pendingActions.count == 1)
        let pending = try #require(state.pendingActions.first)
        #expect(pending.action == FlowAction(type: "shop.checkout", from: "e2", params: ["n": 1]))
        #expect(pending.source == "e2" && pending.guardFlow == "login" && pending.guardFlowId == "f9")

        // An older server: no pendingActions key, no handoff, no result.
        let older = text.replacingOccurrences(of: #""pendingActions":[{"action":{"type":"shop.checkout","from":"e2","params":{"n":1}},"source":"e2","guard":{"flow":"login","flowId":"f9"}}],"#, with: "")
        #expect(older != text)
        #expect(try NavigationState(json: try JSONParser.parse(older)).pendingActions == [])
        // A malformed one names where.
        let broken = text.replacingOccurrences(of: #""source":"e2","#, with: "")
        #expect(throws: MalformedState(path: "/pendingActions/0/source", message: "must be a string")) {
            try NavigationState(json: try JSONParser.parse(broken))
        }
    }

    /// A result refreshes only the screen that received it, after the dismiss or pop that
    /// reveals it; the renderer's tree then shows the new params.
    @Test func aResultRefreshesOnlyItsReceiver() throws {
        let plans = try walk(from: try Shop.start(loggedIn: true), [
            FlowAction(type: "shop.checkout"), FlowAction(type: "checkout.review"), FlowAction(type: "checkout.chooseAddress"),
            FlowAction(type: "address.chosen", params: ["address": Shop.address]),
            FlowAction(type: "checkout.chooseAddress"), FlowAction(type: "address.add"),
            FlowAction(type: "address.saved", params: ["address": ["line": "2 Quai"]]),
        ])
        let (chosen, chosenPlan) = plans[3]
        let receipt = try #require(chosen.transition?.result)
        #expect(receipt.feature == "checkout.review" && receipt.into == "address")
        #expect(chosen.top?.id == receipt.id && chosen.top?.params["address"] == Shop.address)
        let stack = try #require(chosen.top?.flowId)
        let presenter = try #require(plans[2].0.root.presented?.node.id)
        #expect(descriptions(chosenPlan) == [
            "dismiss on presentation over \(presenter), animated, pageSheet",
            "refresh \(receipt.id) on stack \(stack)",
        ])
        guard case .refresh(let screen) = chosenPlan.steps.last?.operation else { Issue.record("no refresh"); return }
        #expect(screen.params["address"] == Shop.address)
        // The cart below it is not touched, and neither is the review's controller rebuilt.
        #expect(!chosenPlan.steps.contains { if case .setStack = $0.operation { true } else { false } })

        // `to` names the receiver from a screen pushed in the picker.
        let (saved, savedPlan) = plans[6]
        #expect(saved.transition?.result?.id == receipt.id)
        #expect(descriptions(savedPlan).last == "refresh \(receipt.id) on stack \(stack)")
        #expect(savedPlan.steps.filter { $0.operation.kind == .refresh }.count == 1)

        // Without a transition to follow (a jump), the refresh is never the animated step.
        let elsewhere = try NavigationState(copying: chosen, version: 99)
        let jump = NavigationPlan(from: plans[2].0, to: elsewhere)
        #expect(!jump.followsTransition)
        #expect(jump.steps.map(\.animated) == [true, false])
        #expect(PlanChecker().problem(from: plans[2].0, to: elsewhere) == nil)
    }

    /// A hand-off is pushed like a screen, marked with its kind, so the renderer runs the
    /// native step; its failure pops back and refreshes the offer with the error.
    @Test func aHandoffIsPushedAsANativeStep() throws {
        let plans = try walk(from: try Shop.start(), [
            FlowAction(type: "shop.upgrade"), FlowAction(type: "paywall.buy", params: ["productId": "pro"]),
            FlowAction(type: "purchase.failed", params: ["reason": "declined"]),
            FlowAction(type: "paywall.buy", params: ["productId": "pro"]), FlowAction(type: "purchase.completed", params: ["transactionId": "t-1"]),
        ])
        let (bought, buyPlan) = plans[1]
        #expect(bought.top?.handoff == "purchase" && bought.top?.feature == "purchase" && bought.top?.params["productId"] == "pro")
        #expect(bought.transition?.to?.handoff == "purchase")
        #expect(buyPlan.steps.count == 1)
        guard case .push(.screen(let pushed)) = buyPlan.steps.first?.operation else { Issue.record("not a push: \(buyPlan.steps)"); return }
        #expect(pushed.handoff == "purchase" && pushed.params["productId"] == "pro")
        #expect(buyPlan.steps.first?.animated == true)

        let (failed, failPlan) = plans[2]
        let offer = try #require(failed.top)
        #expect(offer.feature == "paywall.offer" && offer.handoff == nil && offer.params["error"] == "declined")
        #expect(descriptions(failPlan) == ["pop on stack \(offer.flowId ?? ""), animated", "refresh \(offer.id) on stack \(offer.flowId ?? "")"])
        #expect(plans[4].0.features == ["shop"])
    }

    /// The guard: login is shown instead and the action waits; signing in lands on checkout in
    /// the same version, and the plan goes straight there; cancelling drops it.
    @Test func aGuardedActionWaitsAndResumes() throws {
        let plans = try walk(from: try Shop.start(), [
            FlowAction(type: "shop.checkout"), FlowAction(type: "login.submit"),
        ])
        let (login, _) = plans[0]
        #expect(login.features == ["shop", "login.form"])
        #expect(login.pendingActions.map(\.action.type) == ["shop.checkout"])
        #expect(login.pendingActions.first?.guardFlow == "login")
        let (checkout, plan) = plans[1]
        #expect(checkout.features == ["shop", "checkout.cart"] && checkout.pendingActions.isEmpty)
        #expect(checkout.version == login.version + 1)
        #expect(descriptions(plan).count == 2)
        #expect(plan.steps.map(\.operation.kind) == [.dismiss, .present])

        let cancelled = try walk(from: try Shop.start(), [FlowAction(type: "shop.checkout"), FlowAction(type: "login.cancel")])
        #expect(cancelled[1].0.features == ["shop"] && cancelled[1].0.pendingActions.isEmpty)
    }

    /// Every transition of the shop (guards, results, hand-offs, backs and swipes) and every
    /// state drawn from nothing pass the plan checker, which also wants a refresh for each result.
    @Test func everyShopTransitionRendersTheNextState() throws {
        let (states, edges) = try SampleSpace.explore(from: [try Shop.start(), try Shop.start(loggedIn: true)], depth: 7) { session in
            SampleSpace.actions(in: session, links: [], params: Shop.params)
        }
        let (failures, disagreements, _) = PlanChecker().check(states: states, edges: edges, strict: false)
        let results = edges.filter { $0.after.state.transition?.result != nil }.count
        let handoffs = states.filter { $0.state.top?.handoff != nil }.count
        let resumed = edges.filter { !$0.before.state.pendingActions.isEmpty && $0.after.state.pendingActions.isEmpty }.count
        print("NavigationPlan: \(edges.count) shop transitions (\(results) with a result, \(resumed) ending a guard) between \(states.count) states (\(handoffs) on a hand-off)")
        #expect(results > 0 && handoffs > 0 && resumed > 0)
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3).joined(separator: "\n\n"))")
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements; first: \(disagreements.prefix(3).joined(separator: "\n\n"))")
    }

    /// The client's engine, loaded from a bundle as the server writes it, predicts a guard (login
    /// shown, the action pending, then resumed) and results exactly: each state it shows is the
    /// server engine's document byte for byte.
    @Test func bundlePredictionsOfGuardsAndResultsMatchTheServer() throws {
        var server = try Shop.start()
        var writer = JSONWriter()
        SessionBundle.write(server, flowVersions: Dictionary(uniqueKeysWithValues: Shop.definitions.map { ($0.name, 1) }),
                            definitions: Shop.definitions.map { ($0.name, Array($0.json.utf8)) }, into: &writer)
        let bundle = try SessionBundle(json: try JSONParser.parse(writer.takeBytes()))
        var machine = ClientMachine(confirmed: try NavigationState(server))
        machine.loaded(bundle.state)
        let actions = [
            FlowAction(type: "shop.checkout"), FlowAction(type: "login.submit"), FlowAction(type: "checkout.review"),
            FlowAction(type: "checkout.chooseAddress"), FlowAction(type: "address.chosen", params: ["address": Shop.address]),
            FlowAction(type: "checkout.close"), FlowAction(type: "shop.upgrade"), FlowAction(type: "paywall.buy", params: ["productId": "pro"]),
            FlowAction(type: "purchase.failed", params: ["reason": "declined"]),
        ]
        var sawPending = false
        var results = 0
        for (index, action) in actions.enumerated() {
            let tapped = try machine.tap(action, key: "k\(index)")
            server = try server.applying(action).next
            guard case .shown(let shown) = tapped else { Issue.record("\(action.type) was not predicted"); return }
            #expect(machine.engine?.document() == server.document(), "\(action.type)")
            #expect(shown == (try NavigationState(server)), "\(action.type)")
            sawPending = sawPending || !shown.pendingActions.isEmpty
            if shown.transition?.result != nil { results += 1 }
        }
        #expect(sawPending && results == 2)
        #expect(machine.shown.top?.params["error"] == "declined")
    }
}

extension NavigationState {
    /// The same document at another version: a state that does not follow `self`'s transition.
    init(copying state: NavigationState, version: Int) throws {
        guard case .object(var object) = state.document else { throw MalformedState(path: "", message: "not an object") }
        object["version"] = .integer(version)
        try self.init(json: .object(object))
    }
}

// ResultTests: a `result` effect writes a value into a screen still in the tree, and the transition names it.

import JSON
import Testing

import FlowEngine

struct ResultTests {
    /// At checkout.review, with the address sheet or the date screen one step away.
    private func atReview() throws -> Session {
        var session = try ShopFlows.session(["loggedIn": true])
        try session.send("shop.checkout")
        try session.send("checkout.review")
        return session
    }

    /// After a pop, the screen below receives the value, in the same outcome, and the transition names it.
    @Test func popReturnsToTheScreenBelow() throws {
        var session = try atReview()
        let review = try #require(session.top)
        try session.send("checkout.pickDate")
        let outcome = try session.send("checkout.dateChosen", params: ["date": "2026-12-24"])
        #expect(session.top?.id == review.id)
        #expect(session.top?.params == ["date": "2026-12-24"])
        #expect(outcome.transition?.type == .pop)
        #expect(outcome.transition?.result == ResultReceipt(id: review.id, feature: "checkout.review", into: "date"))
        #expect(outcome.transition?.to?.params == ["date": "2026-12-24"])
    }

    /// After a dismiss, the presenter's top screen receives it; a second result replaces the first.
    @Test func dismissReturnsToThePresenter() throws {
        var session = try atReview()
        let review = try #require(session.top)
        try session.send("checkout.chooseAddress")
        #expect(session.topFeature == "address.list")
        let outcome = try session.send("address.chosen", params: ["address": ["city": "Lyon"]])
        #expect(session.screenFeatures == ["shop.home", "checkout.cart", "checkout.review"])
        #expect(session.top?.params == ["address": ["city": "Lyon"]])
        #expect(outcome.transition?.type == .dismiss)
        #expect(outcome.transition?.result?.entryId == review.entryId)
        try session.send("checkout.chooseAddress")
        try session.send("address.chosen", params: ["address": ["city": "Nice"]])
        #expect(session.top?.params == ["address": ["city": "Nice"]])
    }

    /// `to` names the receiver: deeper in the sheet it still lands on checkout.review, and it can
    /// reach a screen below the top (the cart) while the top stays as it is.
    @Test func toNamesTheReceiver() throws {
        var session = try atReview()
        try session.send("checkout.chooseAddress")
        try session.send("address.add")
        let outcome = try session.send("address.saved", params: ["address": ["city": "Caen"]])
        #expect(session.topFeature == "checkout.review")
        #expect(session.top?.params == ["address": ["saved": true, "address": ["city": "Caen"]]])
        #expect(outcome.transition?.result?.feature == "checkout.review")

        try session.send("checkout.chooseAddress")
        let cart = try #require(session.tree.screens.first { $0.feature == "checkout.cart" })
        let second = try session.send("address.useCart")
        #expect(session.topFeature == "checkout.review")
        #expect(second.transition?.result == ResultReceipt(id: cart.id, feature: "checkout.cart", into: "note"))
        #expect(session.tree.screens.first { $0.feature == "checkout.cart" }?.params == ["note": "from cart"])
    }

    /// A missing param is refused with its path; nothing moves.
    @Test func missingValueIsRefused() throws {
        var session = try atReview()
        try session.send("checkout.chooseAddress")
        let error = session.failure("address.chosen")
        guard case .invalidParams(let path, _)? = error else {
            Issue.record("expected invalid-params, got \(String(describing: error))")
            return
        }
        #expect(path == "/params/address")
    }

    /// A receiver that is not in the tree at run time refuses the action and changes nothing.
    @Test func absentReceiverIsRefused() throws {
        let catalog = Fixtures.catalog(
            """
            {"name": "app", "kind": "stacked", "initial": ["a.one"],
             "on": {"a.next": [{"from": "a.one", "do": [{"push": "a.two"}]}],
                    "a.open": [{"do": [{"present": "sheet"}]}]}}
            """,
            """
            {"name": "sheet", "kind": "stacked", "initial": ["sheet.pick"],
             "on": {"sheet.done": [{"do": [{"dismiss": {}}, {"result": {"into": "x", "value": 1, "to": "a.two"}}]}]}}
            """)
        var session = try Session(catalog: catalog)
        try session.send("a.open")
        guard case .refused(_, _, let reason)? = session.failure("sheet.done") else {
            Issue.record("expected refused")
            return
        }
        #expect(reason.contains("a.two"))
        try session.send("back")
        try session.send("a.next")
        try session.send("a.open")
        let outcome = try session.send("sheet.done")
        #expect(session.top?.params == ["x": 1])
        #expect(outcome.transition?.result?.into == "x")
    }

    /// The state document shows the receipt on the transition; storage keeps it for a preview.
    @Test func documentShowsTheReceipt() throws {
        var session = try atReview()
        let review = try #require(session.topId)
        try session.send("checkout.pickDate")
        let outcome = try session.send("checkout.dateChosen", params: ["date": "d"])
        let text = String(decoding: session.tree.navigationJSON(transition: outcome.transition, handledBy: outcome.handledBy), as: UTF8.self)
        #expect(text.contains(#""result":{"id":"\#(review)","feature":"checkout.review","into":"date"}"#))
        #expect(text.contains(#""params":{"date":"d"}"#))
        let again = try FlowTree(storage: session.tree.storageBytes())
        #expect(again == session.tree)
    }

    /// What PUT refuses, each at its path.
    @Test(arguments: [
        (#"[{"result": {"into": "a", "value": 1}}]"#, "/on/x.go/0/do/0/result", "pop, popTo, popToRoot or dismiss"),
        (#"[{"pop": {}}, {"result": {"into": "a", "value": 1}}, {"result": {"into": "b", "value": 2}}]"#, "/on/x.go/0/do/2/result", "at most one result"),
        (#"[{"pop": {}}, {"result": {"into": "a", "value": {"$param": "v"}}}]"#, "/on/x.go/0/do/1/result/value", "declared type"),
        (#"[{"pop": {}}, {"result": {"value": 1}}]"#, "/on/x.go/0/do/1/result", "needs \"into\""),
        (#"[{"pop": {}}, {"result": {"into": "a"}}]"#, "/on/x.go/0/do/1/result", "needs \"value\""),
        (#"[{"pop": {}}, {"result": {"into": "", "value": 1}}]"#, "/on/x.go/0/do/1/result/into", "non-empty"),
        (#"[{"pop": {}}, {"result": {"into": "a", "value": 1, "where": 2}}]"#, "/on/x.go/0/do/1/result/where", "unknown"),
        (#"[{"pop": {}}, {"result": 3}]"#, "/on/x.go/0/do/1/result", "takes"),
    ])
    func putRefuses(effects: String, path: String, message: String) {
        let problems = Fixtures.problems(#"{"name": "x", "kind": "stacked", "initial": ["x.a"], "on": {"x.go": [{"do": \#(effects)}]}}"#)
        #expect(problems.contains { $0.path == path && $0.message.contains(message) }, "\(problems)")
    }

    /// `to` must name a screen that can be below or behind the returning flow.
    @Test func unreachableReceiverIsACatalogProblem() throws {
        let sheet = try FlowDefinition.parse(Array("""
            {"name": "sheet", "kind": "stacked", "initial": ["sheet.pick"],
             "on": {"sheet.done": [{"do": [{"dismiss": {}}, {"result": {"into": "x", "value": 1, "to": "elsewhere"}}]}],
                    "sheet.ok": [{"do": [{"dismiss": {}}, {"result": {"into": "x", "value": 1, "to": "a.one"}}]}]}}
            """.utf8))
        let app = try FlowDefinition.parse(Array("""
            {"name": "app", "kind": "stacked", "initial": ["a.one"], "on": {"a.open": [{"do": [{"present": "sheet"}]}]}}
            """.utf8))
        let problems = FlowCatalog([app, sheet]).validate()
        #expect(problems.map(\.path) == ["/sheet/on/sheet.done/0/do/1/result/to"], "\(problems)")
        // A screen of the returning flow itself is gone once the rule dismisses that flow, but
        // below its top after a pop.
        let picker = try FlowDefinition.parse(Array("""
            {"name": "sheet", "kind": "stacked", "initial": ["sheet.pick"],
             "on": {"sheet.more": [{"do": [{"push": "sheet.form"}]}],
                    "sheet.done": [{"do": [{"dismiss": {}}, {"result": {"into": "x", "value": 1, "to": "sheet.pick"}}]}],
                    "sheet.back": [{"do": [{"pop": {}}, {"result": {"into": "x", "value": 1, "to": "sheet.pick"}}]}]}}
            """.utf8))
        let own = FlowCatalog([app, picker]).validate()
        #expect(own.map(\.path) == ["/sheet/on/sheet.done/0/do/1/result/to"], "\(own)")
        #expect(own.first?.message.contains("takes sheet away") == true)
    }
}

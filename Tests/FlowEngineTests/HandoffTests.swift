// HandoffTests: a hand-off entry shows like a screen marked for the app's native step, and its outcomes move the flow on.

import JSON
import Testing

import FlowEngine

struct HandoffTests {
    private func atPurchase() throws -> Session {
        var session = try ShopFlows.session()
        try session.send("shop.premium")
        #expect(session.topFeature == "paywall.offer")
        #expect(session.tree.pendingActions.map(\.action.type) == ["shop.premium"])
        try session.send("paywall.buy", params: ["productId": "pro.yearly"])
        return session
    }

    /// The hand-off is on top with its kind and its params, in the tree, the screens and the document.
    @Test func handoffShowsOnTop() throws {
        let session = try atPurchase()
        let top = try #require(session.top)
        #expect(top.feature == "purchase")
        #expect(top.isHandoff)
        #expect(top.params == ["productId": "pro.yearly"])
        #expect(session.last?.transition?.type == .push)
        #expect(session.last?.transition?.to?.isHandoff == true)
        #expect(session.tree.screens.filter(\.isHandoff).map(\.feature) == ["purchase"])
        let text = String(decoding: session.tree.navigationJSON(), as: UTF8.self)
        #expect(text.contains(#""feature":"purchase","params":{"productId":"pro.yearly"},"handoff":"purchase"}"#))
        #expect(text.contains(#""feature":"purchase","params":{"productId":"pro.yearly"},"flow":"paywall","flowId":"f3","handoff":"purchase"}"#))
        #expect(!text.contains(#""feature":"paywall.offer","params":{},"handoff""#))
    }

    /// An app killed during its native step finds the hand-off pending in the stored state.
    @Test func handoffSurvivesStorage() throws {
        let session = try atPurchase()
        let stored = session.tree.storageBytes()
        #expect(String(decoding: stored, as: UTF8.self).contains(#""handoff":true"#))
        let again = try FlowTree(storage: stored)
        #expect(again == session.tree)
        #expect(again.top?.isHandoff == true)
        // A tree stored before hand-offs existed reads back with none.
        let old = #"{"format":1,"nextId":3,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":2,"feature":"shop.home"}]}}"#
        #expect(try FlowTree(storage: Array(old.utf8)).top?.isHandoff == false)
        let wrong = #"{"format":1,"nextId":3,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":2,"feature":"x","handoff":false}]}}"#
        #expect(throws: FlowStorageError.self) { try FlowTree(storage: Array(wrong.utf8)) }
    }

    /// Completed: the user state records it, the paywall goes, and the held-back action resumes.
    @Test func completedResumesWhatWasAsked() throws {
        var session = try atPurchase()
        let outcome = try session.send("purchase.completed", params: ["transactionId": "t-1"])
        #expect(session.context.user["premium"] == true)
        #expect(session.screenFeatures == ["shop.home", "shop.vault"])
        #expect(session.tree.pendingActions.isEmpty)
        #expect(outcome.handledBy == "paywall")
        #expect(outcome.transition?.type == .push)
        #expect(outcome.transition?.from?.feature == "purchase")
        #expect(outcome.transition?.to?.feature == "shop.vault")
    }

    /// Cancelled goes back to the offer; failed goes back with the reason as a result.
    @Test func cancelledAndFailedGoBack() throws {
        var session = try atPurchase()
        try session.send("purchase.cancelled")
        #expect(session.topFeature == "paywall.offer")
        #expect(session.top?.params == [:])
        try session.send("paywall.buy", params: ["productId": "pro.yearly"])
        let failed = try session.send("purchase.failed", params: ["reason": "card declined"])
        #expect(session.topFeature == "paywall.offer")
        #expect(session.top?.params == ["error": "card declined"])
        #expect(failed.transition?.result?.feature == "paywall.offer")
        #expect(session.failure("purchase.failed", params: ["reason": "x"]) != nil)
        try session.send("paywall.close")
        #expect(session.screenFeatures == ["shop.home"])
        #expect(session.tree.pendingActions.isEmpty, "closing the paywall cancels the guard")
    }

    /// The outcomes are what the client can post from the hand-off, with their params.
    @Test func outcomesAreTheAvailableActions() throws {
        let session = try atPurchase()
        let available = FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context)
        #expect(available.map(\.type) == ["purchase.completed", "purchase.cancelled", "purchase.failed", "back"])
        #expect(available.first?.params.map(\.name) == ["transactionId"])
    }

    /// A hand-off's kind counts as a feature a client must render.
    @Test func kindIsAFeature() {
        #expect(ShopFlows.catalog.screenFeatures(of: "paywall").features == ["paywall.offer", "purchase"])
    }

    @Test(arguments: [
        (#"{"handoff": "purchase", "screen": "x"}"#, "/on/x.go/0/do/0/push", "not several"),
        (#"{"handoff": ""}"#, "/on/x.go/0/do/0/push/handoff", "non-empty"),
        (#"{"handoff": 3}"#, "/on/x.go/0/do/0/push/handoff", "non-empty"),
        (#"{"handoff": "camera", "params": 1}"#, "/on/x.go/0/do/0/push/params", "object"),
    ])
    func putRefuses(target: String, path: String, message: String) {
        let problems = Fixtures.problems(#"{"name": "x", "kind": "stacked", "initial": ["x.a"], "on": {"x.go": [{"do": [{"push": \#(target)}]}]}}"#)
        #expect(problems.contains { $0.path == path && $0.message.contains(message) }, "\(problems)")
    }

    /// A flow may start with a hand-off (a camera flow).
    @Test func initialHandoff() throws {
        let catalog = Fixtures.catalog(#"{"name": "app", "kind": "stacked", "initial": [{"handoff": "camera", "params": {"mode": "photo"}}], "on": {"camera.taken": [{"from": "camera", "do": [{"setRoot": "photo.review"}]}]}}"#)
        var session = try Session(catalog: catalog)
        #expect(session.top?.isHandoff == true)
        #expect(session.top?.params == ["mode": "photo"])
        try session.send("camera.taken")
        #expect(session.top?.isHandoff == false)
    }
}

// GuardTests: a guard shows another flow first, keeps the action pending, and applies it in the same step once satisfied.

import JSON
import Testing

import FlowEngine

struct GuardTests {
    /// A guest asking for checkout gets the login sheet; the action waits with where it came from.
    @Test func failingGuardShowsItsFlowAndKeepsTheAction() throws {
        var session = try ShopFlows.session(["acceptedTerms": true])
        let home = try #require(session.top)
        let outcome = try session.send("shop.checkout", from: home.entryId)
        #expect(session.screenFeatures == ["shop.home", "login.form"])
        #expect(outcome.transition?.type == .present)
        #expect(outcome.transition?.style == "pageSheet")
        #expect(outcome.handledBy == "app")
        let pending = try #require(session.tree.pendingActions.first)
        #expect(session.tree.pendingActions.count == 1)
        #expect(pending.action == FlowAction(type: "shop.checkout", from: home.entryId))
        #expect(pending.source == home.id)
        #expect(pending.guardFlow == "login")
        #expect(pending.guardFlowId == session.top?.flowId)
        let text = String(decoding: session.tree.navigationJSON(), as: UTF8.self)
        #expect(text.contains(#""pendingActions":[{"action":{"type":"shop.checkout","from":"e2","params":{}},"source":"e2","guard":{"flow":"login","flowId":"f3"}}]"#))
    }

    /// Logging in lands on checkout in the same outcome: one transition from the login form to the cart.
    @Test func satisfiedGuardResumesInTheSameStep() throws {
        var session = try ShopFlows.session(["acceptedTerms": true])
        try session.send("shop.checkout")
        let login = try #require(session.top)
        let outcome = try session.send("login.submit")
        #expect(session.screenFeatures == ["shop.home", "checkout.cart"])
        #expect(session.tree.pendingActions.isEmpty)
        #expect(outcome.handledBy == "login")
        #expect(outcome.userChanges == [UserChange(key: "loggedIn", value: true)])
        #expect(outcome.transition?.type == .present)
        #expect(outcome.transition?.style == "fullScreen")
        #expect(outcome.transition?.from == login)
        #expect(outcome.transition?.to?.feature == "checkout.cart")
    }

    /// Cancelling the login (its own action, or a generic back) drops the action.
    @Test(arguments: ["login.cancel", "back"])
    func cancelledGuardDropsTheAction(cancel: String) throws {
        var session = try ShopFlows.session(["acceptedTerms": true])
        try session.send("shop.checkout")
        let outcome = try session.send(cancel)
        #expect(session.screenFeatures == ["shop.home"])
        #expect(session.tree.pendingActions.isEmpty)
        #expect(outcome.transition?.type == .dismiss)
    }

    /// The guard is only checked when it fails: a logged-in user goes straight on.
    @Test func holdingGuardAppliesTheRule() throws {
        var session = try ShopFlows.session(["loggedIn": true])
        try session.send("shop.checkout")
        #expect(session.screenFeatures == ["shop.home", "checkout.cart"])
        #expect(session.tree.pendingActions.isEmpty)
    }

    /// The action waits while the guard's flow is on screen, even once the guard holds.
    @Test func waitsUntilTheGuardFlowIsGone() throws {
        var session = try ShopFlows.session(["acceptedTerms": true])
        try session.send("shop.checkout")
        try session.send("login.stay")
        #expect(session.topFeature == "login.form")
        #expect(session.tree.pendingActions.count == 1)
        try session.send("login.cancel")
        #expect(session.topFeature == "checkout.cart", "the guard holds when its flow goes, so the action applies")
    }

    /// Guards nest: the terms guard inside login resumes login, which resumes checkout, in one step.
    @Test func nestedGuardsResumeInnermostFirst() throws {
        var session = try ShopFlows.session()
        try session.send("shop.checkout")
        try session.send("login.submit")
        #expect(session.screenFeatures == ["shop.home", "login.form", "terms.text"])
        #expect(session.tree.pendingActions.map(\.action.type) == ["shop.checkout", "login.submit"])
        let outcome = try session.send("terms.accept")
        #expect(session.screenFeatures == ["shop.home", "checkout.cart"])
        #expect(session.tree.pendingActions.isEmpty)
        #expect(outcome.userChanges.map(\.key) == ["acceptedTerms", "loggedIn"])
        #expect(outcome.handledBy == "terms")
        #expect(outcome.transition?.from?.feature == "terms.text")
        #expect(outcome.transition?.to?.feature == "checkout.cart")
    }

    /// Declining the inner guard drops only the inner action; the outer one still waits for login.
    @Test func declinedInnerGuardKeepsTheOuter() throws {
        var session = try ShopFlows.session()
        try session.send("shop.checkout")
        try session.send("login.submit")
        try session.send("terms.decline")
        #expect(session.screenFeatures == ["shop.home", "login.form"])
        #expect(session.tree.pendingActions.map(\.action.type) == ["shop.checkout"])
    }

    /// A guard flow pushed on the stack resumes when it is popped.
    @Test func pushedGuardFlowResumesWhenPopped() throws {
        var session = try ShopFlows.session()
        try session.send("shop.orders")
        #expect(session.screenFeatures == ["shop.home", "login.form"])
        #expect(session.last?.transition?.type == .push)
        let outcome = try session.send("login.done")
        #expect(session.screenFeatures == ["shop.home", "shop.orders"])
        #expect(outcome.transition?.type == .push)
    }

    /// When the screen the action came from is gone, the action is dropped even though the guard holds.
    @Test func movedSourceDropsTheAction() throws {
        var session = try ShopFlows.session()
        try session.send("shop.checkout")
        let outcome = try session.send("login.restart")
        #expect(session.context.user["loggedIn"] == true)
        #expect(session.screenFeatures == ["shop.home"])
        #expect(session.tree.pendingActions.isEmpty)
        #expect(outcome.transition?.type == .replaceRoot)
    }

    /// A guarded action cannot start an interactive transition while its guard fails; once it holds, it can.
    @Test func interactiveWhileFailingIsRefused() throws {
        var guest = try ShopFlows.session()
        guard case .refused(_, _, let reason)? = guest.failure("shop.swipe", interactive: true) else {
            Issue.record("expected refused")
            return
        }
        #expect(reason.contains("guard"))
        #expect(guest.tree.pendingActions.isEmpty)
        var member = try ShopFlows.session(["loggedIn": true])
        let started = try member.send("shop.swipe", interactive: true)
        #expect(started.interactionEvent == .started)
    }

    /// A guard whose flow cannot be shown refuses the action and keeps nothing.
    @Test func refusedGuardFlowKeepsNothing() throws {
        let catalog = Fixtures.catalog(
            """
            {"name": "app", "kind": "stacked", "initial": ["a.home"],
             "on": {"a.sheet": [{"do": [{"present": "sheet"}]}],
                    "sheet.buy": [{"via": "sheet", "guard": {"when": {"user": "ok", "is": true}, "else": {"present": "login"}}, "do": [{"dismiss": {}}]}]}}
            """,
            #"{"name": "sheet", "kind": "stacked", "initial": ["sheet.main"]}"#,
            #"{"name": "login", "kind": "stacked", "initial": ["login.form"]}"#)
        var session = try Session(catalog: catalog)
        try session.send("a.sheet")
        guard case .refused(let flow, _, let reason)? = session.failure("sheet.buy") else {
            Issue.record("expected refused")
            return
        }
        #expect(flow == "app")
        #expect(reason.contains("already presents"))
        #expect(session.tree.pendingActions.isEmpty)
        // A guard flow that is not live is a broken definition; nothing is kept either.
        let ghost = FlowCatalog([
            try FlowDefinition.parse(Array(#"{"name": "app", "kind": "stacked", "initial": ["a.home"], "on": {"a.go": [{"guard": {"when": {"user": "ok", "is": true}, "else": {"present": "ghost"}}, "do": [{"push": "a.next"}]}]}}"#.utf8)),
        ])
        var broken = try Session(catalog: ghost)
        #expect(broken.failure("a.go")?.code == "broken-definition")
    }

    /// At most eight actions wait at once; the ninth guard is refused.
    @Test func nestingIsBounded() throws {
        let catalog = Fixtures.catalog(#"{"name": "app", "kind": "stacked", "initial": ["loop.screen"], "on": {"loop.again": [{"guard": {"when": {"user": "free", "is": true}, "else": {"present": "app"}}, "do": [{"push": "loop.screen"}]}]}}"#)
        var session = try Session(catalog: catalog)
        for _ in 0..<FlowEngine.maxPendingActions { try session.send("loop.again") }
        #expect(session.tree.pendingActions.count == FlowEngine.maxPendingActions)
        #expect(session.failure("loop.again")?.code == "refused")
        #expect(session.tree.structuralProblems().isEmpty)
    }

    /// Storage keeps the waiting actions; malformed ones are refused with their path.
    @Test func storageKeepsPendingActions() throws {
        var session = try ShopFlows.session()
        try session.send("shop.checkout")
        try session.send("login.submit")
        let again = try FlowTree(storage: session.tree.storageBytes())
        #expect(again == session.tree)
        #expect(again.pendingActions.count == 2)
        let base = #"{"format":1,"nextId":9,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":2,"feature":"shop.home"}]},"pendingActions":"#
        let bad = [
            #"{}"#,
            #"[{"action":{"type":"x","interactive":false},"source":2,"guardFlow":"login"}]"#,
            #"[{"action":{"type":"x","interactive":false},"source":0,"guardFlow":"login","guardFlowId":3}]"#,
            #"[{"action":{"type":"x","interactive":false},"source":2,"guardFlow":"login","guardFlowId":30}]"#,
        ]
        for text in bad {
            #expect(throws: FlowStorageError.self, "\(text)") { try FlowTree(storage: Array((base + text + "}").utf8)) }
        }
    }

    /// What PUT refuses about guards, each at its path.
    @Test(arguments: [
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": {"present": "login"}}, "do": [{"bubble": {}}]}"#, "/on/x.go/0/guard", "only bubbles"),
        (#"{"guard": {"else": {"present": "login"}}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard", "needs \"when\""),
        (#"{"guard": {"when": {"user": "a", "is": true}}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard", "needs \"else\""),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": {"push": "x.c"}}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/else", "shows the flow"),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": [{"present": "login"}, {"push": {"flow": "login"}}]}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/else/1", "one flow"),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": [{"present": "login"}, {"replaceRoot": "x.c"}]}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/else/1/replaceRoot", "cannot replaceRoot"),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": {"present": "login"}, "then": 1}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/then", "unknown"),
        (#"{"guard": {"when": {"usr": "a", "is": true}, "else": {"present": "login"}}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/when", "condition"),
        (#"{"guard": [], "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard", "takes"),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": {"setRoot": {"flow": "login"}}}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/else", "shows the flow"),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": [{"pop": {}}, {"present": "login"}]}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/else/0/pop", "cannot pop"),
        (#"{"guard": {"when": {"user": "a", "is": true}, "else": [{"present": "login"}, {"push": "x.c"}]}, "do": [{"push": "x.b"}]}"#, "/on/x.go/0/guard/else/1/push", "cannot push"),
    ])
    func putRefuses(rule: String, path: String, message: String) {
        let problems = Fixtures.problems(#"{"name": "x", "kind": "stacked", "initial": ["x.a"], "on": {"x.go": [\#(rule)]}}"#)
        #expect(problems.contains { $0.path.hasPrefix(path) && $0.message.contains(message) }, "\(problems)")
    }

    /// A guard may set user state along with showing its flow.
    @Test func elseMaySetUser() throws {
        let catalog = Fixtures.catalog(
            #"{"name": "app", "kind": "stacked", "initial": ["a.home"], "on": {"a.go": [{"guard": {"when": {"user": "ok", "is": true}, "else": [{"setUser": {"asked": true}}, {"present": "login"}]}, "do": [{"push": "a.next"}]}]}}"#,
            #"{"name": "login", "kind": "stacked", "initial": ["login.form"], "on": {"login.ok": [{"do": [{"setUser": {"ok": true}}, {"dismiss": {}}]}]}}"#)
        var session = try Session(catalog: catalog)
        let shown = try session.send("a.go")
        #expect(shown.userChanges == [UserChange(key: "asked", value: true)])
        try session.send("login.ok")
        #expect(session.screenFeatures == ["a.home", "a.next"])
    }

    /// A guard flow that would end up under something the handling flow presents is refused
    /// rather than left waiting where the user cannot see it.
    @Test func guardFlowMustBeOnScreen() throws {
        let catalog = Fixtures.catalog(
            """
            {"name": "app", "kind": "stacked", "initial": ["a.home"],
             "on": {"a.sheet": [{"do": [{"present": "sheet"}]}],
                    "sheet.pay": [{"via": "sheet", "guard": {"when": {"user": "ok", "is": true}, "else": {"push": {"flow": "login"}}}, "do": [{"push": "a.paid"}]}]}}
            """,
            #"{"name": "sheet", "kind": "stacked", "initial": ["sheet.main"]}"#,
            #"{"name": "login", "kind": "stacked", "initial": ["login.form"]}"#)
        var session = try Session(catalog: catalog)
        try session.send("a.sheet")
        guard case .refused(_, _, let reason)? = session.failure("sheet.pay") else {
            Issue.record("expected refused")
            return
        }
        #expect(reason.contains("would not be on screen"))
    }

    /// When the action that ends a guard returns a result and the resumed action moves on, the
    /// transition still names the screen that received the result.
    @Test func resumeKeepsTheResultReceipt() throws {
        let catalog = Fixtures.catalog(
            #"{"name": "app", "kind": "stacked", "initial": ["r.review"], "on": {"r.pay": [{"from": "r.review", "guard": {"when": {"user": "hasAddress", "is": true}, "else": {"present": "picker"}}, "do": [{"push": "r.paid"}]}]}}"#,
            #"{"name": "picker", "kind": "stacked", "initial": ["picker.list"], "on": {"picker.chosen": [{"params": {"address": "object"}, "do": [{"setUser": {"hasAddress": true}}, {"dismiss": {}}, {"result": {"into": "address", "value": {"$param": "address"}}}]}]}}"#)
        var session = try Session(catalog: catalog)
        let review = try #require(session.top)
        try session.send("r.pay")
        let outcome = try session.send("picker.chosen", params: ["address": ["city": "Lyon"]])
        #expect(session.screenFeatures == ["r.review", "r.paid"])
        #expect(outcome.transition?.type == .push)
        #expect(outcome.transition?.result == ResultReceipt(id: review.id, feature: "r.review", into: "address"))
        #expect(session.tree.screens.first?.params == ["address": ["city": "Lyon"]])
    }

    /// A guarded rule is listed as interactive only while its guard holds.
    @Test func availableActionsKnowTheGuard() throws {
        let guest = try ShopFlows.session()
        let member = try ShopFlows.session(["loggedIn": true])
        func swipe(_ session: Session) -> AvailableAction? {
            FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context).first { $0.type == "shop.swipe" }
        }
        #expect(swipe(guest)?.interactive == false)
        #expect(swipe(member)?.interactive == true)
    }

    /// A guard that reads no user state can never resume: a warning, not a refusal.
    @Test func guardWithoutUserStateIsAWarning() throws {
        let app = try FlowDefinition.parse(Array(#"{"name": "app", "kind": "stacked", "initial": ["a.home"], "on": {"a.go": [{"guard": {"when": {"flag": "beta", "is": true}, "else": {"present": "login"}}, "do": [{"push": "a.next"}]}]}}"#.utf8))
        let login = try FlowDefinition.parse(Array(#"{"name": "login", "kind": "stacked", "initial": ["login.form"]}"#.utf8))
        let problems = FlowCatalog([app, login]).validate()
        #expect(problems.map(\.path) == ["/app/on/a.go/0/guard/when"], "\(problems)")
        #expect(problems.allSatisfy { $0.isWarning })
    }

    /// The guard's flow is a reference like any other: unknown ones are caught, and its screens count.
    @Test func guardFlowIsAReference() throws {
        let app = try FlowDefinition.parse(Array(#"{"name": "app", "kind": "stacked", "initial": ["a.home"], "on": {"a.go": [{"guard": {"when": {"user": "ok", "is": true}, "else": {"present": "nowhere"}}, "do": [{"push": "a.next"}]}]}}"#.utf8))
        let problems = FlowCatalog([app]).validate()
        #expect(problems.map(\.path) == ["/app/on/a.go/0/guard/else/present"], "\(problems)")
        #expect(ShopFlows.catalog.screenFeatures(of: "app").features.isSuperset(of: ["login.form", "terms.text", "paywall.offer", "purchase"]))
    }
}

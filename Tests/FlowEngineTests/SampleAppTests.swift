// SampleAppTests: the sample app of DESIGN.md walked end to end from the definitions in flows/.

import JSON
import Testing

import FlowEngine

struct SampleAppTests {
    /// The full walk: onboarding, an interactive return cancelled then finished, completion to
    /// home, a tab switch, a modal with content, its dismissal, and `back` with nothing to pop.
    @Test func fullWalk() throws {
        var session = try Session()
        #expect(session.screenFeatures == ["onboarding.first"])
        #expect(session.tree.root.flow == "app")
        #expect(session.top == ScreenRef(id: 3, feature: "onboarding.first", flow: "onboarding", flowId: 2))

        var outcome = try session.send("onboarding.showSecond", from: "e3")
        #expect(outcome.handledBy == "onboarding")
        #expect(outcome.transition?.type == .push)
        #expect(session.screenFeatures == ["onboarding.first", "onboarding.second"])
        #expect(session.topId == "e4")

        // Interactive return, cancelled: the stack is as it was.
        let beforeSwipe = session.tree
        outcome = try session.send("onboarding.returnToFirst", from: "e4", interactive: true)
        #expect(outcome.interactionEvent == .started)
        #expect(outcome.transition == nil)
        #expect(session.screenFeatures == ["onboarding.first", "onboarding.second"])
        let pending = try #require(session.tree.interaction)
        #expect(pending.handledBy == "onboarding")
        #expect(pending.preview?.type == .popTo)
        #expect(pending.preview?.to?.feature == "onboarding.first")
        #expect(pending.preview?.interactive == true)
        outcome = try session.send("interaction.update", params: ["progress": 0.3])
        #expect(outcome.interactionEvent == .updated)
        #expect(session.tree.interaction?.progress == 0.3)
        outcome = try session.send("interaction.end", params: ["progress": 0.4, "velocity": 100])
        #expect(outcome.interactionEvent == .cancelled)
        #expect(session.tree == beforeSwipe)

        // Interactive return, finished: back at the first screen.
        try session.send("onboarding.returnToFirst", from: "e4", interactive: true)
        try session.send("interaction.update", params: ["progress": 0.7])
        outcome = try session.send("interaction.end", params: ["progress": 0.7, "velocity": 0])
        #expect(outcome.interactionEvent == .finished)
        #expect(outcome.transition?.type == .popTo)
        #expect(outcome.transition?.interactive == true)
        #expect(outcome.handledBy == "onboarding")
        #expect(session.screenFeatures == ["onboarding.first"])
        #expect(session.tree.interaction == nil)

        // Completion: onboarding passes it to app, which replaces its root with home.
        try session.send("onboarding.showSecond", from: "e3")
        #expect(session.topId == "e5")
        outcome = try session.send("onboarding.completed", from: "e5")
        #expect(outcome.handledBy == "app")
        #expect(outcome.userChanges == [UserChange(key: "onboarded", value: true)])
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.transition?.style == "crossFade")
        #expect(outcome.transition?.from?.feature == "onboarding.second")
        #expect(outcome.transition?.to?.feature == "home.first")
        #expect(session.screenFeatures == ["home.first"])
        #expect(session.tree.root.entries.count == 1)
        #expect(session.top?.flow == "home")

        outcome = try session.send("home.selectTab", params: ["index": 1])
        #expect(outcome.handledBy == "home")
        #expect(outcome.transition?.type == .selectTab)
        #expect(session.screenFeatures == ["home.second"])

        outcome = try session.send("home.presentModal", from: session.topId, params: ["content": "Hello"])
        #expect(outcome.handledBy == "app")
        #expect(outcome.transition?.type == .present)
        #expect(outcome.transition?.style == "fullScreen")
        #expect(session.screenFeatures == ["home.second", "modal"])
        #expect(session.top?.params == ["content": "Hello"])
        #expect(session.top?.flow == "modal")

        outcome = try session.send("modal.dismiss", from: session.topId)
        #expect(outcome.handledBy == "modal")
        #expect(outcome.transition?.type == .dismiss)
        #expect(session.screenFeatures == ["home.second"])

        #expect(session.failure("back")?.code == "refused")
        #expect(session.tree.structuralProblems().isEmpty)
    }

    /// With the `eu-face-scan` flag on, completion first pushes the face scan, and its
    /// verification completes onboarding through app.
    @Test func faceScanBranch() throws {
        var session = try Session(context: FlowContext(userId: "u-eu", attributes: ["country": "FR"], flags: ["eu-face-scan": true]))
        try session.send("onboarding.showSecond")
        var outcome = try session.send("onboarding.completed")
        #expect(outcome.handledBy == "onboarding")
        #expect(outcome.transition?.type == .push)
        #expect(session.screenFeatures == ["onboarding.first", "onboarding.second", "onboarding.faceScan"])
        #expect(outcome.userChanges.isEmpty)

        #expect(session.failure("onboarding.completed")?.code == "refused")

        outcome = try session.send("onboarding.faceScanVerified", from: session.topId)
        #expect(outcome.handledBy == "app")
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.userChanges == [UserChange(key: "onboarded", value: true)])
        #expect(session.screenFeatures == ["home.first"])
    }

    /// A user who completed onboarding starts every later session at home.
    @Test func onboardedUserStartsAtHome() throws {
        var first = try Session()
        try first.send("onboarding.showSecond")
        try first.send("onboarding.completed")
        let later = try Session(context: first.context)
        #expect(later.screenFeatures == ["home.first"])
        #expect(later.tree.root.entries.count == 1)
        #expect(later.top?.flow == "home")
    }

    /// `back` pops the topmost stack, dismisses a modal, and is refused with nothing left.
    @Test func backPopsThenDismisses() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        var outcome = try session.send("back")
        #expect(outcome.transition?.type == .pop)
        #expect(outcome.handledBy == "onboarding")
        #expect(session.screenFeatures == ["onboarding.first"])
        #expect(session.failure("back") != nil)

        var home = try Session(context: FlowContext(userId: "u-2", user: ["onboarded": true]))
        try home.send("home.presentModal", params: ["content": ["title": "Hi"]])
        outcome = try home.send("back")
        #expect(outcome.transition?.type == .dismiss)
        #expect(outcome.transition?.style == "fullScreen")
        #expect(outcome.handledBy == "modal")
        #expect(home.screenFeatures == ["home.first"])
    }

    /// An edge-swipe `back` is interactive too: started, then finished by a fast flick.
    @Test func interactiveBack() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        var outcome = try session.send("back", interactive: true)
        #expect(outcome.interactionEvent == .started)
        #expect(session.tree.interaction?.preview?.type == .pop)
        outcome = try session.send("interaction.end", params: ["progress": 0.1, "velocity": 800])
        #expect(outcome.interactionEvent == .finished)
        #expect(outcome.transition?.interactive == true)
        #expect(session.screenFeatures == ["onboarding.first"])
    }

    /// `onboarding.showSecond` only from the first screen: a client cannot skip a step.
    @Test func ownedActionFromWrongScreenIsRefused() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        #expect(session.failure("onboarding.showSecond")?.code == "refused")
        #expect(session.failure("onboarding.faceScanVerified")?.code == "refused")
    }

    /// `app` trusts its children: a one-screen onboarding that bubbles `onboarding.completed`
    /// from its only screen goes home with the shipped `app`, no second flow changed.
    @Test func shorterOnboardingNeedsNoNewApp() throws {
        var catalog = Fixtures.sampleCatalog
        catalog.insert(try FlowDefinition.parse(Array("""
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}}
            """.utf8)))
        #expect(catalog.validate().isEmpty)
        var session = try Session(catalog: catalog)
        let outcome = try session.send("onboarding.completed", from: session.topId)
        #expect(outcome.handledBy == "app")
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.userChanges == [UserChange(key: "onboarded", value: true)])
        #expect(session.screenFeatures == ["home.first"])
    }

    /// The delegate chain asks the catalog as it is now, not as it was built: a flow replaced
    /// by one without an action no longer answers it, and answers again once put back; a flow
    /// removed answers nothing; of two handlers for one action type (a definition built in
    /// code may have them) the first answers, as `FlowDefinition.rules(for:)` says.
    @Test func chainAsksTheCatalogAsItIsNow() throws {
        var catalog = Fixtures.sampleCatalog
        let shipped = try #require(catalog["onboarding"])
        var trimmed = shipped
        trimmed.handlers.removeAll { $0.action == "onboarding.showSecond" }
        catalog.insert(trimmed)
        var session = try Session(catalog: catalog)
        #expect(session.failure("onboarding.showSecond", from: "e3")?.code == "unhandled")
        catalog.insert(shipped)
        session = try Session(catalog: catalog)
        #expect(try session.send("onboarding.showSecond", from: "e3").handledBy == "onboarding")

        let bubbling = FlowDefinition.ActionHandler(action: "onboarding.showSecond", rules: [FlowRule(effects: [.bubble])])
        var bubblingFirst = shipped
        bubblingFirst.handlers.insert(bubbling, at: 0)
        catalog.insert(bubblingFirst)
        session = try Session(catalog: catalog)
        #expect(session.failure("onboarding.showSecond", from: "e3")?.code == "unhandled")
        var bubblingLast = shipped
        bubblingLast.handlers.append(bubbling)
        catalog.insert(bubblingLast)
        session = try Session(catalog: catalog)
        #expect(try session.send("onboarding.showSecond", from: "e3").handledBy == "onboarding")

        // Removed while its first screen is on top, where its old rules would handle the action.
        let tree = try Session(catalog: catalog).tree
        catalog.removeDefinition(named: "onboarding")
        let action = FlowAction(type: "onboarding.showSecond", from: "e3")
        guard case .failure(let error) = FlowEngine.applyResult(action, to: tree, catalog: catalog, context: FlowContext(userId: "u-1")) else {
            Issue.record("an action of a removed flow was applied")
            return
        }
        #expect(error.code == "unhandled")
    }

    /// What the child flows guarded, `app` still refuses (its rules take these actions only
    /// `via` the child that owns them): completing onboarding from home, a modal over
    /// onboarding, a second modal over the first.
    @Test func appKeepsItsGuarantees() throws {
        var home = try Session(context: FlowContext(userId: "u-home", user: ["onboarded": true]))
        let again = home.failure("onboarding.completed")
        #expect(again?.code == "refused")
        #expect(again?.message == "app refused onboarding.completed: it is accepted only through onboarding, but it came up through home")
        #expect(home.failure("onboarding.faceScanVerified")?.code == "refused")
        try home.send("home.presentModal", params: ["content": "x"])
        #expect(home.failure("home.presentModal", params: ["content": "y"])?.code == "refused")
        var newcomer = try Session()
        #expect(newcomer.failure("home.presentModal", params: ["content": "x"])?.code == "refused")
        try newcomer.send("onboarding.showSecond")
        #expect(newcomer.failure("home.presentModal", params: ["content": "x"])?.code == "refused")
        #expect(newcomer.failure("onboarding.faceScanVerified")?.code == "refused")
    }

    /// Interaction actions: cancel, finish by progress, and the threshold itself cancels.
    @Test(arguments: [
        (["progress": 0.5, "velocity": 300] as JSONObject, ActionOutcome.InteractionEvent.cancelled),
        (["progress": 0.51], .finished),
        (["velocity": 301], .finished),
        ([:], .cancelled),
    ] as [(JSONObject, ActionOutcome.InteractionEvent)])
    func interactionEndThresholds(params: JSONObject, expected: ActionOutcome.InteractionEvent) throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        try session.send("onboarding.returnToFirst", interactive: true)
        let outcome = try session.send("interaction.end", params: params)
        #expect(outcome.interactionEvent == expected)
        #expect(session.tree.interaction == nil)
        #expect(session.screenFeatures.count == (expected == .finished ? 1 : 2))
    }

    /// `interaction.cancel` restores the tree exactly.
    @Test func interactionCancel() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        let before = session.tree
        try session.send("onboarding.returnToFirst", interactive: true)
        try session.send("interaction.update", params: ["progress": 0.9])
        let outcome = try session.send("interaction.cancel")
        #expect(outcome.interactionEvent == .cancelled)
        #expect(session.tree == before)
    }
}

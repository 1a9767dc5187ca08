// GestureIntentTests: the action each gesture posts, checked against the engine, and what the renderers show meanwhile.
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import Testing

struct GestureIntentTests {
    /// A session state and the navigation state it reads as, one action after another.
    struct Walk {
        var session: SessionState
        var state: NavigationState

        init(_ session: SessionState) throws {
            self.session = session
            state = try NavigationState(session)
        }

        func then(_ type: String, _ params: JSONObject = [:], interactive: Bool = false) throws -> Walk {
            try Walk(session.applying(FlowAction(type: type, from: state.top?.id, params: params, interactive: interactive)).next)
        }
    }

    /// Why the generic `back` in `reached` is not what ``NavigationState/backIntent`` says: the
    /// engine refuses it exactly when there is no intent, and otherwise gives the rendering of
    /// the intent applied as a plan step.
    static func backProblem(_ reached: SampleSpace.Reached) -> String? {
        let state = reached.state
        let back = FlowAction(type: FlowAction.back, from: state.top?.id)
        let after = try? reached.session.applying(back).next
        guard let intent = state.backIntent else {
            return after == nil ? nil : "no back intent, but the engine applies back"
        }
        guard let after, let next = try? NavigationState(after) else { return "intent \(intent), but the engine refuses back" }
        guard state.gestureAction(for: intent) == back else { return "intent \(intent) does not map to back" }
        let step: NavigationPlan.Step
        switch intent {
        case .back(let stack, _, _): step = .init(container: .stack(stack), operation: .pop)
        case .dismiss(let presenter): step = .init(container: .presentation(over: presenter), operation: .dismiss)
        case .selectTab: return "back gave \(intent)"
        }
        var rendered = RenderedTree(state)
        do throws(RenderError) {
            try rendered.apply(step)
        } catch {
            return "intent \(intent) cannot be drawn: \(error)"
        }
        guard rendered.root == RenderedTree(next).root else {
            return "intent \(intent) draws \(rendered.root.map(PlanChecker.outline) ?? "nothing"), back gives \(PlanChecker.outline(next.shownRoot))"
        }
        return nil
    }

    /// In every state of the sample app (5 actions deep) and of the lab flows (child flows in
    /// stacks, modals over modals, tabs that present; 4 deep), `backIntent` says exactly what
    /// the engine's generic `back` does, or that it refuses it.
    @Test func backIntentIsWhatTheEngineDoes() throws {
        let sample = try SampleSpace.explore(from: try SampleSpace.starts(), depth: 5).states
        let lab = try SampleSpace.explore(from: try LabSpace.starts(), depth: 4, limit: 1500) { session in
            SampleSpace.actions(in: session, links: []) { available in
                available.type == "t.selectTabParam" ? [["i": 0], ["i": 2]] : [[:]]
            }
        }.states
        var failures: [String] = []
        var intents: Set<String> = []
        for reached in sample + lab {
            if let problem = Self.backProblem(reached) {
                failures.append("\(reached.path.joined(separator: " → ")): \(problem)")
            }
            switch reached.state.backIntent {
            case .back?: intents.insert("back")
            case .dismiss?: intents.insert("dismiss")
            case .selectTab?: intents.insert("selectTab")
            case nil: intents.insert("none")
            }
        }
        print("GestureIntent: generic back checked in \(sample.count) sample and \(lab.count) lab states")
        #expect(sample.count > 100 && lab.count > 500)
        #expect(intents == ["back", "dismiss", "none"])
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3).joined(separator: "\n\n"))")
    }

    /// A child flow pushed above a stack's first entry is drawn in the same NavigationStack;
    /// shortening the path pops the child flow's own stack, or the child flow itself once it
    /// shows one entry, and both are the generic `back`.
    @Test func aStackedChildFlowIsDrawnInItsParentsStack() throws {
        let start = try Walk(try LabSpace.starts()[0])
        let inner = try start.then("t.pushFlow").then("t.innerPush")
        let app = inner.state.shownRoot
        #expect(app.stackEntries.compactMap(Self.feature) == ["a.root", "inner.first", "inner.next"])
        guard case .flow(let innerNode) = app.entries.last else {
            Issue.record("no inner flow on top of app")
            return
        }
        #expect(app.stackNodes.map(\.id) == [app.id, innerNode.id])
        let ids = app.stackEntries.map(\.id)

        // Back from inner.next: the inner flow pops, which is what back does.
        let popInner = app.intent(forStackPath: [ids[1]])
        #expect(popInner == .back(stack: innerNode.id, to: ids[1], count: 1))
        #expect(popInner == inner.state.backIntent)
        #expect(popInner.flatMap(inner.state.gestureAction(for:)) == FlowAction(type: FlowAction.back, from: ids[2]))

        // Back to a.root at once takes the inner flow off app: not what one back does.
        let popFlow = app.intent(forStackPath: [])
        #expect(popFlow == .back(stack: app.id, to: ids[0], count: 1))
        #expect(popFlow.flatMap(inner.state.gestureAction(for:)) == nil)

        // With inner.first alone, back takes the inner flow off app.
        let single = try inner.then(FlowAction.back)
        #expect(single.state.shownRoot.stackEntries.compactMap(Self.feature) == ["a.root", "inner.first"])
        let popSingle = single.state.shownRoot.intent(forStackPath: [])
        #expect(popSingle == .back(stack: app.id, to: ids[0], count: 1))
        #expect(popSingle == single.state.backIntent)
        #expect(popSingle.flatMap(single.state.gestureAction(for:)) != nil)

        // Not a shorter prefix: no intent.
        #expect(app.intent(forStackPath: [ids[1], ids[2]]) == nil)
        #expect(app.intent(forStackPath: [ids[2]]) == nil)
    }

    /// Onboarding inside app is one NavigationStack whose root is onboarding's first screen.
    @Test func theSampleOnboardingIsOneStack() throws {
        let second = try Walk(try ClientMachineTests.start()).then("onboarding.showSecond")
        let app = second.state.shownRoot
        #expect(app.stackEntries.compactMap(Self.feature) == ["onboarding.first", "onboarding.second"])
        #expect(app.stackNodes.map(\.flow) == ["app", "onboarding"])
        let intent = app.intent(forStackPath: [])
        #expect(intent != nil && intent == second.state.backIntent)
        // A tabbed node draws no stack of its own.
        let home = try Walk(try ClientMachineTests.start(user: ["onboarded": true]))
        #expect(home.state.shownRoot.stackEntries.count == 1)
        guard case .flow(let tabs)? = home.state.shownRoot.stackEntries.first else {
            Issue.record("home is not a flow entry")
            return
        }
        #expect(tabs.stackEntries.isEmpty && tabs.stackNodes.isEmpty)
    }

    /// A tab tapped posts `<flow>.selectTab {index}` and the engine selects it; the selected
    /// tab or one that does not exist posts nothing.
    @Test func aTabTappedPostsSelectTab() throws {
        let home = try Walk(try ClientMachineTests.start(user: ["onboarded": true]))
        guard case .flow(let tabs)? = home.state.shownRoot.entries.first else {
            Issue.record("no home flow")
            return
        }
        let action = home.state.gestureAction(for: .selectTab(tabs: tabs.id, index: 1))
        #expect(action == FlowAction(type: "home.selectTab", from: home.state.top?.id, params: ["index": 1]))
        if let action {
            let next = try NavigationState(try home.session.applying(action).next)
            #expect(next.top?.feature == "home.second")
        }
        #expect(home.state.gestureAction(for: .selectTab(tabs: tabs.id, index: 0)) == nil)
        #expect(home.state.gestureAction(for: .selectTab(tabs: tabs.id, index: 2)) == nil)
        #expect(home.state.gestureAction(for: .selectTab(tabs: home.state.root.id, index: 1)) == nil)
    }

    /// Pulling down the sample's modal posts `back`, which dismisses it; pulling down a lab
    /// sheet whose own stack has two screens posts nothing (back would pop the sheet's stack),
    /// so the renderer puts the sheet back.
    @Test func aSheetPulledDownPostsBackOnlyWhenBackDismissesIt() throws {
        let modal = try Walk(try ClientMachineTests.start(user: ["onboarded": true])).then("home.presentModal", ["content": "Hi"])
        let app = modal.state.shownRoot
        #expect(app.presented?.node.flow == "modal")
        #expect(modal.state.backIntent == .dismiss(presenter: app.id))
        #expect(modal.state.gestureAction(for: .dismiss(presenter: app.id)) == FlowAction(type: FlowAction.back, from: modal.state.top?.id))

        let sheet = try Walk(try LabSpace.starts()[1]).then("t.present")
        let labApp = sheet.state.shownRoot
        #expect(labApp.presented?.node.style == "formSheet")
        #expect(sheet.state.gestureAction(for: .dismiss(presenter: labApp.id)) != nil)
        let pushed = try sheet.then("t.sheetPush")
        #expect(pushed.state.gestureAction(for: .dismiss(presenter: labApp.id)) == nil)
        #expect(pushed.state.backIntent == pushed.state.shownRoot.presented.map { NavigationIntent.back(stack: $0.node.id, to: $0.node.entries[0].id, count: 1) })
    }

    /// While an interactive transition is pending the engine refuses other actions: gestures
    /// post nothing.
    @Test func nothingIsPostedWhileAnInteractionIsPending() throws {
        let swiping = try Walk(try ClientMachineTests.start()).then("onboarding.showSecond").then("onboarding.returnToFirst", interactive: true)
        #expect(swiping.state.interaction != nil)
        #expect(swiping.state.backIntent == nil)
        let app = swiping.state.shownRoot
        guard let intent = app.intent(forStackPath: []) else {
            Issue.record("no intent for the path")
            return
        }
        #expect(swiping.state.gestureAction(for: intent) == nil)
    }

    /// A state returned for a gesture's action replaces the one shown only when it is a later
    /// version of the same session.
    @Test func aReturnedStateSupersedesOnlyALaterVersion() throws {
        let first = try Walk(try ClientMachineTests.start())
        let second = try first.then("onboarding.showSecond")
        #expect(second.state.supersedes(first.state))
        #expect(second.state.supersedes(nil))
        #expect(!first.state.supersedes(second.state))
        #expect(!second.state.supersedes(second.state))
        var other = second.state
        other.sessionId = "s_other"
        #expect(!other.supersedes(first.state))
    }

    /// Changes waiting for an answer are read over the state shown, the latest first; a
    /// resolved one is forgotten, and the others stay.
    @Test func pendingGesturesOverlayTheStateUntilAnswered() {
        var pending = PendingGestures()
        #expect(pending.isEmpty)
        #expect(pending.path(of: "f2", shown: ["e4", "e5"]) == ["e4", "e5"])
        let pop = pending.record(.path(stack: "f2", ids: ["e4"]))
        let popAgain = pending.record(.path(stack: "f2", ids: []))
        let tab = pending.record(.selection(tabs: "f3", index: 1))
        let sheet = pending.record(.dismissed(presenter: "f1"))
        #expect(pending.path(of: "f2", shown: ["e4", "e5"]) == [])
        #expect(pending.path(of: "f9", shown: ["e7"]) == ["e7"])
        #expect(pending.selection(of: "f3", shown: 0) == 1)
        #expect(pending.selection(of: "f4", shown: 0) == 0)
        #expect(pending.isDismissed(presenter: "f1") && !pending.isDismissed(presenter: "f2"))
        pending.resolve(popAgain)
        #expect(pending.path(of: "f2", shown: ["e4", "e5"]) == ["e4"])
        pending.resolve(pop)
        pending.resolve(tab)
        pending.resolve(sheet)
        #expect(pending.isEmpty)
        #expect(pending.path(of: "f2", shown: ["e4", "e5"]) == ["e4", "e5"])
        #expect(pending.selection(of: "f3", shown: 0) == 0)
        #expect(!pending.isDismissed(presenter: "f1"))
    }

    static func feature(_ entry: NavigationState.Entry) -> String? {
        if case .screen(let screen) = entry { return screen.feature }
        return nil
    }
}

// NavigationPlanStepsTests: the exact steps of the sample app's main transitions, and trees the sample cannot make.
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import Testing

struct NavigationPlanStepsTests {
    /// Walks one session of the sample app and returns the plans between consecutive states.
    func walk(onboarded: Bool = false, faceScan: Bool = false, _ actions: [FlowAction]) throws -> [(NavigationState, NavigationPlan)] {
        let starts = try SampleSpace.starts()
        let start = try #require(starts.first { ($0.context.user["onboarded"] != nil) == onboarded && $0.context.flags["eu-face-scan"] == .bool(faceScan) })
        var session = start
        var shown = try NavigationState(session)
        var plans: [(NavigationState, NavigationPlan)] = []
        for action in actions {
            session = try session.applying(action).next
            let next = try NavigationState(session)
            let plan = NavigationPlan(from: shown, to: next)
            var rendered = RenderedTree(shown)
            try rendered.apply(plan)
            #expect(rendered == RenderedTree(next), "\(action.type)")
            plans.append((next, plan))
            shown = next
        }
        return plans
    }

    func descriptions(_ plan: NavigationPlan) -> [String] { plan.steps.map(\.description) }

    /// Onboarding: a push, a pop to the first screen, then the root replaced with home.
    @Test func onboardingSteps() throws {
        let plans = try walk([
            FlowAction(type: "onboarding.showSecond"), FlowAction(type: "onboarding.returnToFirst"),
            FlowAction(type: "onboarding.showSecond"), FlowAction(type: "onboarding.completed"),
        ])
        #expect(descriptions(plans[0].1) == ["push e4 on stack f2, animated"])
        #expect(descriptions(plans[1].1) == ["popTo e3 on stack f2, animated"])
        #expect(descriptions(plans[2].1) == ["push e5 on stack f2, animated"])
        #expect(descriptions(plans[3].1) == ["setStack [f6] on stack f1, animated, crossFade"])
        #expect(plans.allSatisfy { $0.1.followsTransition })
    }

    /// Home: tabs, a full-screen modal presented over the root and dismissed.
    @Test func homeSteps() throws {
        let plans = try walk(onboarded: true, [
            FlowAction(type: "home.selectTab", params: ["index": 1]), FlowAction(type: "home.presentModal", params: ["content": "Hi"]),
            FlowAction(type: "modal.dismiss"),
        ])
        #expect(descriptions(plans[0].1) == ["selectTab 1 on tabs f2"])
        #expect(descriptions(plans[1].1) == ["present f5 (modal) on presentation over f1, animated, fullScreen"])
        #expect(descriptions(plans[2].1) == ["dismiss on presentation over f1, animated, fullScreen"])
    }

    /// An edge swipe: started, moved, finished; another started and cancelled.
    @Test func interactiveSteps() throws {
        let plans = try walk([
            FlowAction(type: "onboarding.showSecond"), FlowAction(type: "onboarding.returnToFirst", interactive: true),
            FlowAction(type: FlowAction.interactionUpdate, params: ["progress": 0.6]),
            FlowAction(type: FlowAction.interactionEnd, params: ["progress": 0.7]),
            FlowAction(type: "onboarding.showSecond"), FlowAction(type: FlowAction.back, interactive: true),
            FlowAction(type: FlowAction.interactionCancel),
        ])
        #expect(descriptions(plans[1].1) == ["popTo e3 on stack f2, animated, interactive at 0.0"])
        #expect(descriptions(plans[2].1) == ["popTo e3 on stack f2, animated, interactive at 0.6"])
        #expect(descriptions(plans[3].1) == ["popTo e3 on stack f2, animated, finishing the interaction"])
        #expect(descriptions(plans[5].1) == ["pop on stack f2, animated, interactive at 0.0"])
        #expect(descriptions(plans[6].1) == ["pop on stack f2, animated, cancelling the interaction"])
    }

    /// A link that rebuilds the tree with new ids: when only its last step is new, what is
    /// shown is re-keyed and only that step moves; otherwise the root is replaced.
    @Test func linkSteps() throws {
        let plans = try walk(onboarded: true, [
            FlowAction(type: FlowAction.link, params: ["uri": "/modal/Hi"]),
            FlowAction(type: FlowAction.link, params: ["uri": "/home"]),
        ])
        #expect(plans[0].1.renamed == ["f1": "f5", "f2": "f6", "e3": "e7", "e4": "e8"])
        #expect(descriptions(plans[0].1) == ["present f9 (modal) on presentation over f5, animated, fullScreen"])
        #expect(plans[1].1.renamed.isEmpty)
        #expect(descriptions(plans[1].1) == ["replaceRoot f11 (app) on window, animated, crossFade"])
    }

    /// A correction: from a predicted state to a different server state, unstyled, the last
    /// step animated.
    @Test func correctionSteps() throws {
        let predicted = try walk(onboarded: true, [FlowAction(type: "home.presentModal", params: ["content": "Hi"])])[0].0
        let server = try walk(onboarded: true, [FlowAction(type: "home.selectTab", params: ["index": 1])])[0].0
        let plan = NavigationPlan(from: predicted, to: server)
        #expect(!plan.followsTransition)
        #expect(descriptions(plan) == ["dismiss on presentation over f1", "selectTab 1 on tabs f2, animated"])
    }

    /// Trees the sample cannot make: a modal presented from a tab leaves with its tab and comes
    /// back with it; nested modals are dismissed at the lowest level that goes.
    @Test func presenterOnATab() throws {
        func state(version: Int, selected: Int, presented: Bool, nested: Bool = false) throws -> NavigationState {
            let inner = nested ? #"{"id":"f9","flow":"sheet","kind":"stacked","style":"sheet","entries":[{"id":"e10","feature":"sheet","params":{}}],"presented":null}"# : "null"
            let modal = presented ? #"{"id":"f7","flow":"modal","kind":"stacked","style":"sheet","entries":[{"id":"e8","feature":"modal","params":{}}],"presented":\#(inner)}"# : "null"
            let text = #"""
            {"sessionId":"s","userId":"u","version":\#(version),
             "root":{"id":"f1","flow":"home","kind":"tabbed","selected":\#(selected),"entries":[
               {"id":"f2","flow":"feed","kind":"stacked","entries":[{"id":"e3","feature":"feed","params":{}}],"presented":\#(modal)},
               {"id":"f4","flow":"profile","kind":"stacked","entries":[{"id":"e5","feature":"profile","params":{}}],"presented":null}],
              "presented":null},
             "screens":[],"top":null,"transition":null,"interaction":null,"pendingLink":null,"handledBy":null,"flags":{},"experiments":{}}
            """#
            return try NavigationState(json: try JSONParser.parse(text))
        }
        let overFeed = try state(version: 1, selected: 0, presented: true)
        let onProfile = try state(version: 2, selected: 1, presented: true)
        let leave = NavigationPlan(from: overFeed, to: onProfile)
        #expect(descriptions(leave) == ["dismiss on presentation over f2", "selectTab 1 on tabs f1, animated"])
        let back = NavigationPlan(from: onProfile, to: try state(version: 3, selected: 0, presented: true))
        #expect(descriptions(back) == ["selectTab 0 on tabs f1", "present f7 (modal) on presentation over f2, animated"])
        let nested = try state(version: 4, selected: 0, presented: true, nested: true)
        let closeAll = NavigationPlan(from: nested, to: try state(version: 5, selected: 0, presented: false))
        #expect(descriptions(closeAll) == ["dismiss on presentation over f2, animated"])
        let first = NavigationPlan(from: nil, to: nested)
        #expect(descriptions(first) == ["replaceRoot f1 (home) on window", "present f7 (modal) on presentation over f2",
                                        "present f9 (sheet) on presentation over f7"])
        for (from, to) in [(overFeed, onProfile), (onProfile, nested), (nested, overFeed), (nested, onProfile)] {
            var rendered = RenderedTree(from)
            try rendered.apply(NavigationPlan(from: from, to: to))
            #expect(rendered == RenderedTree(to))
        }
        // A renderer that selects the tab without dismissing first is refused.
        var rendered = RenderedTree(overFeed)
        #expect(throws: RenderError.self) { try rendered.apply(NavigationPlan.Step(container: .tabs("f1"), operation: .selectTab(1))) }
    }

    /// What a declarative renderer reads (paths, selections) and what a gesture on it asks for,
    /// as actions the sample app accepts.
    @Test func intentsFromGestures() throws {
        let second = try walk([FlowAction(type: "onboarding.showSecond")])[0].0
        guard case .flow(let onboarding) = second.shownRoot.entries.first else { Issue.record("no onboarding flow"); return }
        #expect(onboarding.path.map(\.id) == ["e4"])
        #expect(onboarding.intent(forPath: ["e4"]) == nil)
        let back = try #require(onboarding.intent(forPath: []))
        #expect(back == .back(stack: "f2", to: "e3", count: 1))
        #expect(back.action(in: second) == FlowAction(type: "back", from: "e4"))

        let home = try walk(onboarded: true, [FlowAction(type: "home.selectTab", params: ["index": 0])])[0].0
        guard case .flow(let tabs) = home.shownRoot.entries.first else { Issue.record("no home flow"); return }
        #expect(tabs.intent(forSelection: 0) == nil)
        let select = try #require(tabs.intent(forSelection: 1))
        let action = try #require(select.action(in: home))
        #expect(action.type == "home.selectTab" && action.params["index"] == 1)
    }
}

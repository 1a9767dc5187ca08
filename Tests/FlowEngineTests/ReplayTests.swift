// ReplayTests: recorded walks of the sample app replayed on changed onboarding versions.

import JSON
import Testing

import FlowEngine

struct ReplayTests {
    /// Records a walk on the sample app: each action with the tree it left.
    static func record(_ actions: [(type: String, params: JSONObject, interactive: Bool)],
                       context: FlowContext = FlowContext(userId: "u-1")) throws -> RecordedSession {
        var session = try Session(context: context)
        let start = session.tree
        var steps: [RecordedStep] = []
        for action in actions {
            let from = action.type.hasPrefix("interaction.") ? nil : session.topId
            try session.send(action.type, from: from, params: action.params, interactive: action.interactive)
            steps.append(RecordedStep(action: FlowAction(type: action.type, from: from, params: action.params,
                                                         interactive: action.interactive), tree: session.tree))
        }
        return RecordedSession(start: start, context: context, steps: steps)
    }

    static func step(_ type: String, _ params: JSONObject = [:], interactive: Bool = false) -> (type: String, params: JSONObject, interactive: Bool) {
        (type, params, interactive)
    }

    /// The whole onboarding, home, a tab and the modal.
    static let walk = [
        step("onboarding.showSecond"), step("onboarding.returnToFirst", interactive: true),
        step("interaction.end", ["progress": 0.9, "velocity": 500]), step("onboarding.showSecond"),
        step("onboarding.completed"), step("home.selectTab", ["index": 1]), step("home.presentModal", ["content": "Hi"]),
    ]

    /// The sample app with `onboarding` replaced by `document`.
    static func sample(onboarding document: String) throws -> FlowCatalog {
        var catalog = Fixtures.sampleCatalog
        catalog.insert(try FlowDefinition.parse(Array(document.utf8)))
        return catalog
    }

    /// A session replayed on the versions it ran is the same, and the user's `setUser` on the
    /// way (onboarding completed) reaches the conditions of later steps.
    @Test func ownVersionsReplayTheSame() throws {
        let run = try Self.record(Self.walk)
        let result = SessionReplay.replay(run, on: Fixtures.sampleCatalog)
        #expect(result.outcome == .same)
        #expect(result.firstShown == ["onboarding": 0, "home": 5, "modal": 7])
    }

    /// A version whose first screen is the second diverges at step 0, at `onboarding.first`.
    @Test func skippedScreenDivergesWhereItWas() throws {
        let draft = try Self.sample(onboarding: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.second"],
             "on": {"onboarding.completed": [{"from": "onboarding.second", "do": [{"bubble": {}}]}]}}
            """)
        let result = SessionReplay.replay(try Self.record(Self.walk), on: draft)
        #expect(result.outcome == .diverged(step: 0, recorded: ReplayScreen(feature: "onboarding.first", flow: "onboarding"),
                                            replayed: ReplayScreen(feature: "onboarding.second", flow: "onboarding")))
    }

    /// A push of another screen diverges at the action's step, with both tops.
    @Test func otherScreenDivergesAtItsStep() throws {
        let draft = try Self.sample(onboarding: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"push": "onboarding.intro"}]}],
                    "onboarding.completed": [{"from": "onboarding.intro", "do": [{"bubble": {}}]}]}}
            """)
        let result = SessionReplay.replay(try Self.record(Self.walk), on: draft)
        #expect(result.outcome == .diverged(step: 1, recorded: ReplayScreen(feature: "onboarding.second", flow: "onboarding"),
                                            replayed: ReplayScreen(feature: "onboarding.intro", flow: "onboarding")))
        #expect(result.stoppedAt == 1)
    }

    /// A version that refuses an action the user took reports the screen, the action and the code.
    @Test func refusedActionIsNamed() throws {
        let draft = try Self.sample(onboarding: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"push": "onboarding.second"}]}],
                    "onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}}
            """)
        let run = try Self.record([Self.step("onboarding.showSecond"), Self.step("onboarding.completed")])
        let result = SessionReplay.replay(run, on: draft)
        #expect(result.outcome == .refused(step: 2, screen: ReplayScreen(feature: "onboarding.second", flow: "onboarding"),
                                           action: "onboarding.completed", code: "refused"))
    }

    /// A screen that accepts nothing (onboarding owns its actions but not from there, `app`
    /// takes none through it, no `back`) where the user went on is a dead end;
    /// the same divergence at the recording's last step is only a divergence.
    @Test func screenWithNoWayOnIsADeadEnd() throws {
        let draft = try Self.sample(onboarding: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"setRoot": "onboarding.stuck"}]}],
                    "onboarding.completed": [{"from": "onboarding.second", "do": [{"bubble": {}}]}],
                    "onboarding.faceScanVerified": [{"from": "onboarding.faceScan", "do": [{"bubble": {}}]}]}}
            """)
        let stuck = ReplayScreen(feature: "onboarding.stuck", flow: "onboarding")
        let second = ReplayScreen(feature: "onboarding.second", flow: "onboarding")
        let wentOn = SessionReplay.replay(try Self.record(Self.walk), on: draft)
        #expect(wentOn.outcome == .deadEnd(step: 1, recorded: second, screen: stuck))
        let stopped = SessionReplay.replay(try Self.record([Self.step("onboarding.showSecond")]), on: draft)
        #expect(stopped.outcome == .diverged(step: 1, recorded: second, replayed: stuck))
    }

    /// `from` is sent as the replayed top: the recorded id is not looked up in the new tree.
    @Test func sourceFollowsTheReplayedTop() throws {
        var run = try Self.record(Self.walk)
        for index in run.steps.indices where run.steps[index].action.from != nil { run.steps[index].action.from = "e999" }
        #expect(SessionReplay.replay(run, on: Fixtures.sampleCatalog).outcome == .same)
    }

    /// Per flow: a session counts where its replay stopped, `same` in the flows it went through
    /// before, `notReached` in those it would have reached only later.
    @Test func reportCountsPerFlow() throws {
        let draft = try Self.sample(onboarding: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"push": "onboarding.second"}]}],
                    "onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}}
            """)
        var report = ReplayReport()
        let walk = [Self.step("onboarding.showSecond"), Self.step("onboarding.completed"),
                    Self.step("home.presentModal", ["content": "Hi"])]
        report.add(SessionReplay.replay(try Self.record(walk), on: draft))        // refused in onboarding
        report.add(SessionReplay.replay(try Self.record([Self.step("onboarding.showSecond")]), on: draft))  // same
        let onboarded = FlowContext(userId: "u-2", user: ["onboarded": true])
        report.add(SessionReplay.replay(try Self.record([Self.step("home.selectTab", ["index": 1])], context: onboarded), on: draft))
        #expect((report.sessions, report.same, report.refused, report.diverged, report.deadEnd) == (3, 2, 1, 0, 0))
        let onboarding = try #require(report.flows["onboarding"])
        #expect((onboarding.sessions, onboarding.same, onboarding.refused) == (2, 1, 1))
        let refusal = ReplayReport.Refusal(screen: ReplayScreen(feature: "onboarding.second", flow: "onboarding"),
                                           action: "onboarding.completed", code: "refused")
        #expect(onboarding.refusals == [refusal: 1])
        let home = try #require(report.flows["home"])
        #expect((home.sessions, home.same, home.notReached) == (2, 1, 1))
        #expect(report.flows["modal"]?.notReached == 1)

        var merged = ReplayReport()
        merged.merge(report)
        merged.merge(report)
        #expect(merged.flows["onboarding"]?.refusals == [refusal: 2])
        #expect(merged.sessions == 6)
    }
}

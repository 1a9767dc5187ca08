// EffectTests: every effect applied through the engine — the resulting screens and the transition.

import JSON
import Testing

import FlowEngine

/// One effect case: actions to reach the starting point, the action under test, and what
/// should follow.
struct EffectCase: Sendable, CustomTestStringConvertible {
    var setup: [String]
    var action: String
    var params: JSONObject = [:]
    var transition: Transition.Kind?
    var style: String? = nil
    var animated = true
    var screens: [String]
    var handledBy = "app"

    var testDescription: String { action }
}

struct EffectTests {
    static let cases: [EffectCase] = [
        EffectCase(setup: [], action: "t.push", transition: .push, screens: ["a.root", "a.next"]),
        EffectCase(setup: [], action: "t.pushFlow", transition: .push, screens: ["a.root", "inner.first"]),
        EffectCase(setup: ["t.push"], action: "t.pop", transition: .pop, screens: ["a.root"]),
        EffectCase(setup: ["t.push", "t.push"], action: "t.popTo", transition: .popTo, screens: ["a.root"]),
        EffectCase(setup: ["t.push", "t.pushFlow"], action: "t.popToRoot", transition: .popTo, screens: ["a.root"]),
        EffectCase(setup: ["t.push"], action: "t.setRoot", transition: .setRoot, screens: ["a.fresh"]),
        EffectCase(setup: [], action: "t.present", transition: .present, style: "fullScreen",
                   screens: ["a.root", "sheet.first"]),
        EffectCase(setup: ["t.present"], action: "t.dismiss", transition: .dismiss, style: "fullScreen",
                   screens: ["a.root"], handledBy: "sheet"),
        EffectCase(setup: ["t.present"], action: "t.closeFromApp", transition: .dismiss, style: "fullScreen",
                   screens: ["a.root"]),
        EffectCase(setup: ["t.present", "t.sheetPresent"], action: "t.dismissAll", transition: .dismiss,
                   style: "fullScreen", screens: ["a.root"]),
        EffectCase(setup: ["t.present", "t.sheetPresent"], action: "t.dismiss", transition: .dismiss,
                   style: "pageSheet", screens: ["a.root", "sheet.first"], handledBy: "sheet"),
        EffectCase(setup: ["t.push", "t.present"], action: "t.replaceRoot", transition: .replaceRoot,
                   style: "crossFade", screens: ["tab.a"]),
        EffectCase(setup: ["t.replaceRoot"], action: "t.selectTab", transition: .selectTab, animated: false,
                   screens: ["tab.b"], handledBy: "tabs"),
        EffectCase(setup: ["t.replaceRoot"], action: "t.selectTabParam", params: ["i": 2], transition: .selectTab,
                   animated: false, screens: ["inner.first"], handledBy: "tabs"),
        EffectCase(setup: ["t.replaceRoot"], action: "t.selectTabParam", params: ["i": 0], transition: .selectTab,
                   animated: false, screens: ["tab.a"], handledBy: "tabs"),
        EffectCase(setup: [], action: "t.setUser", params: ["level": 3], transition: nil, screens: ["a.root"]),
        EffectCase(setup: [], action: "t.pushThenPresent", transition: .present, style: "automatic",
                   screens: ["a.root", "a.next", "sheet.first"]),
    ]

    /// Each effect produces the expected screens and transition.
    @Test(arguments: cases)
    func appliesEffect(_ effect: EffectCase) throws {
        var session = try LabFlows.session()
        for action in effect.setup { try session.send(action) }
        let before = session.top
        let outcome = try session.send(effect.action, params: effect.params)
        #expect(session.screenFeatures == effect.screens)
        #expect(outcome.handledBy == effect.handledBy)
        #expect(outcome.transition?.type == effect.transition)
        if let transition = outcome.transition {
            #expect(transition.style == effect.style)
            #expect(transition.animated == effect.animated)
            #expect(transition.interactive == false)
            #expect(transition.from == before)
            #expect(transition.to == session.top)
        }
        #expect(session.tree.structuralProblems().isEmpty)
    }

    /// Pushing a screen with params resolves `$param` references and keeps literal params.
    @Test func pushResolvesParamReferences() throws {
        var session = try LabFlows.session()
        try session.send("t.pushParams", params: ["v": "x", "ignored": true])
        #expect(session.top?.params == ["v": "x", "fixed": 1])
    }

    /// A pushed child flow hands its params to its initial screens.
    @Test func childFlowParamsReachInitialScreens() throws {
        var session = try LabFlows.session()
        try session.send("t.pushFlow")
        #expect(session.top?.params == ["origin": "push"])
        #expect(session.top?.flow == "inner")
    }

    /// `popTo {"id": $param}` pops to the named entry.
    @Test func popToEntryId() throws {
        var session = try LabFlows.session()
        try session.send("t.push")
        let target = try #require(session.topId)
        try session.send("t.push")
        try session.send("t.push")
        let outcome = try session.send("t.popToId", params: ["target": .string(target)])
        #expect(outcome.transition?.type == .popTo)
        #expect(session.topId == target)
        #expect(session.screenFeatures == ["a.root", "a.next"])
    }

    /// The presentation style adapts to the horizontal size class trait.
    @Test(arguments: [(nil, "fullScreen"), ("compact", "fullScreen"), ("regular", "formSheet")] as [(String?, String)])
    func adaptiveStyle(sizeClass: String?, expected: String) throws {
        var traits: [String: String] = [:]
        if let sizeClass { traits["horizontalSizeClass"] = sizeClass }
        var session = try LabFlows.session(context: FlowContext(userId: "lab", traits: traits))
        let outcome = try session.send("t.present")
        #expect(outcome.transition?.style == expected)
        #expect(session.tree.root.presented?.presentationStyle == expected)
        #expect(session.top?.params == ["note": "hi"])
    }

    /// `setUser` reports user changes in order with params resolved, and changes no screen.
    @Test func setUserReportsChanges() throws {
        var session = try LabFlows.session()
        let before = session.tree
        let outcome = try session.send("t.setUser", params: ["level": 3])
        #expect(outcome.userChanges == [UserChange(key: "level", value: 3), UserChange(key: "seen", value: true)])
        #expect(outcome.transition == nil)
        #expect(outcome.tree == before)
    }

    /// `bubble` passes the action to the parent, which handles it (here: nobody names it, so
    /// the chain is reported).
    @Test func bubblePassesToParent() throws {
        var session = try LabFlows.session()
        try session.send("t.pushFlow")
        #expect(session.failure("t.innerBubble") == .unhandled(action: "t.innerBubble", chain: ["inner", "app"]))
    }

    /// Ids are never reused: a popped screen's id does not come back.
    @Test func idsAreNeverReused() throws {
        var session = try LabFlows.session()
        try session.send("t.push")
        let first = try #require(session.top?.id)
        try session.send("t.pop")
        try session.send("t.push")
        #expect(try #require(session.top?.id) > first)
    }

    /// Pushing over a flow that presents dismisses its presentation (only visible flows present).
    @Test func coveringAPresenterDismissesItsPresentation() throws {
        var session = try LabFlows.session()
        try session.send("t.replaceRoot")
        try session.send("t.tabsPresent")
        #expect(session.screenFeatures == ["tab.a", "sheet.first"])
        // sheet does not name t.push, tabs neither: app pushes over the tabs flow.
        try session.send("t.push")
        #expect(session.screenFeatures == ["tab.a", "a.next"])
        #expect(session.tree.structuralProblems().isEmpty)
    }

    /// A stack cannot grow past the tree's entry limit.
    @Test func entryLimitRefusesGrowth() throws {
        let limits = FlowLimits(maxEntries: 5, maxDepth: 8)
        var tree = try FlowEngine.start(catalog: LabFlows.catalog, context: FlowContext(userId: "lab"), limits: limits)
        let context = FlowContext(userId: "lab")
        for _ in 0..<3 {
            tree = try FlowEngine.apply(FlowAction(type: "t.push"), to: tree, catalog: LabFlows.catalog, context: context, limits: limits).tree
        }
        #expect(throws: FlowError.self) {
            try FlowEngine.apply(FlowAction(type: "t.push"), to: tree, catalog: LabFlows.catalog, context: context, limits: limits)
        }
    }

    /// `dismiss` from a flow inside a presented flow dismisses the presented flow containing it.
    @Test func dismissFromEmbeddedChild() throws {
        var session = try LabFlows.session()
        try session.send("t.presentTabs")
        try session.send("t.selectTabParam", params: ["i": 2])
        #expect(session.top?.flow == "inner")
        let outcome = try session.send("t.innerDismiss")
        #expect(outcome.handledBy == "inner")
        #expect(outcome.transition?.type == .dismiss)
        #expect(outcome.transition?.style == "formSheet")
        #expect(session.screenFeatures == ["a.root"])
    }

    /// Effects after the handling flow dismissed itself have nothing to act on: refused.
    @Test func effectAfterSelfDismissalIsRefused() throws {
        var session = try LabFlows.session()
        try session.send("t.present")
        #expect(session.failure("t.dismissThenPush")?.code == "refused")
    }

    /// An action applies all its effects or none: a failing later effect leaves the tree as it was.
    @Test func effectsAreAllOrNothing() throws {
        var session = try LabFlows.session()
        let before = session.tree
        #expect(session.failure("t.pushPopPop")?.code == "refused")
        #expect(session.tree == before)
    }

    /// Selecting the tab already selected succeeds with a transition to the same screen.
    @Test func selectingCurrentTab() throws {
        var session = try LabFlows.session()
        try session.send("t.replaceRoot")
        let outcome = try session.send("t.selectTabParam", params: ["i": 0])
        #expect(outcome.transition?.from == outcome.transition?.to)
    }

    /// `dismissAll` with nothing presented is handled and changes nothing.
    @Test func dismissAllWithNothingPresented() throws {
        var session = try LabFlows.session()
        let before = session.tree
        let outcome = try session.send("t.dismissAll")
        #expect(outcome.transition == nil)
        #expect(session.tree == before)
    }
}

// SessionReplay: a recorded session's actions run again on another catalog, and what changed.

import JSON

/// A session as recorded: the tree it started with, the context its conditions read, and each
/// applied action with the tree it left.
///
/// ```swift
/// let run = RecordedSession(start: firstTree, context: context,
///                           steps: [RecordedStep(action: FlowAction(type: "onboarding.showSecond", from: "e3"),
///                                                tree: treeAfter)])
/// let result = SessionReplay.replay(run, on: draftCatalog)
/// result.outcome   // .same, or where it diverged / was refused / got stuck
/// ```
public struct RecordedSession: Sendable {
    /// The tree at version 0, as the session was created.
    public var start: FlowTree
    /// What conditions read: attributes, traits, flag values fixed at creation, and the user's
    /// state at creation (`user`), which the replay updates with the session's own `setUser`s.
    public var context: FlowContext
    /// The applied actions, oldest first, each with the tree it produced.
    public var steps: [RecordedStep]

    public init(start: FlowTree, context: FlowContext, steps: [RecordedStep]) {
        self.start = start
        self.context = context
        self.steps = steps
    }
}

/// One applied action of a recorded session and the tree after it.
public struct RecordedStep: Sendable {
    public var action: FlowAction
    public var tree: FlowTree

    public init(action: FlowAction, tree: FlowTree) {
        self.action = action
        self.tree = tree
    }
}

/// A screen as a replay reports it: its feature and the flow that owns it.
public struct ReplayScreen: Sendable, Hashable {
    public var feature: String
    public var flow: String

    public init(feature: String, flow: String) {
        self.feature = feature
        self.flow = flow
    }

    init(_ screen: ScreenRef) { self.init(feature: screen.feature, flow: screen.flow) }
}

/// How a recorded session fares on a candidate catalog.
public enum ReplayOutcome: Sendable, Equatable {
    /// Every step shows the same screens (features and params of the visible stack, bottom to top).
    case same
    /// Step `step` (0: the first screen, n: after the n-th action) shows other screens: the
    /// recorded top, and the replayed one (nil when the candidate cannot build a first tree).
    case diverged(step: Int, recorded: ReplayScreen, replayed: ReplayScreen?)
    /// The candidate refuses the action of step `step` that the user took on `screen`.
    case refused(step: Int, screen: ReplayScreen, action: String, code: String)
    /// The replay stopped (a divergence or a refusal) on `screen`, where the candidate offers no
    /// action at all (not even `back`), while the recorded session went on from `recorded`
    /// (its top at that step): the user would be stuck.
    case deadEnd(step: Int, recorded: ReplayScreen, screen: ReplayScreen)
}

/// The result of one replay: its outcome, and for each flow the first step whose recorded top
/// screen belongs to it (what the per-flow report counts the session in).
public struct SessionReplayResult: Sendable, Equatable {
    public var outcome: ReplayOutcome
    /// Flow name → the first recorded step showing one of its screens on top.
    public var firstShown: [String: Int]

    public init(outcome: ReplayOutcome, firstShown: [String: Int]) {
        self.outcome = outcome
        self.firstShown = firstShown
    }

    /// The step where the replay stopped, nil for `same`.
    public var stoppedAt: Int? {
        switch outcome {
        case .same: nil
        case .diverged(let step, _, _), .refused(let step, _, _, _), .deadEnd(let step, _, _): step
        }
    }
}

/// Replays recorded sessions on a candidate catalog (a draft, a release) with no I/O.
///
/// Decisions:
/// - "Same" compares each step's visible stack (`screens`: features and params, bottom to top),
///   not entry ids, transitions or a pending interaction's progress.
/// - The first tree is rebuilt from the candidate with the session's context: a candidate whose
///   `initial` differs diverges at step 0.
/// - An action's `from` named the screen on top when it was recorded; as every earlier step
///   showed the same screens, it is sent as the replayed top's id.
/// - A replay stops at the first divergence or refusal: later actions were taken on screens the
///   candidate would not have shown. Any engine error on a recorded action counts as a refusal
///   (its code says which: `refused`, `unhandled`, `no-interaction`, …).
/// - A dead end: where the replay stops (a divergence before the last recorded step, or a
///   refusal), the candidate's screen on top accepts no action at all, not even `back`.
public enum SessionReplay {
    public static func replay(_ run: RecordedSession, on catalog: FlowCatalog, limits: FlowLimits = .default) -> SessionReplayResult {
        var firstShown: [String: Int] = [:]
        if let top = run.start.top { firstShown[top.flow] = 0 }
        for (index, step) in run.steps.enumerated() {
            if let top = step.tree.top, firstShown[top.flow] == nil { firstShown[top.flow] = index + 1 }
        }
        return SessionReplayResult(outcome: outcome(of: run, on: catalog, limits: limits), firstShown: firstShown)
    }

    static func outcome(of run: RecordedSession, on catalog: FlowCatalog, limits: FlowLimits) -> ReplayOutcome {
        var context = run.context
        let recordedStart = run.start.top.map(ReplayScreen.init) ?? ReplayScreen(feature: "", flow: "")
        var tree: FlowTree
        do throws(FlowError) {
            tree = try FlowEngine.start(catalog: catalog, context: context, limits: limits)
        } catch {
            return .diverged(step: 0, recorded: recordedStart, replayed: nil)
        }
        if let difference = divergence(step: 0, recorded: run.start, replayed: tree, catalog: catalog, context: context,
                                       goesOn: !run.steps.isEmpty) {
            return difference
        }
        for (index, step) in run.steps.enumerated() {
            var action = step.action
            let before = tree.top
            if action.from != nil, let top = before { action.from = top.entryId }
            let outcome: ActionOutcome
            do throws(FlowError) {
                outcome = try FlowEngine.apply(action, to: tree, catalog: catalog, context: context, limits: limits)
            } catch {
                let screen = before.map(ReplayScreen.init) ?? recordedStart
                if FlowEngine.availableActions(in: tree, catalog: catalog, context: context).isEmpty {
                    return .deadEnd(step: index + 1, recorded: screen, screen: screen)
                }
                return .refused(step: index + 1, screen: screen, action: action.type, code: error.code)
            }
            tree = outcome.tree
            UserChange.apply(outcome.userChanges, to: &context.user)
            if let difference = divergence(step: index + 1, recorded: step.tree, replayed: tree, catalog: catalog,
                                           context: context, goesOn: index + 1 < run.steps.count) {
                return difference
            }
        }
        return .same
    }

    /// nil when both trees show the same screens; else the divergence, or a dead end when the
    /// replayed tree accepts nothing and the recording `goesOn`.
    static func divergence(step: Int, recorded: FlowTree, replayed: FlowTree, catalog: FlowCatalog,
                           context: FlowContext, goesOn: Bool) -> ReplayOutcome? {
        let shown = recorded.screens, replayedShown = replayed.screens
        let equal = shown.count == replayedShown.count
            && zip(shown, replayedShown).allSatisfy { $0.feature == $1.feature && $0.params == $1.params }
        if equal { return nil }
        let replayedTop = replayed.top.map(ReplayScreen.init)
        let recordedTop = recorded.top.map(ReplayScreen.init) ?? ReplayScreen(feature: "", flow: "")
        if goesOn, let replayedTop, FlowEngine.availableActions(in: replayed, catalog: catalog, context: context).isEmpty {
            return .deadEnd(step: step, recorded: recordedTop, screen: replayedTop)
        }
        return .diverged(step: step, recorded: recordedTop, replayed: replayedTop)
    }
}

// ReplayReport: replays of many sessions counted in total and per flow.

/// What replaying recorded sessions on a candidate catalog found, in total and per flow.
///
/// A session counts in a flow's line when its recording showed one of that flow's screens on
/// top. There its outcome is the replay's when the replay stopped on that flow's screen (the
/// recorded top at the step it stopped), `same` when every step the flow showed before the stop
/// matched, and `notReached` when the replay stopped elsewhere before the flow's first screen.
/// So per flow `sessions = same + diverged + refused + deadEnd + notReached`.
///
/// ```swift
/// var report = ReplayReport()
/// report.add(SessionReplay.replay(run, on: draft))
/// report.flows["onboarding"]?.diverged
/// ```
public struct ReplayReport: Sendable, Equatable {
    /// Counts of one flow's sessions.
    public struct FlowCounts: Sendable, Equatable {
        public var sessions = 0
        public var same = 0
        public var diverged = 0
        public var refused = 0
        public var deadEnd = 0
        public var notReached = 0
        /// (recorded top, replayed top) of each first divergence → sessions.
        public var firstDivergence: [Divergence: Int] = [:]
        /// (screen, action, error code) of each refusal → sessions.
        public var refusals: [Refusal: Int] = [:]
        /// The screen each stuck replay stopped on → sessions.
        public var deadEnds: [ReplayScreen: Int] = [:]

        public init() {}
    }

    public struct Divergence: Sendable, Hashable {
        public var screen: ReplayScreen
        public var replayedScreen: ReplayScreen?

        public init(screen: ReplayScreen, replayedScreen: ReplayScreen?) {
            self.screen = screen
            self.replayedScreen = replayedScreen
        }
    }

    public struct Refusal: Sendable, Hashable {
        public var screen: ReplayScreen
        public var action: String
        public var code: String

        public init(screen: ReplayScreen, action: String, code: String) {
            self.screen = screen
            self.action = action
            self.code = code
        }
    }

    public var sessions = 0
    public var same = 0
    public var diverged = 0
    public var refused = 0
    public var deadEnd = 0
    /// Sessions that could not be replayed (their first tree or a step's tree is not stored or
    /// not readable); counted in no other number.
    public var skipped = 0
    public var flows: [String: FlowCounts] = [:]

    public init() {}

    /// Counts one replayed session.
    public mutating func add(_ result: SessionReplayResult) {
        sessions += 1
        let stopFlow: String?
        switch result.outcome {
        case .same:
            same += 1
            stopFlow = nil
        case .diverged(_, let recorded, let replayed):
            diverged += 1
            stopFlow = recorded.flow
            flows[recorded.flow, default: FlowCounts()].firstDivergence[Divergence(screen: recorded, replayedScreen: replayed), default: 0] += 1
        case .refused(_, let screen, let action, let code):
            refused += 1
            stopFlow = screen.flow
            flows[screen.flow, default: FlowCounts()].refusals[Refusal(screen: screen, action: action, code: code), default: 0] += 1
        case .deadEnd(_, let recorded, let screen):
            deadEnd += 1
            stopFlow = recorded.flow
            flows[recorded.flow, default: FlowCounts()].deadEnds[screen, default: 0] += 1
        }
        let stop = result.stoppedAt
        for (flow, first) in result.firstShown {
            var counts = flows[flow, default: FlowCounts()]
            counts.sessions += 1
            if flow == stopFlow {
                switch result.outcome {
                case .same: counts.same += 1
                case .diverged: counts.diverged += 1
                case .refused: counts.refused += 1
                case .deadEnd: counts.deadEnd += 1
                }
            } else if let stop, first >= stop {
                // Step `stop` was not reached as recorded (a refused action), or shows another
                // flow's screen on top (a divergence): this flow's first screen came later.
                counts.notReached += 1
            } else {
                counts.same += 1
            }
            flows[flow] = counts
        }
    }

    /// Adds the counts of `other` (replays run in parallel parts).
    public mutating func merge(_ other: ReplayReport) {
        sessions += other.sessions
        same += other.same
        diverged += other.diverged
        refused += other.refused
        deadEnd += other.deadEnd
        skipped += other.skipped
        for (flow, theirs) in other.flows {
            var mine = flows[flow, default: FlowCounts()]
            mine.sessions += theirs.sessions
            mine.same += theirs.same
            mine.diverged += theirs.diverged
            mine.refused += theirs.refused
            mine.deadEnd += theirs.deadEnd
            mine.notReached += theirs.notReached
            mine.firstDivergence.merge(theirs.firstDivergence, uniquingKeysWith: +)
            mine.refusals.merge(theirs.refusals, uniquingKeysWith: +)
            mine.deadEnds.merge(theirs.deadEnds, uniquingKeysWith: +)
            flows[flow] = mine
        }
    }
}

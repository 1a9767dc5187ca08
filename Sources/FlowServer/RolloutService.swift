// Rollouts: a release live for a share of new sessions, its guardrails counted off the action
// path, and the monitor that raises it on schedule or rolls it back when a guardrail fails.
import ExperimentStats
import FeatureFlags
import FlowEngine
import FlowStore
import Foundation
import JSON
import Logging
import Synchronization

/// The rollouts of a node. The state lives in the store (`rollouts`, `rollout_sessions`), so
/// every node buckets new sessions the same and counts into the same rows; this object keeps
/// a copy of the one rollout in progress (at most one at a time) for session creation, and its
/// monitor reads the store again every `interval`.
///
/// **Bucketing**: a user is on the release when GrowthBook's hash v2 of seed `release-<id>` and
/// the user id is below `percentage / 100`: a user stays on one side for the rollout's life, and
/// raising the percentage only moves users from the old side to the new.
///
/// **Guardrails**, per session of the rollout (`GuardrailMarks`), written by a queue of their
/// own after the action is answered, never under a session's lock:
/// - *refused*: the engine refused a well-formed action from the session's screen
///   (`FlowError` `refused`, `unhandled`, `broken-definition`; a stale `from`, a pending
///   interaction or bad params are the client's, not the release's);
/// - *dead end*: after its creation or an applied action, the session's screen offers no action
///   at all (`FlowEngine.availableActions` is empty: not even `back`). Flows that end on
///   purpose end on a screen that still offers something (home, its tabs);
/// - *converted*: the metric, `onboarded` (the user completed onboarding in the session) or a
///   feature shown on top.
///
/// **Monitor**: every `interval` on every node, and at once after each `checkEvery` sessions
/// this node creates in a rollout. When a side has fewer than `minSessions` sessions nothing is
/// judged; then each guardrail is a `SequentialProportionTest` (gbstats' sequential testing),
/// and a release significantly worse on one rolls itself back. Every move is a compare-and-set
/// in the store, so of several nodes exactly one rolls back (or raises) and the others see it.
final class RolloutService: Sendable {
    let store: any RolloutStore
    let logger: Logger
    /// The rollout in progress as this node last read it, or nil.
    private let active = Mutex<ActiveRollout?>(nil)
    /// Fast check on the action path: whether any rollout is in progress (marks worth writing).
    private let watching = Atomic<Bool>(false)
    /// Guardrail writes and dead-end checks, one at a time, in the order they came.
    private let queue = DispatchQueue(label: "flowstack.guardrails")
    /// Sessions created in a rollout on this node since the last check.
    private let sinceCheck = Atomic<Int>(0)
    private let hooks = Mutex(Hooks())
    private let stop = DispatchSemaphore(value: 0)
    /// Checks after this many new sessions of a rollout on this node, besides the timer.
    let checkEvery: Int

    /// What the releases branch does for a rollout: activate the release fully (at 100 %), and
    /// roll it back with a reason and the audit detail.
    struct Hooks: Sendable {
        var activate: @Sendable (_ releaseId: Int) throws -> Void = { _ in }
        var rollBack: @Sendable (_ releaseId: Int, _ reason: String, _ detail: String) throws -> Void = { _, _, _ in }
    }

    struct ActiveRollout: Sendable, Equatable {
        var releaseId: Int
        var percentage: Int
        var flows: [String: Int]
        var plan: RolloutPlan
    }

    /// The side a new session was put on.
    struct Assignment: Sendable {
        var releaseId: Int
        var onRelease: Bool
        /// The release's versions, for the new side.
        var flows: [String: Int]
        var metric: String
        var arm: String { onRelease ? "new" : "old" }
    }

    init(store: any RolloutStore, logger: Logger, checkEvery: Int = 10) {
        self.store = store
        self.logger = logger
        self.checkEvery = checkEvery
        reload()
    }

    deinit { stop.signal() }

    func setHooks(_ change: (inout Hooks) -> Void) { hooks.withLock { change(&$0) } }

    /// The release rolling out, as this node last read it.
    var activeReleaseId: Int? { active.withLock { $0?.releaseId } }

    /// Starts the monitor on a thread of its own; it ends once this object is released.
    func start(interval: Duration = .seconds(1)) {
        let milliseconds = Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        let stop = self.stop
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-rollouts"
            while stop.wait(timeout: .now() + .milliseconds(milliseconds)) == .timedOut {
                guard let self else { return }
                check()
            }
        }
        thread.start()
    }

    // MARK: Session creation and actions

    /// The side of a new session of `userId`, or nil when no rollout is in progress.
    func assign(userId: String) -> Assignment? {
        guard watching.load(ordering: .relaxed), let rollout = active.withLock({ $0 }) else { return nil }
        let n = Bucketing.hash(seed: "release-\(rollout.releaseId)", value: userId, version: 2) ?? 1
        return Assignment(releaseId: rollout.releaseId, onRelease: n < Double(rollout.percentage) / 100, flows: rollout.flows,
                          metric: rollout.plan.guardrails.metric)
    }

    /// Records a new session of a rollout, and its first screen's marks, off the caller's path.
    func sessionStarted(_ id: String, _ assignment: Assignment, tree: FlowTree, catalog: FlowCatalog, context: FlowContext) {
        let at = Timestamp.string()
        queue.async { [self] in
            do {
                try store.insertRolloutSession(sessionId: id, releaseId: assignment.releaseId, arm: assignment.arm, at: at)
                var marks = Self.deadEnd(tree, catalog, context)
                if assignment.metric != RolloutPlan.onboarded, tree.top?.feature == assignment.metric { marks.insert(.converted) }
                try store.markRolloutSession(sessionId: id, marks)
            } catch {
                logger.warning("guardrail session not recorded", metadata: ["session": "\(id)", "error": "\(error)"])
            }
        }
        if sinceCheck.add(1, ordering: .relaxed).newValue >= checkEvery {
            sinceCheck.store(0, ordering: .relaxed)
            queue.async { [self] in check() }
        }
    }

    /// The engine refused an action of session `id`: marks it when the refusal counts.
    func refused(_ id: String, _ error: FlowError) {
        guard watching.load(ordering: .relaxed) else { return }
        switch error {
        case .refused, .listTooLarge, .unhandled, .brokenDefinition: mark(id, .refused)
        default: return
        }
    }

    /// An action was committed (`step`): marks a dead end or a conversion of its session,
    /// judged on the queue (available actions cost a walk of the tree). Takes the step, not its
    /// session's parts: copied out for every action, on the writer thread, the tree, catalog and
    /// context were retained and released again when no rollout was watched.
    func applied(_ step: SessionService.ActionStep) {
        guard watching.load(ordering: .relaxed), let metric = active.withLock({ $0?.plan.guardrails.metric }) else { return }
        let (id, tree, catalog, context) = (step.next.id, step.next.tree, step.next.catalog, step.next.context)
        let onboarded = step.userChanges.contains { $0.key == "onboarded" && $0.value == .bool(true) }
        queue.async { [self] in
            var marks = Self.deadEnd(tree, catalog, context)
            if metric == RolloutPlan.onboarded ? onboarded : tree.top?.feature == metric { marks.insert(.converted) }
            write(id, marks)
        }
    }

    private func mark(_ id: String, _ marks: GuardrailMarks) {
        queue.async { [self] in write(id, marks) }
    }

    private func write(_ id: String, _ marks: GuardrailMarks) {
        guard !marks.isEmpty else { return }
        do {
            try store.markRolloutSession(sessionId: id, marks)
        } catch {
            logger.warning("guardrail mark not recorded", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    static func deadEnd(_ tree: FlowTree, _ catalog: FlowCatalog, _ context: FlowContext) -> GuardrailMarks {
        FlowEngine.availableActions(in: tree, catalog: catalog, context: context).isEmpty ? .deadEnd : []
    }

    /// Waits until every guardrail write queued so far is done (tests, and before a check).
    func drain() {
        queue.sync {}
    }

    // MARK: Starting, raising, checking

    /// Reads the rollout in progress from the store.
    func reload() {
        do {
            let current = try store.rollouts(state: RolloutRecord.rollingOut).first.flatMap(Self.active)
            active.withLock { $0 = current }
            watching.store(current != nil, ordering: .relaxed)
        } catch {
            logger.debug("rollouts not read", metadata: ["error": "\(error)"])
        }
    }

    static func active(_ record: RolloutRecord) -> ActiveRollout? {
        guard let plan = RolloutPlan.stored(record.plan), let flows = DefinitionRegistry.decode(record.flows) else { return nil }
        return ActiveRollout(releaseId: record.releaseId, percentage: record.percentage, flows: flows, plan: plan)
    }

    enum Refusal: Error, Equatable {
        /// Another release is rolling out (its id).
        case anotherInProgress(Int)
        /// This release was rolled out already.
        case exists
        /// Not rolling out (its state).
        case notRollingOut(String)
        /// A percentage at or below the current one.
        case notAbove(Int)
    }

    /// Starts rolling out release `releaseId` (its versions `flows`) by `plan`.
    func begin(releaseId: Int, flows: [String: Int], plan: RolloutPlan, now: Date = Date()) throws -> RolloutRecord {
        reload()
        if let other = active.withLock({ $0 }), other.releaseId != releaseId { throw Refusal.anotherInProgress(other.releaseId) }
        let at = Timestamp.string(now)
        let record = RolloutRecord(
            releaseId: releaseId, state: RolloutRecord.rollingOut, percentage: plan.percentage, plan: plan.json.jsonText,
            flows: String(decoding: DefinitionRegistry.encode(flows), as: UTF8.self),
            nextStepAt: plan.interval.map { Timestamp.string(now.addingTimeInterval(Double($0))) }, startedAt: at, updatedAt: at)
        guard try store.insertRollout(record) else {
            // Either this release was rolled out before, or another node just started a rollout
            // (the store keeps one in progress at a time).
            if try store.rollout(releaseId: releaseId) != nil { throw Refusal.exists }
            reload()
            throw Refusal.anotherInProgress(active.withLock({ $0 })?.releaseId ?? 0)
        }
        if plan.percentage == 100 { _ = try complete(record) }
        reload()
        return try store.rollout(releaseId: releaseId) ?? record
    }

    /// Raises the rollout of `releaseId` to `percentage` (or its next step when nil); at 100 the
    /// release is fully activated.
    func raise(releaseId: Int, to percentage: Int?, now: Date = Date(), by audit: AuditStamp? = nil) throws -> RolloutRecord? {
        guard let record = try store.rollout(releaseId: releaseId) else { return nil }
        guard record.state == RolloutRecord.rollingOut else { throw Refusal.notRollingOut(record.state) }
        let plan = RolloutPlan.stored(record.plan)
        let target = percentage ?? plan?.steps.first { $0 > record.percentage } ?? 100
        guard target > record.percentage else { throw Refusal.notAbove(record.percentage) }
        var next = record
        next.percentage = target
        next.updatedAt = Timestamp.string(now)
        next.nextStepAt = plan?.interval.map { Timestamp.string(now.addingTimeInterval(Double($0))) }
        if target == 100 {
            _ = try complete(next, from: record)
        } else if !(try store.updateRollout(releaseId: releaseId, from: (record.state, record.percentage), to: next,
                                            audit: audit ?? AuditStamp(credential: "rollout:\(releaseId)"))) {
            throw Refusal.notRollingOut("changed meanwhile")
        }
        reload()
        return try store.rollout(releaseId: releaseId)
    }

    /// Moves a rollout to 100 %: completed, and the release fully activated.
    private func complete(_ record: RolloutRecord, from: RolloutRecord? = nil) throws -> Bool {
        let before = from ?? record
        var done = record
        done.percentage = 100
        done.state = RolloutRecord.completed
        done.nextStepAt = nil
        done.verdict = "completed: the release is live for every new session"
        guard try store.updateRollout(releaseId: record.releaseId, from: (before.state, before.percentage), to: done) else { return false }
        let activate = hooks.withLock { $0.activate }
        do {
            try activate(record.releaseId)
        } catch {
            // Not activated: back to where it stood, so a later step or a person tries again.
            var back = before
            back.verdict = "activation at 100 % failed: \(error)"
            _ = try? store.updateRollout(releaseId: record.releaseId, from: (done.state, done.percentage), to: back)
            throw error
        }
        return true
    }

    /// One look at the rollout in progress: a scheduled step that is due, then the guardrails.
    /// Safe on every node at once: each move is a compare-and-set.
    func check(now: Date = Date()) {
        reload()
        guard let rollout = active.withLock({ $0 }) else { return }
        do {
            guard let record = try store.rollout(releaseId: rollout.releaseId), record.state == RolloutRecord.rollingOut else { return }
            let verdict = try judge(record)
            if verdict.rollBack {
                try rollBack(record, verdict: verdict, now: now)
                return
            }
            // A step is taken only once the guardrails have judged the release healthy: a quiet
            // rollout (fewer than minSessions a side) waits rather than reach 100 % unjudged.
            if verdict.judged, let due = record.nextStepAt, due <= Timestamp.string(now) {
                _ = try? raise(releaseId: record.releaseId, to: nil, now: now)
            }
        } catch {
            logger.warning("rollout not checked", metadata: ["release": "\(rollout.releaseId)", "error": "\(error)"])
        }
    }

    /// Ends the rollout of `releaseId` because the release was rolled back by hand (the
    /// releases' rollback route): new sessions stop going to it. False when none was in progress.
    @discardableResult
    func stop(releaseId: Int, reason: String, now: Date = Date()) throws -> Bool {
        guard let record = try store.rollout(releaseId: releaseId), record.state == RolloutRecord.rollingOut else { return false }
        var ended = record
        ended.state = RolloutRecord.rolledBack
        ended.verdict = "rolled back by hand" + (reason.isEmpty ? "" : ": \(reason)")
        ended.nextStepAt = nil
        ended.updatedAt = Timestamp.string(now)
        let moved = try store.updateRollout(releaseId: releaseId, from: (record.state, record.percentage), to: ended)
        reload()
        return moved
    }

    private func rollBack(_ record: RolloutRecord, verdict: Verdict, now: Date) throws {
        var ended = record
        ended.state = RolloutRecord.rolledBack
        ended.verdict = verdict.text
        ended.nextStepAt = nil
        ended.updatedAt = Timestamp.string(now)
        // One node wins; the others find it moved and do nothing.
        guard try store.updateRollout(releaseId: record.releaseId, from: (record.state, record.percentage), to: ended) else { return }
        reload()
        logger.warning("rollout rolled back", metadata: ["release": "\(record.releaseId)", "verdict": "\(verdict.text)"])
        let rollBackRelease = hooks.withLock { $0.rollBack }
        try rollBackRelease(record.releaseId, verdict.text, verdict.detail)
    }

    // MARK: Verdicts

    /// One guardrail's figures on both sides and its test.
    struct GuardrailCheck: Sendable {
        var name: String
        var label: String
        var direction: GuardrailDirection
        var old: ProportionSample
        var new: ProportionSample
        var test: SequentialProportionTest
        var worse: Bool
    }

    struct Verdict: Sendable {
        var counts: [String: GuardrailCounts]
        var checks: [GuardrailCheck]
        var judged: Bool
        var rollBack: Bool
        /// A plain sentence: "rolled back: refused actions 31% vs 0%, …".
        var text: String
        /// The audit log's detail: the guardrail that failed and its figures.
        var detail: String
    }

    /// The guardrails of a rollout, as its counts stand.
    func judge(_ record: RolloutRecord) throws -> Verdict {
        let counts = try store.rolloutCounts(releaseId: record.releaseId)
        let guards = RolloutPlan.stored(record.plan)?.guardrails ?? RolloutPlan.Guardrails()
        return Self.verdict(counts: counts, guardrails: guards)
    }

    static func verdict(counts: [String: GuardrailCounts], guardrails: RolloutPlan.Guardrails) -> Verdict {
        let old = counts["old"] ?? GuardrailCounts(), new = counts["new"] ?? GuardrailCounts()
        let metricLabel = guardrails.metric == RolloutPlan.onboarded ? "onboarded" : "reached \(guardrails.metric)"
        let specs: [(String, String, GuardrailDirection, KeyPath<GuardrailCounts, Int>)] = [
            ("refused", "refused actions", .higherIsWorse, \.refused),
            ("deadEnds", "dead ends", .higherIsWorse, \.deadEnds),
            ("conversion", metricLabel, .lowerIsWorse, \.conversions),
        ]
        let judged = old.sessions >= guardrails.minSessions && new.sessions >= guardrails.minSessions
        let checks = specs.map { name, label, direction, path in
            let a = ProportionSample(units: old.sessions, conversions: old[keyPath: path])
            let b = ProportionSample(units: new.sessions, conversions: new[keyPath: path])
            let test = SequentialProportionTest(baseline: a, treatment: b, alpha: guardrails.alpha, tuning: guardrails.tuning)
            return GuardrailCheck(name: name, label: label, direction: direction, old: a, new: b, test: test,
                                  worse: judged && test.isWorse(direction))
        }
        let figures = checks.map { "\($0.label) \(percent($0.new.mean)) vs \(percent($0.old.mean))" }.joined(separator: ", ")
        let failed = checks.filter(\.worse)
        let text: String
        let detail: String
        if !failed.isEmpty {
            text = "rolled back: " + failed.map { "\($0.label) \(percent($0.new.mean)) vs \(percent($0.old.mean))" }.joined(separator: ", ")
                + " (\(new.sessions) sessions on the release, \(old.sessions) before it)"
            detail = failed.map {
                "guardrail \($0.name): \($0.new.conversions)/\($0.new.units) on the release vs \($0.old.conversions)/\($0.old.units) before, "
                    + "sequential p = \(String(format: "%.3g", $0.test.pValue)) < alpha \(guardrails.alpha)"
            }.joined(separator: "; ")
        } else if !judged {
            text = "waiting: \(new.sessions) of \(guardrails.minSessions) sessions on the release, \(old.sessions) of \(guardrails.minSessions) before it"
            detail = ""
        } else {
            text = "healthy: " + figures + "; no guardrail significantly worse"
            detail = ""
        }
        return Verdict(counts: counts, checks: checks, judged: judged, rollBack: !failed.isEmpty, text: text, detail: detail)
    }

    static func percent(_ rate: Double) -> String {
        let value = rate * 100
        return value == value.rounded() ? "\(Int(value))%" : String(format: "%.1f%%", value)
    }

    // MARK: Documents

    /// The `rollout` member of a release document, or nil when the release has no rollout.
    func document(releaseId: Int) throws -> JSONValue? {
        guard let record = try store.rollout(releaseId: releaseId) else { return nil }
        let plan = RolloutPlan.stored(record.plan)
        let verdict = try judge(record)
        var object: JSONObject = ["releaseId": .integer(record.releaseId), "state": .string(record.state),
                                  "percentage": .integer(record.percentage)]
        object["flows"] = (try? JSONParser.parse(record.flows, limits: .storedData)) ?? .object([:])
        object["plan"] = plan?.json ?? .null
        object["nextStepAt"] = record.nextStepAt.map(JSONValue.string) ?? .null
        var arms = JSONObject()
        for arm in ["new", "old"] {
            let counts = verdict.counts[arm] ?? GuardrailCounts()
            arms[arm] = .object(["sessions": .integer(counts.sessions), "refused": .integer(counts.refused),
                                 "deadEnds": .integer(counts.deadEnds), "conversions": .integer(counts.conversions)])
        }
        object["arms"] = .object(arms)
        object["guardrails"] = .array(verdict.checks.map { check in
            .object(["guardrail": .string(check.name), "label": .string(check.label),
                     "worseWhen": .string(check.direction == .higherIsWorse ? "higher" : "lower"),
                     "new": .number(check.new.mean), "old": .number(check.old.mean), "difference": .number(check.test.difference),
                     "pValue": .number(check.test.pValue), "worse": .bool(check.worse)])
        })
        // A finished rollout keeps the verdict it finished with; one in progress says how it stands now.
        object["verdict"] = .string(record.state == RolloutRecord.rollingOut ? verdict.text : record.verdict ?? verdict.text)
        object["startedAt"] = .string(record.startedAt)
        object["updatedAt"] = .string(record.updatedAt)
        return .object(object)
    }
}

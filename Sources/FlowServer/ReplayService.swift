// Replay of recorded sessions against other flow versions (a draft): what a replay request
// holds, and the run, between the replay routes and the store.
import FlowEngine
import FlowStore
import Foundation
import HTTPServer
import Locking
import JSON
import Logging

/// What a replay runs: which versions replace the sessions' own, over which sessions.
struct ReplayRequest: Sendable, Equatable {
    /// Flow name → version, in place of the version each session ran.
    var versions: [String: Int] = [:]
    /// Sessions created in the last `days` days.
    var days = 7
    /// At most this many of them, newest first.
    var sample = 1000

    static let maxDays = 365
    /// The cap of a synchronous replay: 100,000 sessions replay in seconds (see BENCHMARKS.md).
    static let maxSample = 100_000

    /// Reads `{flows?: {name: version}, days?, sample?}` (an empty body takes the defaults; a
    /// body that is JSON `null` is not an object, and is refused like any other).
    init(json: JSONValue?) throws(ResponseError) {
        guard let json else { return }  // no body: the defaults
        guard let object = json.objectValue else {
            throw Self.malformed("", "a replay is an object {flows?, days?, sample?}; found \(json.typeName)")
        }
        for member in object.members where !["flows", "days", "sample"].contains(member.key) {
            throw Self.malformed("/\(member.key)", "unknown key \(JSONValue.string(member.key).abbreviatedJSON()) in a replay; expected flows, days, sample")
        }
        if let flows = object["flows"], !flows.isNull {
            guard let entries = flows.objectValue else {
                throw Self.malformed("/flows", "flows maps a flow name to the version to replay with, such as {\"onboarding\": 2}; found \(flows.typeName)")
            }
            for member in entries.members {
                guard let version = member.value.integerValue, version >= 1 else {
                    throw Self.malformed(JSONPointer(["flows", member.key]).description,
                                         "a flow version is a whole number from 1; found \(member.value.abbreviatedJSON())")
                }
                versions[member.key] = version
            }
        }
        days = try Self.bounded(object["days"], "days", 1...Self.maxDays, default: days)
        sample = try Self.bounded(object["sample"], "sample", 1...Self.maxSample, default: sample)
    }

    init(versions: [String: Int], days: Int = 7, sample: Int = 1000) {
        self.versions = versions
        self.days = days
        self.sample = sample
    }

    private static func bounded(_ value: JSONValue?, _ name: String, _ range: ClosedRange<Int>, default fallback: Int) throws(ResponseError) -> Int {
        guard let value, !value.isNull else { return fallback }
        guard let number = value.integerValue, range.contains(number) else {
            throw malformed("/\(name)", "\(name) is a whole number from \(range.lowerBound) to \(range.upperBound); found \(value.abbreviatedJSON())")
        }
        return number
    }

    private static func malformed(_ pointer: String, _ detail: String) -> ResponseError {
        ResponseError(.problem(400, "The replay request is not valid: \(detail).", type: ProblemType.malformed,
                               errors: [.init(pointer: pointer, detail: detail)]))
    }
}

/// What the replay routes do: read recorded sessions from the store and run them again on other
/// flow versions, on every core.
///
/// ```swift
/// let replays = ReplayService(store: store, registry: registry, logger: logger)
/// let outcome = try replays.run(ReplayRequest(versions: ["onboarding": 2]))
/// outcome.report.totals   // sessions, same, diverged, refused, deadEnd, skipped
/// ```
final class ReplayService: Sendable {
    let store: any DefinitionStore & SessionRecordStore & UserDataStore
    let registry: DefinitionRegistry
    let logger: Logger

    init(store: any DefinitionStore & SessionRecordStore & UserDataStore, registry: DefinitionRegistry, logger: Logger) {
        self.store = store
        self.registry = registry
        self.logger = logger
    }

    /// Sessions read per batch: one read transaction (SQLite) or two round trips (PostgreSQL) each.
    static let batchSize = 500
    /// Actions replayed per session at most; a longer session is replayed up to there.
    static let maxActions = 1000

    /// Replays the newest `sample` sessions of the last `days` days with `versions` in place of
    /// their own, and answers the report (see README "Replay real sessions against a draft").
    ///
    /// Each session runs on its own recorded flow versions with `versions` put over them, so a
    /// difference comes from the draft, not from another flow activated since. Its context is
    /// the one stored at creation; the user's state at creation is not stored, so it is the
    /// state under which the session's own versions rebuild its recorded first screens: none
    /// (a new user) or, failing that, the user's state now. A session neither rebuilds, or whose
    /// log does not rebuild (see `LogRebuild`), is `skipped`.
    func run(_ replay: ReplayRequest, now: Date = Date()) throws(ResponseError) -> ReplayOutcome {
        for (name, version) in replay.versions.sorted(by: { $0.key < $1.key }) where registry.flow(name, version: version) == nil {
            throw ResponseError(.problem(
                422, "Flow \(name) has no version \(version) to replay with.", type: ProblemType.unknownFlowVersion,
                errors: [.init(pointer: JSONPointer(["flows", name]).description, detail: "no stored version \(version) of flow \(name)")]))
        }
        let started = ContinuousClock.now
        let since = Timestamp.string(now.addingTimeInterval(-Double(replay.days) * 24 * 3600))
        var report = ReplayReport()
        var cursor: RecordedSessionCursor?
        var remaining = replay.sample
        while remaining > 0 {
            let wanted = min(Self.batchSize, remaining)
            let batch: [RecordedSessionRecord]
            do {
                batch = try store.recordedSessions(createdSince: since, before: cursor, limit: wanted,
                                                   maxActions: Self.maxActions)
            } catch {
                throw SessionService.storageFailure(error, logger: logger)
            }
            report.merge(Self.replayBatch(batch, versions: replay.versions, registry: registry, store: store))
            remaining -= batch.count
            guard batch.count == wanted, let last = batch.last else { break }
            cursor = last.cursor
        }
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return ReplayOutcome(report: report, replay: replay, since: since, milliseconds: milliseconds)
    }

    /// Replays one batch in parts on every core (the engine is pure; each part counts its own).
    static func replayBatch(_ batch: [RecordedSessionRecord], versions: [String: Int], registry: DefinitionRegistry,
                            store: any DefinitionStore & SessionRecordStore & UserDataStore) -> ReplayReport {
        let parts = max(1, min(ProcessInfo.processInfo.activeProcessorCount, batch.count / 50))
        let reports = PThreadMutex<[ReplayReport]>([])
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var report = ReplayReport()
            for index in stride(from: part, to: batch.count, by: parts) {
                guard let run = Self.recordedRun(batch[index], versions: versions, registry: registry, store: store) else {
                    report.skipped += 1
                    continue
                }
                report.add(SessionReplay.replay(run.session, on: run.candidate))
            }
            reports.withLock { $0.append(report) }
        }
        return reports.withLock { $0 }.reduce(into: ReplayReport()) { $0.merge($1) }
    }

    /// The recorded session ready to replay and the catalog it replays on, or nil when it
    /// cannot be replayed (see ``run(_:now:)``).
    static func recordedRun(_ recorded: RecordedSessionRecord, versions: [String: Int], registry: DefinitionRegistry,
                            store: any DefinitionStore & SessionRecordStore & UserDataStore) -> (session: RecordedSession, candidate: FlowCatalog)? {
        let record = recorded.session
        // A log that retention cut (its first entries older than --retention) no longer starts
        // at the first screen: skipped, like a row that compaction moved past version 0.
        guard record.version == 0, recorded.actions.first.map({ $0.action.version == 1 }) ?? true,
              let own = DefinitionRegistry.decode(record.flowVersions),
              let baseline = registry.catalog(for: own),
              let candidate = registry.catalog(for: own.merging(versions) { _, draft in draft }),
              let start = try? FlowTree(storage: record.tree) else { return nil }
        var context = SessionCodecs.decodeContext(record.context, userId: record.userId)
        let shown = start.screens.map { ($0.feature, $0.params) }
        func rebuilds(_ user: [String: JSONValue]) -> Bool {
            context.user = user
            guard let tree = try? FlowEngine.start(catalog: baseline, context: context) else { return false }
            let screens = tree.screens
            return screens.count == shown.count && zip(screens, shown).allSatisfy { $0.feature == $1.0 && $0.params == $1.1 }
        }
        if !rebuilds([:]) {
            guard let text = try? store.user(id: record.userId)?.state,
                  let state = (try? JSONParser.parse(text, limits: .storedData))?.objectValue else { return nil }
            var user: [String: JSONValue] = [:]
            for member in state.members { user[member.key] = member.value }
            guard rebuilds(user) else { return nil }
        }
        // The trees the log does not keep, rebuilt on the session's own versions (exact: each
        // entry says which user's state it was judged with where the log does not imply it).
        guard let rebuilt = LogRebuild(catalog: baseline, context: context)
                .steps(from: start, entries: recorded.actions, transitions: .none) else {
            return nil
        }
        let steps = rebuilt.map { RecordedStep(action: $0.action, tree: $0.tree) }
        return (RecordedSession(start: start, context: context, steps: steps), candidate)
    }
}

/// A replay's report, with what was asked and how long it took.
struct ReplayOutcome {
    let report: ReplayReport
    let replay: ReplayRequest
    /// The creation time from which sessions were replayed.
    let since: String
    let milliseconds: Double
}

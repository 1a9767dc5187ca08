// A replayed key answers its version's state, from memory or made again from the log, byte for byte
// the first answer (LogRebuildTests replays the keys of seeded random walks on both stores).
@testable import FlowServer
import FlowStore
import Foundation
import GRDB
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Synchronization
import Testing

@Suite("Replayed answers")
struct ReplayedAnswerTests {
    /// A keyed tap as it was posted, and what it was answered.
    struct Tap: Sendable, Equatable {
        let key: String
        let request: String
        let version: Int
        let body: [UInt8]
    }

    /// `count` keyed taps on `session`, each applied (into and out of the second onboarding
    /// screen, so every tap makes a version); returns them in order.
    static func tap(_ client: SessionClient, _ session: CreatedSession, count: Int, from first: Int = 1,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> [Tap] {
        try (first..<first + count).map { index in
            let request = index % 2 == 1 ? #"{"type":"onboarding.showSecond"}"# : #"{"type":"back"}"#
            let key = "tap-\(index)"
            let answer = try client.act(session, request, headers: [("Idempotency-Key", key)])
            #expect(answer.status == 200, "\(key): \(answer.text)", sourceLocation: sourceLocation)
            return Tap(key: key, request: request, version: answer.json["version"].integerValue ?? -1, body: answer.body)
        }
    }

    /// Replays `tap` and expects its own answer back.
    static func expectReplay(_ client: SessionClient, _ session: CreatedSession, _ tap: Tap, _ context: String = "",
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        if let problem = try replayProblem(client, session, tap) {
            Issue.record("\(context) \(problem)", sourceLocation: sourceLocation)
        }
    }

    /// What is wrong with `tap`'s replay, or nil when it is its first answer, byte for byte,
    /// with its version's `ETag` and `Idempotent-Replayed`.
    static func replayProblem(_ client: SessionClient, _ session: CreatedSession, _ tap: Tap) throws -> String? {
        let replay = try client.act(session, tap.request, headers: [("Idempotency-Key", tap.key)])
        guard replay.status == 200, replay.headers["Idempotent-Replayed"] == "true", replay.headers["ETag"] == "\"\(tap.version)\"" else {
            return "\(tap.key): \(replay.status) \(replay.headers["ETag"] ?? "no ETag") \(replay.text)"
        }
        return replay.body == tap.body ? nil : "\(tap.key): not the first answer: \(replay.text)"
    }

    /// Through libmicrohttpd, one client taps on while three retry its earlier taps (replays
    /// waiting behind commits): each replay is its tap's first answer, and after a restart too.
    @Test func olderTapsReplayTheirOwnAnswerWhileTheClientTapsOn() throws {
        let test = try TestApp()
        let session = try SessionClient(sender: test.direct).create(userId: "retrying")
        let taps = Mutex<[Tap]>([])
        let replayed = Atomic<Int>(0)
        // Found on the retriers' threads, recorded on the test's.
        let problems = Mutex<[String]>([])
        try test.withLiveServer { sender in
            let client = SessionClient(sender: sender)
            taps.withLock { $0 = (try? Self.tap(client, session, count: 3)) ?? [] }
            let done = Atomic<Bool>(false)
            let retriers = DispatchGroup()
            for _ in 0..<3 {
                let thread = Thread {
                    defer { retriers.leave() }
                    var random = SystemRandomNumberGenerator()
                    while !done.load(ordering: .relaxed) {
                        guard let tap = taps.withLock({ $0.randomElement(using: &random) }) else { continue }
                        do {
                            if let problem = try Self.replayProblem(client, session, tap) { problems.withLock { $0.append(problem) } }
                            replayed.add(1, ordering: .relaxed)
                        } catch {
                            problems.withLock { $0.append("\(tap.key): \(error)") }
                        }
                    }
                }
                retriers.enter()
                thread.start()
            }
            for index in 4...160 {
                guard let tap = try? Self.tap(client, session, count: 1, from: index).first else { break }
                taps.withLock { $0.append(tap) }
            }
            done.store(true, ordering: .relaxed)
            retriers.wait()
        }
        let all = taps.withLock { $0 }
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(5) })")
        #expect(all.count == 160 && all.map(\.version) == Array(1...160))
        #expect(replayed.load(ordering: .relaxed) > 30, "the retries ran beside the taps")
        #expect(test.app.sessions.counters.replaysRebuilt.load(ordering: .relaxed) > 0)
        #expect(test.app.sessions.counters.replaysNotRebuilt.load(ordering: .relaxed) == 0)

        let restarted = try test.reopened()
        let client = SessionClient(sender: restarted.direct)
        for index in [0, 1, 62, 63, 64, 65, 100, 127, 128, 158, 159] {
            try Self.expectReplay(client, session, all[index], "after a restart")
        }
        // Another action under a used key is still refused.
        let reused = try client.act(session, #"{"type":"home.selectTab","params":{"index":1}}"#, headers: [("Idempotency-Key", "tap-5")])
        #expect(reused.status == 422 && reused.json["code"].stringValue == "idempotency-key-reused", "\(reused.text)")
    }

    /// An older key's replay is made again on the server's own read threads: it answers while
    /// every worker of libdispatch's global pool is blocked (the test runner's tests are that
    /// pool's work on Linux; in a full run they once held the read, and this suite, five minutes).
    @Test func anOlderKeysReplayWaitsForNoWorkerOfTheGlobalPool() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "starved")
        let taps = try Self.tap(client, session, count: 5)
        let release = DispatchSemaphore(value: 0)
        let blockers = ProcessInfo.processInfo.activeProcessorCount * 4
        ReadThreadsTests.blockGlobalPool(blockers, release: release, seconds: 8)
        defer { for _ in 0..<blockers { release.signal() } }
        let started = ContinuousClock.now
        try Self.expectReplay(client, session, taps[1])
        let took = ContinuousClock.now - started
        #expect(took < .seconds(2), "the replay took \(took)")
        #expect(test.app.sessions.counters.replaysRebuilt.load(ordering: .relaxed) == 1)
    }

    /// Every key retention leaves replays its own answer, none the current state (3 s periods:
    /// the taps after the pause must all be newer than the horizon, on a loaded machine too).
    @Test func keysLeftByRetentionStillReplay() throws {
        let test = try RetentionApp(retention: .seconds(3), idle: .seconds(3600))
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "kept")
        let old = try Self.tap(client, session, count: LogSnapshots.interval + 6)
        Thread.sleep(forTimeInterval: 3.2)
        let kept = try Self.tap(client, session, count: 70, from: old.count + 1)
        let run = try test.app.retention.run()
        #expect(run.idempotencyRecords == old.count)
        #expect(run.actions == LogSnapshots.interval - 1, "the entries below the old snapshot went")
        let reloaded = try RetentionApp(retention: .seconds(3), idle: .seconds(3600), beside: test)
        for (app, name) in [(test, "cached"), (reloaded, "read again")] {
            let again = SessionClient(sender: app.direct)
            for tap in kept { try Self.expectReplay(again, session, tap, name) }
            #expect(app.app.sessions.counters.replaysNotRebuilt.load(ordering: .relaxed) == 0)
        }
    }

    /// Each compaction batch of a run finds no stored answer older than its horizon: the run
    /// prunes answers first, so no answer outlives its entries while a run is halfway either.
    /// Answers go `RetentionOptions.answerBatchFactor` times as many a batch as log entries.
    @Test func retentionPrunesAnswersBeforeItCompacts() throws {
        let test = try RetentionApp(retention: .seconds(3), idle: .seconds(3600))
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "ordered")
        _ = try Self.tap(client, session, count: LogSnapshots.interval + 6)
        Thread.sleep(forTimeInterval: 3.2)
        _ = try Self.tap(client, session, count: 3, from: LogSnapshots.interval + 7)
        let checking = AnswersBeforeCompaction(test.store, session: session.id)
        let retention = RetentionService(store: checking, options: test.app.retention.options, counters: RetentionCounters(),
                                         logger: test.app.sessions.logger)
        let run = try retention.run()
        #expect(run.idempotencyRecords == LogSnapshots.interval + 6 && run.actions > 0)
        #expect(checking.compactions.load(ordering: .relaxed) > 0)
        #expect(checking.olderAnswersSeen.load(ordering: .relaxed) == 0, "answers older than the horizon were left while the log was compacted")
        let (answers, compactions) = checking.limits.withLock { $0 }
        let size = test.app.retention.options.batchSize
        #expect(!answers.isEmpty && answers.allSatisfy { $0 == size * RetentionOptions.answerBatchFactor }, "\(answers)")
        #expect(!compactions.isEmpty && compactions.allSatisfy { $0 == size }, "\(compactions)")
    }

    /// An application on a store whose log reads can be made to fail or stall.
    static func stallingApp() throws -> (TestDatabase, StallingStore, SessionClient) {
        let database = try TestDatabase()
        let store = StallingStore(base: try database.migratedStore())
        let client = SessionClient(sender: DirectSender(try Application(store: store, adminToken: TestApp.adminToken).handle))
        return (database, store, client)
    }

    /// A log read that fails while a key is made again answers 503, as any read does; the
    /// session keeps serving, and the same key then replays its answer.
    @Test func aFailedLogReadIs503AndTheKeyReplaysAfter() throws {
        let (database, store, client) = try Self.stallingApp()
        defer { withExtendedLifetime(database) { try? store.close() } }
        let session = try client.create(userId: "unlucky")
        let taps = try Self.tap(client, session, count: 5)
        store.failsLogReads.store(true, ordering: .relaxed)
        let failed = try client.act(session, taps[1].request, headers: [("Idempotency-Key", taps[1].key)])
        #expect(failed.status == 503 && failed.headers["Content-Type"] == "application/problem+json", "\(failed.text)")
        try Self.expectReplay(client, session, taps[4], "the newest, from memory")
        let more = try Self.tap(client, session, count: 1, from: 6)
        store.failsLogReads.store(false, ordering: .relaxed)
        try Self.expectReplay(client, session, taps[1], "after the failure")
        try Self.expectReplay(client, session, more[0])
        #expect(try client.state(session).json["version"] == 6)
    }

    /// A session deleted while its older key's answer is made again: the replay answers 404,
    /// as every route of a deleted session does, not the state it held.
    @Test func aSessionDeletedDuringARebuildAnswers404() throws {
        let (database, store, client) = try Self.stallingApp()
        defer { withExtendedLifetime(database) { try? store.close() } }
        let session = try client.create(userId: "leaving")
        let taps = try Self.tap(client, session, count: 5)
        store.stallsLogReads.store(true, ordering: .relaxed)
        let replay = Mutex<Response?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread {
            replay.withLock { $0 = try? client.act(session, taps[1].request, headers: [("Idempotency-Key", taps[1].key)]) }
            answered.signal()
        }.start()
        #expect(store.logStalled.wait(timeout: .now() + 20) == .success, "the rebuild read the log")
        let deleted = try client.sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth)
        #expect(deleted.status == 204, "\(deleted.text)")
        store.logGate.signal()
        #expect(answered.wait(timeout: .now() + 20) == .success)
        let answer = replay.withLock { $0 }
        #expect(answer?.status == 404 && answer?.headers["Content-Type"] == "application/problem+json", "\(answer?.text ?? "no answer")")
    }

    /// Where the entries a version is made from are gone (a file edited by hand, or damaged),
    /// the replay answers the session's current state with its own version, still as a
    /// replay: nothing is applied twice, and the server keeps serving.
    @Test(.enabled(if: TestStoreKind.isSQLite, "edits the SQLite file")) func aVersionThatNoLongerRebuildsAnswersTheCurrentState() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "damaged")
        let taps = try Self.tap(client, session, count: 10)
        let queue = try DatabaseQueue(path: test.database.path)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM actions WHERE session_id = ? AND version BETWEEN 2 AND 4", arguments: [session.id])
        }
        try queue.close()
        let replay = try client.act(session, taps[2].request, headers: [("Idempotency-Key", taps[2].key)])
        #expect(replay.status == 200 && replay.headers["Idempotent-Replayed"] == "true" && replay.headers["ETag"] == "\"10\"", "\(replay.text)")
        #expect(replay.body == taps[9].body, "the current state")
        #expect(test.app.sessions.counters.replaysNotRebuilt.load(ordering: .relaxed) == 1)
        try Self.expectReplay(client, session, taps[9], "the newest, from memory")
        #expect(try client.state(session).json["version"] == 10, "nothing was applied again")
        _ = try Self.tap(client, session, count: 1, from: 11)
        let metrics = try test.direct.send("GET", "/metrics").text
        #expect(metrics.contains("flowstack_idempotency_replays_not_rebuilt_total 1"), "\(metrics.prefix(200))")
        #expect(metrics.contains("flowstack_idempotency_replays_rebuilt_total 0"))
    }
}

/// A real store's retention that, before each compaction batch, counts the answers of session
/// `session` older than the batch's horizon (its entries' keys looked up one by one).
final class AnswersBeforeCompaction: RetentionStore {
    let base: any FlowStore
    let session: String
    let compactions = Atomic<Int>(0)
    let olderAnswersSeen = Atomic<Int>(0)
    /// The `limit` of every batch asked for: answers pruned, log compacted.
    let limits = Mutex<(answers: [Int], compactions: [Int])>(([], []))

    init(_ base: any FlowStore, session: String) {
        self.base = base
        self.session = session
    }

    func compactActions(before horizon: String, limit: Int) throws -> RetentionBatch {
        compactions.add(1, ordering: .relaxed)
        limits.withLock { $0.compactions.append(limit) }
        olderAnswersSeen.add(try olderAnswers(than: horizon), ordering: .relaxed)
        return try base.compactActions(before: horizon, limit: limit)
    }

    func removeSessions(idleBefore horizon: String, limit: Int) throws -> RetentionBatch {
        try base.removeSessions(idleBefore: horizon, limit: limit)
    }

    func pruneIdempotencyRecords(before horizon: String, limit: Int) throws -> RetentionBatch {
        limits.withLock { $0.answers.append(limit) }
        return try base.pruneIdempotencyRecords(before: horizon, limit: limit)
    }

    /// Answers stored under the tests' keys (`tap-N`) whose log entry is older than `horizon`.
    private func olderAnswers(than horizon: String) throws -> Int {
        var older = 0
        for entry in try base.actions(sessionId: session, after: 0, limit: 10_000) where entry.createdAt < horizon {
            if try base.idempotentAnswer(sessionId: session, key: "tap-\(entry.version)") != nil { older += 1 }
        }
        return older
    }
}

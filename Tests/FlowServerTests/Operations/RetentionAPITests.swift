// Session expiry and retention through the API, with periods of a second or two, on the run's
// store: an idle session answers 401 session-expired on every session route (cached or not, on
// any node), a busy one does not; a session compacted while idle reloads and keeps numbering;
// the experiment report is the same after compaction; expired sessions go, users stay.
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

/// An application with short retention and idle periods; its background runs are off (the
/// tests call `run()`), unless `interval` is given.
final class RetentionApp: Sendable {
    let database: TestDatabase
    let store: any FlowStore
    let app: Application

    init(retention: Duration, idle: Duration, interval: Duration = .seconds(3600), beside other: RetentionApp? = nil) throws {
        database = try other?.database ?? TestDatabase()
        store = try database.migratedStore()
        app = try Application(store: store, adminToken: TestApp.adminToken,
                              retention: RetentionOptions(retention: retention, sessionIdle: idle, batchSize: 2,
                                                          pause: .milliseconds(1), interval: interval))
    }

    deinit { try? store.close() }

    var direct: DirectSender { DirectSender(app.handle) }
}

struct RetentionAPITests {
    static let admin = FlowAdminTests.admin

    /// The session routes a client of an expired session may call, each as `(method, path, body)`.
    static func routes(_ id: String) -> [(String, String, String?)] {
        [("GET", "/v1/sessions/\(id)", nil),
         ("POST", "/v1/sessions/\(id)/actions", #"{"type":"onboarding.showSecond"}"#),
         ("GET", "/v1/sessions/\(id)/actions", nil),
         ("GET", "/v1/sessions/\(id)/actions/available", nil),
         ("POST", "/v1/sessions/\(id)/actions/batch", #"{"actions":[{"key":"k1","version":0,"action":{"type":"onboarding.showSecond"}}]}"#),
         ("GET", "/v1/sessions/\(id)/bundle", nil),
         ("POST", "/v1/sessions/\(id)/events/ticket", nil),
         ("GET", "/v1/sessions/\(id)/graph", nil),
         ("DELETE", "/v1/sessions/\(id)", nil)]
    }

    static func expectExpired(_ response: Response, _ route: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 401, "\(route): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["code"].stringValue == "session-expired", "\(route): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["type"].stringValue == "urn:flowstack:problem:session-expired", sourceLocation: sourceLocation)
        #expect(response.headers["WWW-Authenticate"] == "Bearer", "\(route)", sourceLocation: sourceLocation)
        #expect(response.headers["Content-Type"] == "application/problem+json", sourceLocation: sourceLocation)
    }

    /// Through a real socket: after the idle period without an action, every session route
    /// answers 401 session-expired to the token's holder (a wrong token is still plain
    /// `unauthorized`); a session that acted meanwhile goes on; reads do not keep one alive. The
    /// same on a second application on the database, which never cached it.
    @Test func idleSessionsExpireOnEveryRoute() throws {
        // The idle period is long next to a request, so that a loaded machine's stalls cannot
        // expire the busy session between two of its actions, nor the idle one before a read
        // that is checked as answered (only reads that ended within the period are).
        let idlePeriod = Duration.seconds(4)
        let test = try RetentionApp(retention: .seconds(3600), idle: idlePeriod)
        let other = try RetentionApp(retention: .seconds(3600), idle: idlePeriod, beside: test)
        var idleId = ""
        try test.app.withLiveServerForRetention { sender in
            let client = SessionClient(sender: sender)
            // The server marks the idle session active between these two instants: a read that
            // ended before `asked` + the period was served within it, and once `made` + the
            // period has passed it is over.
            let asked = ContinuousClock.now
            let idle = try client.create(userId: "idle")
            let made = ContinuousClock.now
            idleId = idle.id
            let busy = try client.create(userId: "busy")
            var step = 0, answered = 0
            while ContinuousClock.now - made < idlePeriod + .milliseconds(300) {
                Thread.sleep(forTimeInterval: 0.3)
                try client.apply(busy, step % 2 == 0 ? #"{"type":"onboarding.showSecond"}"# : #"{"type":"back"}"#)
                let read = try client.state(idle).status  // a read, not activity
                if ContinuousClock.now - asked < idlePeriod {
                    #expect(read == 200, "a read within the idle period is answered")
                    answered += 1
                }
                step += 1
            }
            #expect(answered > 0, "the idle session was read within its period")
            for (method, path, body) in Self.routes(idle.id) {
                Self.expectExpired(try sender.send(method, path, body: body, headers: idle.auth), "\(method) \(path)")
            }
            let wrong = try sender.send("GET", "/v1/sessions/\(idle.id)", headers: [("Authorization", "Bearer nope")])
            #expect(wrong.status == 401)
            #expect(wrong.json["code"].stringValue == "unauthorized")
            #expect(try client.state(busy).status == 200)
            Self.expectExpired(try SessionClient(sender: other.direct).state(idle), "uncached, other node")
            #expect(try SessionClient(sender: other.direct).state(busy).status == 200)
        }
        let metrics = try test.direct.send("GET", "/metrics")
        #expect(metrics.text.contains("flowstack_retention_sessions_expired_total "))
        #expect(test.app.metrics.retention.sessionsExpired.load(ordering: .relaxed) >= Self.routes("x").count)
        // The expired session left the cache.
        let cached = test.app.sessions.cache.pinIfCached(idleId)
        if let cached { test.app.sessions.cache.unpin(cached) }
        #expect(cached == nil)
    }

    /// A session whose log was compacted while it was idle (not yet expired) reloads with its
    /// tree and version, numbering continues, and its log lists what is left.
    @Test func compactedSessionReloadsAndContinuesNumbering() throws {
        let test = try RetentionApp(retention: .seconds(1), idle: .seconds(3600))
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "compacted")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"back"}"#)
        let before = try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        Thread.sleep(forTimeInterval: 1.2)
        let run = try test.app.retention.run()
        #expect(run.actions == 3)
        #expect(test.app.metrics.retention.actionsRemoved.load(ordering: .relaxed) == 3)
        let reloaded = try RetentionApp(retention: .seconds(1), idle: .seconds(3600), beside: test)
        let again = SessionClient(sender: reloaded.direct)
        let state = try again.state(session)
        #expect(state.status == 200)
        #expect(state.json["version"] == 3)
        #expect(state.json.features == before.features)
        #expect(state.json["screens"] == before["screens"] as JSONValue)
        let after = try again.apply(session, #"{"type":"back"}"#)
        #expect(after["version"] == 4)
        let log = try reloaded.direct.send("GET", "/v1/sessions/\(session.id)/actions", headers: session.auth).json
        #expect(log["actions"].arrayValue?.compactMap { $0["version"].integerValue } == [4])
        #expect(try test.app.retention.run().removed == 0)
    }

    /// Log entries without a tree (written before migration 0004, or between snapshots) are
    /// removed when the session's head or row holds their version; a newest entry that neither
    /// has a tree nor a head row to stand for it nor rebuilds (a damaged file: the user's state
    /// it was judged with is lost) stays, and whole batches of those end the run instead of
    /// keeping it examining the same rows forever.
    @Test(.enabled(if: TestStoreKind.isSQLite, "edits the SQLite file")) func headsWithoutTreesDoNotStallARun() throws {
        let test = try RetentionApp(retention: .seconds(1), idle: .seconds(3600))
        let client = SessionClient(sender: test.direct)
        var sessions: [String] = []
        for user in 0..<6 {
            let session = try client.create(userId: "old-\(user)")
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            sessions.append(session.id)
        }
        let (held, damaged) = (sessions[..<3].map { "'\($0)'" }.joined(separator: ","), sessions[3...].map { "'\($0)'" }.joined(separator: ","))
        let queue = try DatabaseQueue(path: test.database.path)
        try queue.write { db in
            try db.execute(sql: "UPDATE actions SET tree = NULL")
            try db.execute(sql: "UPDATE sessions SET version = 1 WHERE id IN (\(held))")
            try db.execute(sql: "DELETE FROM session_heads WHERE session_id IN (\(held))")
            try db.execute(sql: "UPDATE sessions SET version = 0 WHERE id IN (\(damaged))")
            try db.execute(sql: "DELETE FROM session_heads WHERE session_id IN (\(damaged))")
            try db.execute(sql: "UPDATE actions SET user_state = NULL WHERE session_id IN (\(damaged))")
        }
        try queue.close()
        Thread.sleep(forTimeInterval: 1.2)
        let finished = DispatchSemaphore(value: 0)
        let removed = Mutex<Int?>(nil)
        DispatchQueue.global().async {
            let run = try? test.app.retention.run()
            removed.withLock { $0 = run?.actions }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 20) == .success, "the run ended")
        #expect(removed.withLock { $0 } == 3, "the entries the rows hold went, the damaged heads stayed")
    }

    /// Two nodes on one database: a session cached on one node while its client acts through
    /// the other is not refused as expired by the first: a cached state that looks idle is
    /// judged again on the stored one before `session-expired` is answered.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "two nodes share a PostgreSQL database"))
    func activeThroughAnotherNodeIsNotExpired() throws {
        // a's cached copy ends 3.6 s old, past the idle period; each gap is 1.2 s, with 1.8 s to
        // spare for a loaded machine's action through the other node.
        let a = try RetentionApp(retention: .seconds(3600), idle: .seconds(3))
        let b = try RetentionApp(retention: .seconds(3600), idle: .seconds(3), beside: a)
        let onA = SessionClient(sender: a.direct)
        let onB = SessionClient(sender: b.direct)
        let session = try onA.create(userId: "roaming")  // cached on a, as created
        for action in ["onboarding.showSecond", "back", "onboarding.showSecond"] {
            Thread.sleep(forTimeInterval: 1.2)
            try onB.apply(session, #"{"type":"\#(action)"}"#)
        }
        let response = try a.direct.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"back"}"#,
                                         headers: session.auth)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["version"] == 4)
    }

    /// Replay sees only whole logs: a session whose first entries retention removed is
    /// `skipped`, one whose log is whole is replayed as before. The log is cut below its newest
    /// old snapshot (see `LogSnapshots`), so the cut session acts past one first.
    @Test func replaySkipsSessionsWhoseLogWasCut() throws {
        let test = try RetentionApp(retention: .seconds(1), idle: .seconds(3600))
        let client = SessionClient(sender: test.direct)
        let cut = try client.create(userId: "cut")
        let old = LogSnapshots.interval + 1
        for step in 1...old { try client.apply(cut, step % 2 == 1 ? #"{"type":"onboarding.showSecond"}"# : #"{"type":"back"}"#) }
        Thread.sleep(forTimeInterval: 1.2)
        try client.apply(cut, #"{"type":"back"}"#)
        #expect(try test.app.retention.run().actions == LogSnapshots.interval - 1)
        let whole = try client.create(userId: "whole")
        try client.apply(whole, #"{"type":"onboarding.showSecond"}"#)
        let report = try test.direct.send("POST", "/v1/replays", body: "", headers: Self.admin).json
        #expect(report["totals"]["skipped"] == 1, "\(report)")
        #expect(report["totals"]["same"] == 1, "\(report)")
    }

    /// The experiment report counts from exposures and funnel rows that compaction leaves:
    /// the same report before and after the log is gone.
    @Test func experimentReportIsTheSameAfterCompaction() throws {
        let test = try RetentionApp(retention: .seconds(1), idle: .seconds(3600))
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: ExperimentReportTests.fiftyFifty, headers: Self.admin).status == 201)
        let client = SessionClient(sender: test.direct)
        for index in 0..<12 {
            let session = try client.create(userId: "report-\(index)")
            if index % 4 == 0 { continue }
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            if index % 3 == 0 { continue }
            try client.apply(session, #"{"type":"onboarding.completed"}"#)
        }
        let before = try test.direct.send("GET", "/v1/experiments/exp/report", headers: Self.admin)
        #expect(before.status == 200)
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try test.app.retention.run().actions > 0)
        let after = try test.direct.send("GET", "/v1/experiments/exp/report", headers: Self.admin)
        #expect(after.json["variants"] == before.json["variants"] as JSONValue)
        #expect((before.json["variants"].arrayValue ?? []).map { $0["sessions"].integerValue ?? 0 }.reduce(0, +) == 12)
    }

    /// Once expired for longer than the retention period, a session is removed: its id answers
    /// 404; its user and the user's state stay.
    @Test func expiredSessionsAreRemovedAfterTheRetentionPeriod() throws {
        let test = try RetentionApp(retention: .seconds(1), idle: .milliseconds(500))
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "gone")
        let idleOne = try client.create(userId: "gone-idle")  // cached, never asked for again
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"onboarding.completed"}"#)
        Thread.sleep(forTimeInterval: 0.7)
        Self.expectExpired(try client.state(session), "expired")
        Thread.sleep(forTimeInterval: 1.2)
        #expect(test.app.sessions.cache.contains(idleOne.id))
        let run = try test.app.retention.run()
        #expect(run.sessions == 2)
        #expect(!test.app.sessions.cache.contains(idleOne.id))
        #expect(try client.state(session).status == 404)
        let user = try test.direct.send("GET", "/v1/users/gone", headers: Self.admin)
        #expect(user.status == 200)
        #expect(user.json["state"]["onboarded"] == true)
        // A new session of the user starts at home, as before.
        #expect(try client.create(userId: "gone").state.features == ["home.first"])
        let metrics = try test.direct.send("GET", "/metrics").text
        #expect(metrics.contains("flowstack_retention_sessions_removed_total 2"))
        #expect(metrics.contains("flowstack_retention_actions_removed_total 2"))
        #expect(metrics.contains("flowstack_retention_last_run_seconds "))
    }

    /// The background runs do it alone, at their interval.
    @Test func backgroundRunsRemoveOldEntries() throws {
        let test = try RetentionApp(retention: .milliseconds(300), idle: .seconds(3600), interval: .milliseconds(100))
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "background")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        let deadline = Date().addingTimeInterval(5)
        while test.app.metrics.retention.actionsRemoved.load(ordering: .relaxed) < 1, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(test.app.metrics.retention.actionsRemoved.load(ordering: .relaxed) == 1)
        #expect(try client.state(session).json["version"] == 1)
    }
}

extension Application {
    /// Runs `body` with a sender through libmicrohttpd on an ephemeral port.
    func withLiveServerForRetention<T>(_ body: (SocketSender) throws -> T) throws -> T {
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, handler: handle)
        try server.start()
        defer { server.shutdown(gracePeriod: .seconds(1)) }
        return try body(SocketSender(port: server.port))
    }
}

// Support ending one session (issue 33) through the API, on the run's store (SQLite, or PostgreSQL
// with FLOWSTACK_TEST_DB_KIND=postgresql): `DELETE /v1/sessions/{id}` with an admin credential.
@testable import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Synchronization
import Testing
import TestSupport

struct SessionEndAPITests {
    static let admin = FlowAdminTests.admin

    /// The `session.end` entries of the audit log.
    static func endEntries(_ sender: some RequestSender) throws -> [JSONValue] {
        let log = try sender.send("GET", "/v1/audit?limit=1000", headers: admin).json
        return (log["entries"].arrayValue ?? []).filter { $0["action"] == "session.end" }
    }

    static func expectGone(_ response: Response, _ route: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 404, "\(route): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.headers["Content-Type"] == "application/problem+json", "\(route)", sourceLocation: sourceLocation)
        #expect(response.json["code"] == "not-found", "\(route): \(response.text)", sourceLocation: sourceLocation)
    }

    /// Through libmicrohttpd: the admin's DELETE answers 200 with whose session it was, the
    /// version it stood at and what went (its log, an Idempotency-Key, a stream ticket); then
    /// every route of that session answers 404 `not-found` to its token, its event stream ends
    /// with `deleted`, and the audit log has one `session.end` naming the session (not the
    /// user). The user's other session goes on, and their state (onboarded) stays.
    @Test func endingOneSessionLeavesTheUsersOtherSession() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let phone = try client.create(userId: "u-1")
            let tablet = try client.create(userId: "u-1")
            try client.apply(phone, #"{"type":"onboarding.showSecond"}"#)
            #expect(try client.act(phone, #"{"type":"onboarding.completed"}"#, headers: [("Idempotency-Key", "k-1")]).status == 200)
            #expect(try sender.send("POST", "/v1/sessions/\(phone.id)/events/ticket", headers: phone.auth).status == 201)
            let stream = try EventStreamClient(port: server.port, path: "/v1/sessions/\(phone.id)/events", headers: phone.auth)
            #expect(try stream.next()?.event == "state")

            let ended = try sender.send("DELETE", "/v1/sessions/\(phone.id)", headers: Self.admin)
            #expect(ended.status == 200, "\(ended.text)")
            #expect(ended.headers["Content-Type"] == "application/json")
            #expect(ended.headers["Cache-Control"] == "no-store")
            #expect(ended.json == [
                "sessionId": .string(phone.id), "userId": "u-1", "version": 2,
                "removed": ["sessions": 1, "actions": 2, "idempotencyKeys": 1, "streamTickets": 1],
            ])

            #expect(try stream.next()?.event == "deleted")
            for (method, path, body) in RetentionAPITests.routes(phone.id) {
                Self.expectGone(try sender.send(method, path, body: body, headers: phone.auth), "\(method) \(path)")
            }
            let events = try sender.send("GET", "/v1/sessions/\(phone.id)/events", headers: phone.auth)
            Self.expectGone(events, "GET events")

            #expect(try client.state(tablet).status == 200)
            #expect(try client.apply(tablet, #"{"type":"onboarding.showSecond"}"#)["top"]["feature"] == "onboarding.second")
            let user = try sender.send("GET", "/v1/users/u-1", headers: Self.admin)
            #expect(user.status == 200)
            #expect(user.json["state"]["onboarded"] == true, "the user's state is not the session's: \(user.text)")

            let entries = try Self.endEntries(sender)
            #expect(entries.count == 1)
            let entry = entries.first ?? .null
            #expect(entry["subject"] == .string(phone.id))
            #expect(entry["oldVersion"] == 2)
            #expect(entry["newVersion"] == .null)
            #expect(entry["credential"] == "admin")
            #expect(entry["detail"] == #"{"sessions":1,"actions":2,"idempotencyKeys":1,"streamTickets":1}"#)
            let audit = try sender.send("GET", "/v1/audit?limit=1000", headers: Self.admin).text
            #expect(!audit.contains("u-1"), "the entry names the session, not its user")
            #expect(!audit.contains(phone.token))
        }
    }

    /// An unknown id, a session already ended, or one its holder deleted is 404 `not-found`,
    /// and nothing more is audited; so is an id no session could have.
    @Test func endingTwiceOrAnUnknownIdIsNotFound() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "u-1")
        #expect(try test.direct.send("DELETE", "/v1/sessions/\(session.id)", headers: Self.admin).status == 200)
        Self.expectGone(try test.direct.send("DELETE", "/v1/sessions/\(session.id)", headers: Self.admin), "ended twice")
        Self.expectGone(try test.direct.send("DELETE", "/v1/sessions/s_unknown", headers: Self.admin), "unknown id")
        Self.expectGone(try test.direct.send("DELETE", "/v1/sessions/" + String(repeating: "x", count: 65), headers: Self.admin), "too long")
        let deleted = try client.create(userId: "u-1")
        #expect(try test.direct.send("DELETE", "/v1/sessions/\(deleted.id)", headers: deleted.auth).status == 204)
        Self.expectGone(try test.direct.send("DELETE", "/v1/sessions/\(deleted.id)", headers: Self.admin), "deleted by its holder")
        #expect(try Self.endEntries(test.direct).count == 1)
    }

    /// Without a credential 401; with a token that is neither the admin's nor the session's 401;
    /// with an admin key below `edit` 403 `insufficient-role`: the session stays. An `edit` key
    /// ends it, and the audit log names the key. The holder's own token still deletes it (204,
    /// not audited: it is not an admin change).
    @Test func credentials() throws {
        let test = try TestApp()
        let sender = test.direct
        let client = SessionClient(sender: sender)
        let session = try client.create(userId: "u-1")
        let path = "/v1/sessions/\(session.id)"

        let none = try sender.send("DELETE", path)
        #expect(none.status == 401)
        #expect(none.headers["WWW-Authenticate"] == "Bearer")
        #expect(none.json["code"] == "unauthorized")
        let wrong = try sender.send("DELETE", path, headers: AdminKeyAPITests.bearer("not-a-token"))
        #expect(wrong.status == 401)
        #expect(wrong.json["code"] == "unauthorized")
        let reader = try #require(AdminKeyAPITests.make(sender, "dashboard", "read")["key"].stringValue)
        let refused = try sender.send("DELETE", path, headers: AdminKeyAPITests.bearer(reader))
        #expect(refused.status == 403)
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        #expect(refused.json["code"] == "insufficient-role")
        #expect(refused.json["requiredRole"] == "edit")
        #expect(try client.state(session).status == 200, "refused requests leave the session")
        #expect(try Self.endEntries(sender).isEmpty)

        let support = try #require(AdminKeyAPITests.make(sender, "support", "edit")["key"].stringValue)
        #expect(try sender.send("DELETE", path, headers: AdminKeyAPITests.bearer(support)).status == 200)
        #expect(try Self.endEntries(sender).map(\.["credential"]) == ["key:support"])
        Self.expectGone(try client.state(session), "after the end")

        let own = try client.create(userId: "u-2")
        let deleted = try sender.send("DELETE", "/v1/sessions/\(own.id)", headers: own.auth)
        #expect(deleted.status == 204)
        #expect(deleted.body.isEmpty)
        #expect(try Self.endEntries(sender).count == 1, "a holder's delete is not audited")
    }

    /// What an app does at its next launch (FlowSession.start): it reads its kept session with
    /// the kept token; 404 is one of the answers it takes for "the session is gone", so it
    /// starts a new session for the same user, which starts where the user stands (home, once
    /// onboarded in the ended session).
    @Test func theClientStartsANewSession() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let kept = try client.create(userId: "u-1")
        try client.apply(kept, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(kept, #"{"type":"onboarding.completed"}"#)
        #expect(try test.direct.send("DELETE", "/v1/sessions/\(kept.id)", headers: Self.admin).status == 200)

        let resumed = try test.direct.send("GET", "/v1/sessions/\(kept.id)?predict=true", headers: kept.auth)
        Self.expectGone(resumed, "the kept session at launch")
        let tap = try client.act(kept, #"{"type":"home.selectTab","params":{"index":1}}"#,
                                 headers: [("If-Match", "\"2\""), ("Idempotency-Key", "tap-1")])
        Self.expectGone(tap, "a tap queued before the end")
        let fresh = try client.create(userId: "u-1")
        #expect(fresh.id != kept.id)
        #expect(fresh.state["top"]["feature"] == "home.first")
        #expect(try client.state(fresh).status == 200)
    }

    /// A session idle past `--session-idle` answers its holder 401 `session-expired`; support
    /// can still end it (the admin credential does not go through the session's token).
    @Test func endsAnExpiredSession() throws {
        let test = try RetentionApp(retention: .seconds(3600), idle: .milliseconds(300))
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "u-1")
        Thread.sleep(forTimeInterval: 0.5)
        RetentionAPITests.expectExpired(try client.state(session), "GET state")
        let ended = try test.direct.send("DELETE", "/v1/sessions/\(session.id)", headers: Self.admin)
        #expect(ended.status == 200, "\(ended.text)")
        #expect(ended.json["version"] == 0)
        Self.expectGone(try client.state(session), "after the end")
    }

    /// A real race through the socket: two clients post actions on a session while support
    /// ends it. Every answer is 200, 409 or 422 (committed or refused before the end) or 404,
    /// never a 5xx and never a 200 after a 404; and the end counts exactly the actions that
    /// were answered 200: each acknowledged action was in the log it removed, nothing later was
    /// written.
    @Test func actionsWhileTheSessionEnds() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "u-1")
            let applied = Atomic<Int>(0)
            let problems = Mutex<[String]>([])
            let started = DispatchSemaphore(value: 0)
            let ended = Mutex<Response?>(nil)
            onThreads(3) { worker in
                if worker == 2 {
                    for _ in 0..<2 { started.wait() }
                    Thread.sleep(forTimeInterval: 0.05)
                    ended.withLock { $0 = try? sender.send("DELETE", "/v1/sessions/\(session.id)", headers: Self.admin) }
                    return
                }
                var gone = false
                var signalled = false
                defer { if !signalled { started.signal() } }
                for step in 0..<400 {
                    if step == 3 {
                        started.signal()
                        signalled = true
                    }
                    let body = step % 2 == 0 ? #"{"type":"onboarding.showSecond"}"# : #"{"type":"onboarding.returnToFirst"}"#
                    let status = (try? client.act(session, body).status) ?? -1
                    switch status {
                    case 200 where !gone:
                        applied.add(1, ordering: .relaxed)
                    case 409 where !gone, 422 where !gone:
                        continue
                    case 404:
                        gone = true
                        if ended.withLock({ $0 != nil }) { return }
                    default:
                        problems.withLock { $0.append("worker \(worker) step \(step): \(status)") }
                        return
                    }
                }
                problems.withLock { $0.append("worker \(worker) never saw the end") }
            }
            let answer = try #require(ended.withLock { $0 })
            #expect(answer.status == 200, "\(answer.text)")
            #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 })")
            let count = applied.load(ordering: .relaxed)
            #expect(count > 0)
            #expect(answer.json["removed"]["actions"].integerValue == count)
            #expect(answer.json["version"].integerValue == count)
            Self.expectGone(try client.state(session), "after the end")
            #expect(try test.store.session(id: session.id) == nil)
            #expect(try test.store.actions(sessionId: session.id, after: 0, limit: 10).isEmpty)
        }
    }

    /// Two nodes on one PostgreSQL: a session cached on the other node (acted on there, its
    /// stream open there) answers 404 to reads and actions there once support ends it through
    /// this one, and its stream there ends with `deleted`.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "two nodes share a PostgreSQL database"))
    func endingSeenByTheOtherNode() throws {
        let (a, b) = try MultiNodeTests.nodes()
        try a.withServer { serverA in
            try b.withServer { serverB in
                let onA = SessionClient(sender: SocketSender(port: serverA.port))
                let onB = SessionClient(sender: SocketSender(port: serverB.port))
                let session = try onA.create(userId: "u-1")
                let other = try onA.create(userId: "u-1")
                try onB.apply(session, #"{"type":"onboarding.showSecond"}"#)
                #expect(try onB.state(session).status == 200)
                let stream = try EventStreamClient(port: serverB.port, path: "/v1/sessions/\(session.id)/events", headers: session.auth)
                #expect(try stream.next()?.id == "1")
                let ended = try onA.sender.send("DELETE", "/v1/sessions/\(session.id)", headers: Self.admin)
                #expect(ended.json["removed"]["actions"] == 1, "\(ended.text)")
                // Cached on B: applied there, then refused by the commit (its session row is gone).
                Self.expectGone(try onB.act(session, #"{"type":"onboarding.completed"}"#), "act on B")
                Self.expectGone(try onB.state(session), "read on B")
                #expect(try stream.next()?.event == "deleted")
                #expect(try onB.state(other).status == 200)
            }
        }
    }
}

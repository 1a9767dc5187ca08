// Erasure and export of one user's data through the API: over a real socket, with actions in
// flight, on two nodes of one PostgreSQL.
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

struct UserDataAPITests {
    static let admin = FlowAdminTests.admin
    /// SHA-256 of "u-1" (`printf u-1 | sha256sum`).
    static let u1Subject = "sha256:a24a7f55f278dd49fb1f99c5507800cb198a5bfe10fe2126cd0b25672152b0da"

    /// Sessions and variant totals of the report of experiment `exp`.
    static func reportTotals(_ sender: some RequestSender) throws -> (sessions: Int, onboarded: Int) {
        let report = try sender.send("GET", "/v1/experiments/exp/report", headers: admin).json
        let variants = report["variants"].arrayValue ?? []
        return (variants.reduce(0) { $0 + ($1["sessions"].integerValue ?? 0) },
                variants.reduce(0) { $0 + ($1["onboarded"].integerValue ?? 0) })
    }

    /// Through libmicrohttpd: the export lists everything about the user; the erasure answers
    /// its counts; then the user's session tokens open nothing (404), their event stream ends
    /// with `deleted`, the report no longer counts them, the audit log records the erasure by
    /// the id's hash and nowhere names the id, the export is 404, and erasing again answers zeros.
    @Test func erasureThroughASocket() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            #expect(try sender.send("PUT", "/v1/experiments/exp", body: ExperimentReportTests.fiftyFifty, headers: Self.admin).status == 201)
            let first = try client.create(userId: "u-1")
            let second = try client.create(userId: "u-1")
            try client.apply(first, #"{"type":"onboarding.showSecond"}"#)
            try client.apply(first, #"{"type":"onboarding.completed"}"#)
            let other = try client.create(userId: "u-2")
            try client.apply(other, #"{"type":"onboarding.showSecond"}"#)
            try client.apply(other, #"{"type":"onboarding.completed"}"#)
            let stream = try EventStreamClient(port: server.port, path: "/v1/sessions/\(second.id)/events", headers: second.auth)
            #expect(try stream.next()?.event == "state")

            let export = try sender.send("GET", "/v1/users/u-1/export", headers: Self.admin)
            #expect(export.status == 200, "\(export.text)")
            #expect(export.headers["Cache-Control"] == "no-store")
            let document = export.json
            #expect(document["userId"] == "u-1")
            #expect(document["user"]["state"]["onboarded"] == true)
            #expect(Set((document["sessions"].arrayValue ?? []).compactMap { $0["id"].stringValue }) == [first.id, second.id])
            let exported = (document["sessions"].arrayValue ?? []).first { $0["id"].stringValue == first.id } ?? .null
            #expect(exported["version"] == 2)
            #expect(exported["state"]["top"]["feature"] == "home.first")
            #expect((exported["actions"].arrayValue ?? []).compactMap { $0["type"].stringValue } == ["onboarding.showSecond", "onboarding.completed"])
            #expect(document["exposures"].arrayValue?.count == 2)
            #expect(document["truncated"] == false)
            #expect(!export.text.contains(first.token), "no token in an export")
            let before = try Self.reportTotals(sender)

            let erased = try sender.send("DELETE", "/v1/users/u-1", headers: Self.admin)
            #expect(erased.status == 200, "\(erased.text)")
            #expect(erased.json["auditSubject"].stringValue == Self.u1Subject)
            #expect(erased.json["erased"]["users"] == 1)
            #expect(erased.json["erased"]["sessions"] == 2)
            #expect(erased.json["erased"]["actions"] == 2)
            #expect(erased.json["erased"]["exposures"] == 2)

            for session in [first, second] {
                #expect(try client.state(session).status == 404)
                #expect(try client.act(session, #"{"type":"home.selectTab","params":{"index":1}}"#).status == 404)
            }
            #expect(try stream.next()?.event == "deleted")
            #expect(try client.state(other).status == 200)
            let after = try Self.reportTotals(sender)
            #expect(after.sessions == before.sessions - 2)
            #expect(after.onboarded == before.onboarded - 1)

            let audit = try sender.send("GET", "/v1/audit", headers: Self.admin)
            #expect(!audit.text.contains("u-1"), "the audit log names the user only by hash")
            let entry = (audit.json["entries"].arrayValue ?? []).first { $0["action"] == "user.erase" } ?? .null
            #expect(entry["subject"].stringValue == Self.u1Subject)
            #expect(entry["credential"] == "admin")

            #expect(try sender.send("GET", "/v1/users/u-1/export", headers: Self.admin).status == 404)
            #expect(try sender.send("GET", "/v1/users/u-1", headers: Self.admin).status == 404)
            let again = try sender.send("DELETE", "/v1/users/u-1", headers: Self.admin)
            #expect(again.status == 200)
            #expect((again.json["erased"].objectValue ?? JSONObject()).allSatisfy { $0.value == 0 }, "\(again.text)")
            // A new session for the same id starts afresh: at onboarding, with nothing of before.
            #expect(try client.create(userId: "u-1").state["top"]["feature"] == "onboarding.first")
        }
    }

    /// Both routes need the `admin` role (403 below it, 401 without a credential); an id no
    /// session could have (a control character, over 128 characters) is 400; a user with
    /// nothing stored has nothing to export (404) and erasing them answers zeros.
    @Test func rolesAndIds() throws {
        let test = try TestApp()
        let sender = test.direct
        _ = try SessionClient(sender: sender).create(userId: "u-1")
        for role in ["read", "edit", "publish"] {
            let key = try #require(AdminKeyAPITests.make(sender, "k-\(role)", role)["key"].stringValue)
            for (method, path) in [("DELETE", "/v1/users/u-1"), ("GET", "/v1/users/u-1/export")] {
                let response = try sender.send(method, path, headers: AdminKeyAPITests.bearer(key))
                #expect(response.status == 403, "\(role) \(method) \(path)")
                #expect(response.json["requiredRole"] == "admin")
            }
        }
        #expect(try sender.send("DELETE", "/v1/users/u-1").status == 401)
        #expect(try sender.send("GET", "/v1/users/u-1/export").status == 401)
        for bad in ["a\u{1}b", String(repeating: "x", count: 129)] {
            for (method, suffix) in [("DELETE", ""), ("GET", "/export")] {
                var request = Request(method: method, path: "/v1/users/\(bad)\(suffix)")
                for (name, value) in Self.admin { request.headers.add(name: name, value: value) }
                let response = try sender.send(request)
                #expect(response.status == 400, "\(method) \(bad.prefix(8)): \(response.text)")
                #expect(response.json["code"] == "malformed-request")
            }
        }
        #expect(try sender.send("GET", "/v1/users/nobody/export", headers: Self.admin).status == 404)
        let nobody = try sender.send("DELETE", "/v1/users/nobody", headers: Self.admin)
        #expect(nobody.status == 200)
        #expect(nobody.json["erased"]["sessions"] == 0)
        #expect(try sender.send("GET", "/v1/users/u-1", headers: Self.admin).status == 200, "another user is untouched")
    }

    /// A real race through the socket: clients post actions on the user's sessions while the
    /// user is erased. Every answer is 200 (committed before the erasure) or 404, never a 5xx,
    /// and a session never answers 200 after its first 404; once the erasure is answered every
    /// session is 404 and nothing of the user is stored, not even their state re-created by a
    /// late commit.
    @Test func actionsDuringErasure() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let sessions = try (0..<4).map { _ in try client.create(userId: "u-1") }
            let problems = Mutex<[String]>([])
            let started = DispatchSemaphore(value: 0)
            let erasedStatus = Atomic<Int>(0)
            onThreads(sessions.count + 1) { worker in
                if worker == sessions.count {
                    for _ in sessions { started.wait() }
                    Thread.sleep(forTimeInterval: 0.05)
                    erasedStatus.store((try? sender.send("DELETE", "/v1/users/u-1", headers: Self.admin).status) ?? -1, ordering: .relaxed)
                    return
                }
                let session = sessions[worker]
                var notFound = false
                var signalled = false
                defer { if !signalled { started.signal() } }
                for step in 0..<400 {
                    if step == 3 {
                        started.signal()
                        signalled = true
                    }
                    let body = step % 3 == 0 ? #"{"type":"onboarding.showSecond"}"# : #"{"type":"onboarding.returnToFirst"}"#
                    let status = (try? client.act(session, body).status) ?? -1
                    switch status {
                    case 200 where !notFound, 409 where !notFound, 422 where !notFound: continue
                    case 404:
                        notFound = true
                        if step > 0, erasedStatus.load(ordering: .relaxed) == 200 { return }
                    default:
                        problems.withLock { $0.append("\(session.id) step \(step): \(status)") }
                        return
                    }
                }
                if !notFound { problems.withLock { $0.append("\(session.id) never saw the erasure") } }
            }
            #expect(erasedStatus.load(ordering: .relaxed) == 200)
            #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 })")
            for session in sessions { #expect(try client.state(session).status == 404) }
            #expect(try test.store.user(id: "u-1") == nil)
            #expect(try test.store.exportUser(id: "u-1", limits: UserExportLimits()).isEmpty)
        }
    }

    /// A commit that succeeded before the erasure but whose turn ends after it puts its state
    /// back into the session's slot and its user change into the user cache: the eviction
    /// queued first in the slot empties both right after, so no read answers an erased session
    /// and a new session does not start from the erased user's state.
    @Test func evictionOutlivesACommitInFlight() throws {
        let test = try TestApp()
        let service = test.app.sessions
        let client = SessionClient(sender: test.direct)
        let created = try client.create(userId: "u-1")
        let slot = try #require(service.cache.pinIfCached(created.id))
        // A turn whose commit is in flight (the request stands for an action being committed).
        let inFlight = TurnRequest(job: .delete, id: created.id, token: nil, slot: slot, answer: DeferredResponse())
        let stale = try #require(slot.state.withLock { contents -> LiveSession? in
            _ = contents.turn.arrived(inFlight)
            _ = contents.turn.applied(commit: true)
            return contents.session
        })
        _ = try test.store.eraseUser(id: "u-1", auditSubject: "sha256:x", audit: AuditStamp(credential: "admin"))
        service.evictErased(userId: "u-1", sessionIds: [created.id])
        #expect(slot.state.withLock { $0.session == nil }, "dropped at once")
        // Meanwhile a read of the user caches the erased state ({}), and the late commit's
        // success applies its change to it, then ends its turn with its state (see `committed`).
        _ = try service.users.held("u-1", store: test.store)
        service.users.apply([(key: "onboarded", value: .bool(true))], to: "u-1")
        var afters: [@Sendable () -> Void] = []
        slot.state.withLock { contents in
            contents.session = stale
            service.drive(contents.turn.committed(.success), slot: slot, context: .writer, &contents, &afters)
        }
        for after in afters { after() }
        service.cache.unpin(slot)
        #expect(slot.state.withLock { $0.session == nil })
        #expect(!service.cache.contains(created.id))
        #expect(try client.state(created).status == 404)
        #expect(try service.users.state(of: "u-1", store: test.store).isEmpty)
    }

    /// Two nodes on one PostgreSQL: a session cached on the other node answers 404 to reads
    /// and actions there once the user is erased through this one, and its stream there ends
    /// with `deleted`.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "two nodes share a PostgreSQL database"))
    func erasureSeenByTheOtherNode() throws {
        let (a, b) = try MultiNodeTests.nodes()
        try a.withServer { serverA in
            try b.withServer { serverB in
                let onA = SessionClient(sender: SocketSender(port: serverA.port))
                let onB = SessionClient(sender: SocketSender(port: serverB.port))
                let session = try onA.create(userId: "u-1")
                try onB.apply(session, #"{"type":"onboarding.showSecond"}"#)
                #expect(try onB.state(session).status == 200)
                let stream = try EventStreamClient(port: serverB.port, path: "/v1/sessions/\(session.id)/events", headers: session.auth)
                #expect(try stream.next()?.id == "1")
                #expect(try onA.sender.send("DELETE", "/v1/users/u-1", headers: Self.admin).json["erased"]["sessions"] == 1)
                // Cached on B: applied there, then refused by the commit (its session row is gone).
                #expect(try onB.act(session, #"{"type":"onboarding.completed"}"#).status == 404)
                #expect(try onB.state(session).status == 404)
                #expect(try stream.next()?.event == "deleted")
                #expect(try b.store.user(id: "u-1") == nil)
            }
        }
    }
}

// The session API end to end: the sample-app walk, auth, versions, idempotency, concurrency,
// restarts, the action log and the admin user routes, on a real SQLite file.
import FlowEngine
import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import Synchronization
import SQLiteStore
import StoreTestSupport
import Testing

struct SessionAPITests {
    enum Transport: String, CaseIterable, CustomTestStringConvertible {
        case direct, socket
        var testDescription: String { rawValue }
    }

    /// Runs `body` with a client that calls the handler directly or goes through libmicrohttpd.
    static func withClient<T>(_ test: TestApp, _ transport: Transport, _ body: (SessionClient) throws -> T) throws -> T {
        switch transport {
        case .direct: return try body(SessionClient(sender: test.direct))
        case .socket: return try test.withLiveServer { try body(SessionClient(sender: $0)) }
        }
    }

    /// A new user walks onboarding to home, opens and closes the modal, and their next session starts at home.
    @Test(arguments: Transport.allCases)
    func sampleAppWalk(transport: Transport) throws {
        let test = try TestApp()
        try Self.withClient(test, transport) { client in
            let session = try client.create(userId: "walker")
            #expect(session.state.features == ["onboarding.first"])
            #expect(session.state["version"] == 0)
            let first = session.state["top"]["id"].stringValue ?? ""
            var state = try client.apply(session, #"{"type":"onboarding.showSecond","from":"\#(first)"}"#)
            #expect(state.features == ["onboarding.first", "onboarding.second"])
            #expect(state["transition"]["type"] == "push")
            #expect(state["version"] == 1)
            state = try client.apply(session, #"{"type":"onboarding.completed","from":"\#(state["top"]["id"].stringValue ?? "")"}"#)
            #expect(state.features == ["home.first"])
            #expect(state["handledBy"] == "app")
            #expect(state["transition"]["type"] == "replaceRoot")
            #expect(state["transition"]["style"] == "crossFade")
            state = try client.apply(session, #"{"type":"home.selectTab","params":{"index":1}}"#)
            #expect(state.features == ["home.second"])
            state = try client.apply(session, #"{"type":"home.presentModal","params":{"content":"hello"}}"#)
            #expect(state.features == ["home.second", "modal"])
            #expect(state["top"]["params"]["content"] == "hello")
            #expect(state["root"]["presented"]["style"] == "fullScreen")
            state = try client.apply(session, #"{"type":"modal.dismiss"}"#)
            #expect(state.features == ["home.second"])
            #expect(state["version"] == 5)
            let fetched = try client.state(session)
            #expect(fetched.status == 200)
            #expect(fetched.headers["ETag"] == "\"5\"")
            #expect(fetched.json == state)

            let next = try client.create(userId: "walker")
            #expect(next.state.features == ["home.first"])
        }
    }

    /// A read answers with the document of the latest committed version: the one its action
    /// answered, and the same again once the session has left the cache and been read back.
    @Test func readsShowEachCommittedVersion() throws {
        let test = try TestApp(cacheCapacity: 1)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "reader")
        #expect(try client.state(session).json == session.state)
        for (index, body) in [#"{"type":"onboarding.showSecond"}"#, #"{"type":"onboarding.completed"}"#,
                              #"{"type":"home.selectTab","params":{"index":1}}"#].enumerated() {
            let answered = try client.apply(session, body)
            let read = try client.state(session)
            #expect(read.headers["ETag"] == "\"\(index + 1)\"")
            #expect(read.json == answered)
            _ = try client.create(userId: "evictor-\(index)")  // the only slot goes to another session
            #expect(try client.state(session).json == answered)
            let notModified = try client.sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth + [("If-None-Match", "\"\(index + 1)\"")])
            #expect(notModified.status == 304)
        }
    }

    /// The interactive swipe back: cancelled leaves the stack, finished pops; other actions wait meanwhile.
    @Test func interactiveTransitionOverHTTP() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "swiper")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        var state = try client.apply(session, #"{"type":"onboarding.returnToFirst","interactive":true}"#)
        #expect(state["interaction"]["action"] == "onboarding.returnToFirst")
        #expect(state.features == ["onboarding.first", "onboarding.second"])
        let blocked = try client.act(session, #"{"type":"onboarding.completed"}"#)
        #expect(blocked.status == 409)
        #expect(blocked.json["code"] == "interaction-pending")
        try client.apply(session, #"{"type":"interaction.update","params":{"progress":0.4}}"#)
        state = try client.apply(session, #"{"type":"interaction.end","params":{"progress":0.4,"velocity":100}}"#)
        #expect(state["interaction"] == .null)
        #expect(state.features == ["onboarding.first", "onboarding.second"])
        try client.apply(session, #"{"type":"onboarding.returnToFirst","interactive":true}"#)
        state = try client.apply(session, #"{"type":"interaction.end","params":{"progress":0.2,"velocity":900}}"#)
        #expect(state.features == ["onboarding.first"])
        #expect(state["transition"]["interactive"] == true)
        #expect(try client.act(session, #"{"type":"interaction.cancel"}"#).status == 409)
    }

    /// Engine refusals map to their statuses, as problem+json with a code: stale from 409, unhandled 422 with the chain, bad params 400.
    @Test func refusalsAreProblems() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "refused")
        let first = session.state["top"]["id"].stringValue ?? ""
        try client.apply(session, #"{"type":"onboarding.showSecond","from":"\#(first)"}"#)
        let stale = try client.act(session, #"{"type":"onboarding.showSecond","from":"\#(first)"}"#)
        #expect(stale.status == 409)
        #expect(stale.headers["Content-Type"] == "application/problem+json")
        #expect(stale.json["code"] == "stale-source")
        let unhandled = try client.act(session, #"{"type":"nobody.handles"}"#)
        #expect(unhandled.status == 422)
        #expect(unhandled.json["chain"] == ["onboarding", "app"])
        let badType = try client.act(session, #"{"type":42}"#)
        #expect(badType.status == 400)
        #expect(badType.json["errors"][0]["pointer"] == "/type")
        #expect(try client.act(session, #"{"type":"back","extra":1}"#).status == 400)
        #expect(try client.act(session, "{not json").status == 400)
        #expect(try client.act(session, "").status == 400)
        #expect(try client.act(session, "[]").status == 400)
        #expect(try client.state(session).json["version"] == 1, "no refusal changed the version")
    }

    /// A session route needs the session's own token: none, a wrong one, or another session's is 401.
    @Test(arguments: Transport.allCases)
    func tokensOpenOnlyTheirSession(transport: Transport) throws {
        let test = try TestApp()
        try Self.withClient(test, transport) { client in
            let mine = try client.create(userId: "a")
            let theirs = try client.create(userId: "b")
            let path = "/v1/sessions/\(mine.id)"
            // Its own token opened it first, so it is kept (`OpenedToken`): near misses of it
            // are compared with the kept one and then hashed, and refused both ways.
            #expect(try client.state(mine).status == 200)
            let last = mine.token.last == "A" ? "B" : "A"
            let nearMisses = [String(mine.token.dropLast()) + last, mine.token + "x", String(mine.token.dropLast()),
                              mine.token.uppercased() == mine.token ? mine.token.lowercased() : mine.token.uppercased()]
            let cases: [[(String, String)]] = [[], [("Authorization", "Bearer nope")], theirs.auth,
                                              [("Authorization", "Basic abc")], [("Authorization", "Bearer")]]
                + nearMisses.map { [("Authorization", "Bearer \($0)")] }
            for headers in cases {
                let read = try client.sender.send("GET", path, headers: headers)
                #expect(read.status == 401)
                #expect(read.headers["WWW-Authenticate"] == "Bearer")
                #expect(try client.sender.send("POST", path + "/actions", body: #"{"type":"back"}"#, headers: headers).status == 401)
                #expect(try client.sender.send("DELETE", path, headers: headers).status == 401)
                #expect(try client.sender.send("GET", path + "/actions", headers: headers).status == 401)
            }
            #expect(try client.state(mine).status == 200)
            #expect(try client.sender.send("GET", "/v1/sessions/s_unknown", headers: mine.auth).status == 404)
        }
    }

    /// A session read back from the database (evicted from a cache of one) keeps no token until
    /// a request opens it: near misses of its token are refused before and after the right one,
    /// on reads and actions, which then opens it again.
    @Test func aReloadedSessionKeepsNoTokenUntilOpened() throws {
        let test = try TestApp(cacheCapacity: 1)
        let client = SessionClient(sender: test.direct)
        let mine = try client.create(userId: "a")
        #expect(try client.state(mine).status == 200)
        _ = try client.create(userId: "b")  // evicts mine, and the token it kept
        let path = "/v1/sessions/\(mine.id)"
        let last = mine.token.last == "A" ? "B" : "A"
        let nearMisses = [String(mine.token.dropLast()) + last, mine.token + "x", String(mine.token.dropLast())]
        for round in 0..<2 {
            for token in nearMisses {
                let headers = [("Authorization", "Bearer \(token)")]
                #expect(try client.sender.send("GET", path, headers: headers).status == 401, "round \(round)")
                #expect(try client.sender.send("POST", path + "/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                               headers: headers).status == 401, "round \(round)")
            }
            #expect(try client.state(mine).status == 200)
        }
        #expect(try client.act(mine, #"{"type":"onboarding.showSecond"}"#).status == 200)
        #expect(try client.state(mine).json["version"] == 1, "no refused action applied")
    }

    /// If-Match with another version is 412 and changes nothing; the current version applies.
    @Test func ifMatchGuardsVersions() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "matcher")
        let stale = try client.act(session, #"{"type":"onboarding.showSecond"}"#, headers: [("If-Match", "\"7\"")])
        #expect(stale.status == 412)
        #expect(stale.json["currentVersion"] == 0)
        #expect(try client.act(session, #"{"type":"onboarding.showSecond"}"#, headers: [("If-Match", "nonsense")]).status == 400)
        let applied = try client.act(session, #"{"type":"onboarding.showSecond"}"#, headers: [("If-Match", "\"0\"")])
        #expect(applied.status == 200)
        #expect(applied.headers["ETag"] == "\"1\"")
        let notModified = try client.sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth + [("If-None-Match", "\"1\"")])
        #expect(notModified.status == 304)
    }

    /// A 412 names the tags the client sent, also those that are no version of ours (another
    /// server's, or obs-text), not a placeholder.
    @Test func ifMatchProblemShowsTheTagsSent() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "tagger")
        for tag in ["\"abc\"", "W/\"0\", \"-2\"", "\"\u{FFFD}\""] {
            let stale = try client.act(session, #"{"type":"onboarding.showSecond"}"#, headers: [("If-Match", tag)])
            #expect(stale.status == 412)
            #expect(stale.json["detail"].stringValue?.hasPrefix("If-Match asks for version \(tag) but") == true,
                    "\(stale.text)")
        }
    }

    /// An Idempotency-Key replays the stored answer without applying twice; another body under it is 422.
    @Test func idempotencyKeyReplays() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "retrier")
        let body = #"{"type":"onboarding.showSecond"}"#
        let first = try client.act(session, body, headers: [("Idempotency-Key", "tap-1")])
        let again = try client.act(session, body, headers: [("Idempotency-Key", "tap-1")])
        #expect(first.status == 200)
        #expect(again.status == 200)
        #expect(again.body == first.body)
        #expect(again.headers["Idempotent-Replayed"] == "true")
        #expect(try client.state(session).json["version"] == 1)
        let other = try client.act(session, #"{"type":"back"}"#, headers: [("Idempotency-Key", "tap-1")])
        #expect(other.status == 422)
        let log = try client.sender.send("GET", "/v1/sessions/\(session.id)/actions", headers: session.auth).json
        #expect(log["actions"].arrayValue?.count == 1)
    }

    /// 40 concurrent actions on one session through a real socket give contiguous versions and a complete log.
    @Test func concurrentActionsOnOneSession() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "busy")
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            try client.apply(session, #"{"type":"onboarding.completed"}"#)
            let versions = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 40) { index in
                let response = try? client.act(session, #"{"type":"home.selectTab","params":{"index":\#(index % 2)}}"#)
                if response?.status == 200, let version = response?.json["version"].integerValue {
                    versions.withLock { $0.append(version) }
                }
            }
            #expect(versions.withLock { $0.sorted() } == Array(3...42))
            let log = try sender.send("GET", "/v1/sessions/\(session.id)/actions?limit=1000", headers: session.auth).json
            #expect(log["actions"].arrayValue?.compactMap { $0["version"].integerValue } == Array(1...42))
            #expect(try client.state(session).json["version"] == 42)
        }
    }

    /// Work on one session takes turns while a commit is in flight: actions and a delete posted
    /// together through the server are answered in an order that is a serial history (versions
    /// contiguous up to the delete, 404 after it), and each answer is acknowledged only with its
    /// log entry committed.
    @Test func queuedWorkOnOneSessionTakesTurns() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "queued")
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            try client.apply(session, #"{"type":"onboarding.completed"}"#)
            let outcomes = Mutex<[(status: Int, version: Int?)]>([])
            let group = DispatchGroup()
            for index in 0..<31 {
                group.enter()
                Thread.detachNewThread {
                    let response: Response?
                    if index == 15 {
                        response = try? sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth)
                    } else {
                        response = try? client.act(session, #"{"type":"home.selectTab","params":{"index":\#(index % 2)}}"#)
                    }
                    outcomes.withLock { $0.append((response?.status ?? 0, response?.json["version"].integerValue)) }
                    group.leave()
                }
            }
            group.wait()
            let all = outcomes.withLock { $0 }
            #expect(all.count == 31)
            #expect(all.filter { $0.status == 204 }.count == 1)
            let applied = all.filter { $0.status == 200 }.compactMap(\.version).sorted()
            #expect(applied == Array(applied.isEmpty ? [] : Array(3...(2 + applied.count))))
            #expect(all.filter { $0.status == 404 }.count == 30 - applied.count)
            #expect(try client.state(session).status == 404)
        }
        #expect(try test.store.actions(sessionId: "none", after: 0, limit: 1).isEmpty)
    }

    /// Sessions on different users' sessions proceed in parallel and each stays consistent.
    @Test func concurrentSessionsStayApart() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let sessions = try (0..<8).map { try client.create(userId: "p\($0)") }
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            for _ in 0..<10 {
                _ = try? client.act(sessions[index], #"{"type":"onboarding.showSecond"}"#)
                _ = try? client.act(sessions[index], #"{"type":"back"}"#)
            }
        }
        for session in sessions {
            let state = try client.state(session).json
            #expect(state["version"] == 20)
            #expect(state.features == ["onboarding.first"])
        }
    }

    /// After a restart on the same file every session reads back byte for byte, and goes on.
    @Test func sessionsSurviveRestart() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        var before: [(CreatedSession, [UInt8])] = []
        for index in 0..<5 {
            let session = try client.create(userId: "r\(index)")
            for _ in 0..<index { try client.apply(session, #"{"type":"onboarding.showSecond"}"#); try client.apply(session, #"{"type":"back"}"#) }
            if index == 4 { try client.apply(session, #"{"type":"onboarding.showSecond"}"#); try client.apply(session, #"{"type":"onboarding.completed"}"#) }
            before.append((session, try client.state(session).body))
        }
        let reopened = try test.reopened()
        defer { withExtendedLifetime(reopened) {} }
        let again = SessionClient(sender: reopened.direct)
        for (session, body) in before {
            let response = try again.state(session)
            #expect(response.status == 200)
            #expect(response.body == body)
        }
        let onboarded = before[4].0
        #expect(try again.apply(onboarded, #"{"type":"home.selectTab","params":{"index":1}}"#).features == ["home.second"])
        #expect(try again.create(userId: "r4").state.features == ["home.first"])
    }

    /// A session whose head row is lost and whose log cannot rebuild it (a damaged file: its
    /// newest log entry, not a snapshot, has no tree to stand in, and its first entry lost the
    /// user's state it was judged with) is answered with a 500 that says so, not with the older
    /// state of its row; other sessions are served as usual.
    @Test(.enabled(if: TestStoreKind.isSQLite, "damages the SQLite file's log"))
    func damagedNewestEntryIsReportedNotRolledBack() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let damaged = try client.create(userId: "d1")
        let healthy = try client.create(userId: "d2")
        for session in [damaged, healthy] { try client.apply(session, #"{"type":"onboarding.showSecond"}"#) }
        let healthyBefore = try client.state(healthy).body
        let sqlite = try #require(test.store as? SQLiteStore)
        try sqlite.pool.write { db in
            try db.execute(sql: "DELETE FROM session_heads WHERE session_id = ?", arguments: [damaged.id])
            try db.execute(sql: "UPDATE actions SET user_state = NULL WHERE session_id = ?", arguments: [damaged.id])
        }
        let reopened = try test.reopened()
        defer { withExtendedLifetime(reopened) {} }
        let again = SessionClient(sender: reopened.direct)
        let refused = try again.state(damaged)
        #expect(refused.status == 500)
        #expect(refused.text.contains("stored in a form this server cannot read"))
        let healthyAfter = try again.state(healthy)
        #expect(healthyAfter.status == 200 && healthyAfter.body == healthyBefore)
    }

    /// Tokens are stored only as hashes: no token appears in the database files.
    @Test(.enabled(if: TestStoreKind.isSQLite, "reads the SQLite files"))
    func tokensAreNotStored() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let sessions = try (0..<3).map { try client.create(userId: "t\($0)") }
        try client.apply(sessions[0], #"{"type":"onboarding.showSecond"}"#)
        try test.store.close()
        let files = try FileManager.default.contentsOfDirectory(atPath: test.database.folder.path)
        #expect(files.contains("test.sqlite"))
        for file in files {
            let bytes = try Data(contentsOf: test.database.folder.appending(path: file))
            for session in sessions {
                #expect(bytes.range(of: Data(session.token.utf8)) == nil, "token found in \(file)")
                #expect(bytes.range(of: Data(session.id.utf8)) != nil || file != "test.sqlite")
            }
        }
    }

    /// The action log pages with after and limit, and rejects bad values.
    @Test func actionLogPages() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "logger")
        for _ in 0..<3 { try client.apply(session, #"{"type":"onboarding.showSecond"}"#); try client.apply(session, #"{"type":"back"}"#) }
        let path = "/v1/sessions/\(session.id)/actions"
        let page = try client.sender.send("GET", path + "?after=2&limit=3", headers: session.auth).json
        #expect(page["actions"].arrayValue?.compactMap { $0["version"].integerValue } == [3, 4, 5])
        #expect(page["next"] == 5)
        #expect(page["actions"][0]["type"] == "onboarding.showSecond")
        #expect(page["actions"][0]["transition"]["type"] == "push")
        let last = try client.sender.send("GET", path + "?after=5", headers: session.auth).json
        #expect(last["actions"].arrayValue?.count == 1)
        #expect(last["next"] == .null)
        for query in ["?limit=0", "?limit=1001", "?after=-1", "?after=x", "?limit=1.5"] {
            #expect(try client.sender.send("GET", path + query, headers: session.auth).status == 400, "\(query)")
        }
    }

    /// DELETE removes the session and its log; later calls are 404.
    @Test func deleteRemovesSession() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "leaver")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        #expect(try client.sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth).status == 204)
        #expect(try client.state(session).status == 404)
        #expect(try client.act(session, #"{"type":"back"}"#).status == 404)
        #expect(try test.store.actions(sessionId: session.id, after: 0, limit: 10).isEmpty)
        let reopened = try test.reopened()
        #expect(try reopened.direct.send("GET", "/v1/sessions/\(session.id)", headers: session.auth).status == 404)
        withExtendedLifetime(reopened) {}
    }

    /// Creating a session checks its body field by field.
    @Test(arguments: [
        "", "[]", #"{"userId":""}"#, #"{"userId":5}"#, #"{}"#, #"{"userId":"u","attributes":[]}"#,
        #"{"userId":"u","attributes":{"nested":{"a":1}}}"#, #"{"userId":"u","traits":{"horizontalSizeClass":"huge"}}"#,
        #"{"userId":"u","traits":{"x":1}}"#, #"{"userId":"u","extra":true}"#, #"{"userId":"u""#,
    ])
    func createRejectsBadBodies(body: String) throws {
        let test = try TestApp()
        let response = try test.direct.send("POST", "/v1/sessions", body: body)
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    /// Through a real socket, malformed JSON is a 400 problem and an oversized body a 413, and the server goes on.
    @Test func malformedAndOversizedBodiesOverSocket() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let malformed = try sender.send("POST", "/v1/sessions", body: #"{"userId": "u", }"#)
            #expect(malformed.status == 400)
            #expect(malformed.headers["Content-Type"] == "application/problem+json")
            #expect(malformed.json["detail"].stringValue?.contains("not valid JSON") == true)
            let connection = try RawConnection(port: sender.port)
            try connection.send("POST /v1/sessions HTTP/1.1\r\nHost: t\r\nContent-Length: \(2 << 20)\r\n\r\n{\"userId\":")
            #expect(try connection.readResponse().status == 413)
            #expect(try sender.send("POST", "/v1/sessions", body: #"{"userId":"after"}"#).status == 201)
        }
    }

    /// A created session answers 201 with Location and ETag, and a token only at creation.
    @Test func createAnswersLocationAndETag() throws {
        let test = try TestApp()
        let response = try test.direct.send("POST", "/v1/sessions", body: #"{"userId":"loc","traits":{"horizontalSizeClass":"regular"}}"#)
        #expect(response.status == 201)
        let id = response.json["session"]["id"].stringValue ?? ""
        #expect(response.headers["Location"] == "/v1/sessions/\(id)")
        #expect(response.headers["ETag"] == "\"0\"")
        #expect(response.json["session"]["token"].stringValue?.count == 43)
        #expect(response.json["state"]["sessionId"].stringValue == id)
    }

    /// Admin user routes need the admin token; resetting onboarding sends the user's next session to onboarding.
    @Test func adminUserRoutes() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let session = try client.create(userId: "alice")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"onboarding.completed"}"#)
        #expect(try test.direct.send("GET", "/v1/users/alice").status == 401)
        #expect(try test.direct.send("GET", "/v1/users/alice", headers: session.auth).status == 401)
        let user = try test.direct.send("GET", "/v1/users/alice", headers: admin)
        #expect(user.status == 200)
        #expect(user.json["state"]["onboarded"] == true)
        #expect(try test.direct.send("GET", "/v1/users/nobody", headers: admin).status == 404)
        #expect(try test.direct.send("DELETE", "/v1/users/alice/onboarding").status == 401)
        #expect(try test.direct.send("DELETE", "/v1/users/alice/onboarding", headers: admin).status == 204)
        #expect(try test.direct.send("DELETE", "/v1/users/nobody/onboarding", headers: admin).status == 404)
        #expect(try client.create(userId: "alice").state.features == ["onboarding.first"])
    }
}

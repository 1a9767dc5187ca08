// Wrong tokens count against the failed-credential limit of their kind and address however
// their 401 is answered (at once, or later in the session's turn), and never block a valid one.
@testable import FlowServer
import FlowStore
import Foundation
import GRDB
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import Synchronization
import Testing
import TestSupport

struct FailedTokenLimitTests {
    static func guesses(_ test: TestApp, session: String, count: Int) throws -> [Int] {
        try test.withLiveServer { sender in
            try (0..<count).map { _ in
                try sender.send("POST", "/v1/sessions/\(session)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                headers: [("Authorization", "Bearer wrong-guess")]).status
            }
        }
    }

    /// A request as from `peer`, with `token` as its bearer token, answered in-process.
    static func send(_ test: TestApp, _ method: String, _ path: String, token: String?, body: String? = nil,
                     peer: String = "203.0.113.9") -> Response {
        var request = Request(method: method, path: path)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.body = Array(body.utf8)
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        request.peer = IPAddress(peer)
        return test.app.handle(request).settled()
    }

    /// Five wrong admin tokens from one address, then the real one from the same address: the
    /// real one is served (it was checked first); wrong ones past the burst get 429 with
    /// Retry-After, before and after it.
    @Test func theRealAdminTokenIsServedAfterWrongOnes() throws {
        var options = AccessOptions()
        options.adminFailureRate = RateLimit("0.01/3")
        let test = try TestApp(access: options)
        let wrong = (0..<5).map { _ in Self.send(test, "GET", "/v1/flows", token: "wrong-guess").status }
        #expect(wrong == [401, 401, 401, 429, 429])
        #expect(Self.send(test, "GET", "/v1/flows", token: TestApp.adminToken).status == 200)
        #expect(Self.send(test, "GET", "/v1/flags", token: TestApp.adminToken).status == 200)
        let refused = Self.send(test, "GET", "/v1/flows", token: "wrong-guess")
        #expect(refused.status == 429)
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        #expect(Int(refused.headers["Retry-After"] ?? "") ?? 0 >= 1)
        #expect(Self.send(test, "GET", "/v1/flows", token: "wrong-guess", peer: "198.51.100.1").status == 401,
                "another address has its own bucket")
    }

    /// Wrong session tokens spend the address's session-token failures only: another session's
    /// valid token (an immediate read, and an action answered in the session's turn) is served
    /// from the same address, and a wrong admin token there still gets its own burst.
    @Test func wrongSessionTokensDoNotBlockValidOnes() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("0.01/3")
        options.adminFailureRate = RateLimit("0.01/3")
        let test = try TestApp(access: options)
        let client = SessionClient(sender: test.direct)
        let target = try client.create(userId: "target"), own = try client.create(userId: "own")
        let wrong = (0..<5).map { _ in Self.send(test, "GET", "/v1/sessions/\(target.id)", token: "wrong-guess").status }
        #expect(wrong == [401, 401, 401, 429, 429])
        #expect(Self.send(test, "GET", "/v1/sessions/\(own.id)", token: own.token).status == 200)
        #expect(Self.send(test, "GET", "/v1/sessions/\(target.id)", token: target.token).status == 200)
        let action = Self.send(test, "POST", "/v1/sessions/\(own.id)/actions", token: own.token, body: #"{"type":"onboarding.showSecond"}"#)
        #expect(action.status == 200, "\(action.text)")
        let refused = Self.send(test, "POST", "/v1/sessions/\(own.id)/actions", token: "wrong-guess", body: #"{"type":"onboarding.showSecond"}"#)
        #expect(refused.status == 429, "a wrong token on the action route, answered in the session's turn, is over the limit too")
        #expect(refused.headers["Retry-After"] != nil)
        let admin = (0..<4).map { _ in Self.send(test, "GET", "/v1/flows", token: "wrong-admin").status }
        #expect(admin == [401, 401, 401, 429], "admin failures are counted apart from session-token failures")
    }

    /// With no option set, failed admin checks are limited: ten at once, then 429 with
    /// Retry-After 6 (one more every six seconds). Requests that present no credential are not
    /// guesses and are not counted; session tokens are not limited without --session-rate.
    @Test func adminFailuresAreLimitedByDefault() throws {
        let test = try TestApp()
        let bare = (0..<15).map { _ in Self.send(test, "GET", "/v1/flows", token: nil).status }
        #expect(bare == Array(repeating: 401, count: 15))
        let wrong = (0..<11).map { _ in Self.send(test, "GET", "/v1/flows", token: "wrong-guess").status }
        #expect(wrong == Array(repeating: 401, count: 10) + [429])
        #expect(Self.send(test, "GET", "/v1/flows", token: "wrong-guess").headers["Retry-After"] == "6")
        #expect(Self.send(test, "GET", "/v1/flows", token: TestApp.adminToken).status == 200)
        let session = try SessionClient(sender: test.direct).create(userId: "someone")
        let guesses = (0..<15).map { _ in Self.send(test, "GET", "/v1/sessions/\(session.id)", token: "wrong-guess").status }
        #expect(guesses == Array(repeating: 401, count: 15))
    }

    /// HEAD on an admin route is its GET route's request: its wrong tokens are admin failures,
    /// counted with the GETs'; wrong tokens on a session's route, after them, are not.
    @Test func headOnAnAdminRouteCountsAsAdmin() throws {
        let test = try TestApp()
        let session = try SessionClient(sender: test.direct).create(userId: "someone")
        let heads = (0..<6).map { _ in Self.send(test, "HEAD", "/v1/flows", token: "wrong-guess").status }
        let gets = (0..<5).map { _ in Self.send(test, "GET", "/v1/flows", token: "wrong-guess").status }
        #expect(heads + gets == Array(repeating: 401, count: 10) + [429])
        #expect(Self.send(test, "HEAD", "/v1/flows", token: "wrong-guess").status == 429)
        let guesses = (0..<12).map { _ in Self.send(test, "POST", "/v1/sessions/\(session.id)/actions", token: "wrong-guess",
                                                    body: #"{"type":"onboarding.showSecond"}"#).status }
        #expect(guesses == Array(repeating: 401, count: 12), "session tokens are not limited without --session-rate")
    }

    /// Repeated wrong tokens on the action route of a cached session (checked in the session's
    /// turn, answered later) reach the limit over a real socket: the burst of three, then 429.
    @Test func deferredRefusalsAreCounted() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("0.01/3")
        let test = try TestApp(access: options)
        let session = try SessionClient(sender: test.direct).create(userId: "target")
        #expect(test.app.sessions.cache.contains(session.id), "the action path under test is the cached one")
        #expect(try Self.guesses(test, session: session.id, count: 5) == [401, 401, 401, 429, 429])
        let real = try test.withLiveServer { sender in
            try sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#, headers: session.auth)
        }
        #expect(real.status == 200, "the session's own token, from the same address, is served")
    }

    /// Wrong tokens that arrive while the session's commit is in flight wait for its turn and
    /// are refused then (a deferred 401): they count too, so the next wrong token is 429. The
    /// commit is held in flight by another connection holding SQLite's write lock.
    @Test(.enabled(if: TestStoreKind.isSQLite)) func refusalsInTheSessionsTurnAreCounted() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("0.01/3")
        let test = try TestApp(access: options)
        let session = try SessionClient(sender: test.direct).create(userId: "target")
        let statuses = try test.withLiveServer { sender -> [Int] in
            let blocker = try DatabaseQueue(path: test.database.path)
            let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let holder = DispatchGroup()
            onOwnThread(holder) {
                try? blocker.inTransaction(.immediate) { _ in
                    locked.signal()
                    release.wait()
                    return .commit
                }
            }
            locked.wait()
            let requests = DispatchGroup()
            let answers = Mutex<[Int]>([])
            onOwnThread(requests) {  // its commit waits for the lock
                _ = try? sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                     headers: session.auth)
            }
            // The session's slot says when its commit is in flight and how many requests wait
            // for its turn (SessionCache/SlotContents: read here only, to time the test).
            let slot = try #require(test.app.sessions.cache.pinIfCached(session.id))
            defer { test.app.sessions.cache.unpin(slot) }
            func waitUntil(_ condition: (borrowing SlotContents) -> Bool) -> Bool {
                eventually(.seconds(15)) { slot.state.withLock { condition($0) } }
            }
            #expect(waitUntil { $0.turn.phase == .committing }, "the action's commit is in flight")
            for _ in 0..<4 {
                onOwnThread(requests) {
                    let status = (try? sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                                   headers: [("Authorization", "Bearer wrong-guess")]).status) ?? 0
                    answers.withLock { $0.append(status) }
                }
            }
            #expect(waitUntil { $0.turn.waiting.count == 4 }, "the four wait for the session's turn")
            release.signal()
            holder.wait()
            requests.wait()
            let next = try sender.send("GET", "/v1/sessions/\(session.id)", headers: [("Authorization", "Bearer wrong-guess")]).status
            return answers.withLock { $0 } + [next]
        }
        #expect(statuses == [401, 401, 401, 401, 429], "four refusals in the session's turn spent the burst of three")
    }

    /// The same on a session not cached (its token checked before its turn, answered at once).
    @Test func immediateRefusalsAreCounted() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("0.01/3")
        let first = try TestApp(access: options)
        let session = try SessionClient(sender: first.direct).create(userId: "target")
        let test = try first.reopened(access: options)
        #expect(!test.app.sessions.cache.contains(session.id))
        #expect(try Self.guesses(test, session: session.id, count: 5) == [401, 401, 401, 429, 429])
    }

    /// An expired session's 401 (`session-expired`) answers its real token: its holder is not
    /// guessing, so neither the deferred one (an action on the cached session, refused in its
    /// turn) nor the immediate ones (the session has left the cache) spend the address's burst,
    /// and wrong tokens still get their three 401s before the 429.
    @Test func expiredSessionsAreNotCounted() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("0.01/3")
        let database = try TestDatabase()
        let store = try database.migratedStore()
        defer { try? store.close() }
        let app = try Application(store: store, adminToken: TestApp.adminToken, access: options,
                                  retention: RetentionOptions(retention: .seconds(3600), sessionIdle: .milliseconds(300)))
        let session = try SessionClient(sender: DirectSender(app.handle)).create(userId: "target")
        #expect(app.sessions.cache.contains(session.id), "the first refusal is the cached, deferred one")
        Thread.sleep(forTimeInterval: 0.6)
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, handler: app.handle)
        try server.start()
        defer { server.shutdown(gracePeriod: .seconds(2)) }
        let sender = SocketSender(port: server.port)
        var expired: [String] = []
        for _ in 0..<5 {
            let answer = try sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                         headers: session.auth)
            expired.append("\(answer.status) \(answer.json["code"].stringValue ?? "")")
        }
        expired.append("\(try sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth).status)")
        #expect(expired == Array(repeating: "401 session-expired", count: 5) + ["401"])
        let guesses = try (0..<4).map { _ in
            try sender.send("GET", "/v1/sessions/\(session.id)", headers: [("Authorization", "Bearer wrong-guess")]).status
        }
        #expect(guesses == [401, 401, 401, 429], "the expired answers spent none of the burst")
    }
}

// Wrong tokens count against the failed-token limit however their 401 is answered: at once,
// or later, in the session's turn (an action on a cached session).
@testable import FlowServer
import Foundation
import FlowStore
import GRDB
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import Synchronization
import Testing

struct FailedTokenLimitTests {
    static func guesses(_ test: TestApp, session: String, count: Int) throws -> [Int] {
        try test.withLiveServer { sender in
            try (0..<count).map { _ in
                try sender.send("POST", "/v1/sessions/\(session)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                headers: [("Authorization", "Bearer wrong-guess")]).status
            }
        }
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
            DispatchQueue.global().async(group: holder) {
                try? blocker.inTransaction(.immediate) { _ in
                    locked.signal()
                    release.wait()
                    return .commit
                }
            }
            locked.wait()
            let requests = DispatchGroup()
            let answers = Mutex<[Int]>([])
            DispatchQueue.global().async(group: requests) {  // its commit waits for the lock
                _ = try? sender.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                     headers: session.auth)
            }
            // The session's slot says when its commit is in flight and how many requests wait
            // for its turn (SessionCache/SlotContents: read here only, to time the test).
            let slot = try #require(test.app.sessions.cache.pinIfCached(session.id))
            defer { test.app.sessions.cache.unpin(slot) }
            func waitUntil(_ condition: (borrowing SlotContents) -> Bool) -> Bool {
                for _ in 0..<1500 {
                    if slot.state.withLock({ condition($0) }) { return true }
                    Thread.sleep(forTimeInterval: 0.01)
                }
                return false
            }
            #expect(waitUntil { $0.turn.phase == .committing }, "the action's commit is in flight")
            for _ in 0..<4 {
                DispatchQueue.global().async(group: requests) {
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

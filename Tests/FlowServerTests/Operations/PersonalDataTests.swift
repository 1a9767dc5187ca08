// Where a user's id may and may not end up: paths that are not UTF-8 are refused, request logs
// name route patterns, and an erasure leaves the id in neither the SQLite file nor its WAL.
@testable import FlowServer
import Foundation
import FlowStore
import HTTPServer
import HTTPTestClient
import Logging
import StoreTestSupport
import Synchronization
import Testing
import TestSupport

/// Every message and metadata value logged, as one line each.
final class CapturedLog: Sendable {
    let lines = Mutex<[String]>([])

    var logger: Logger {
        var logger = Logger(label: "flowstack") { _ in CapturingLogHandler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    struct CapturingLogHandler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let values = (event.metadata ?? [:]).merging(metadata) { first, _ in first }
            let line = "\(event.level) \(event.message) " + values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            log.lines.withLock { $0.append(line) }
        }
    }
}

struct PersonalDataTests {
    /// Sends `head` (the request line and headers, CRLF-separated) and `body` as raw bytes.
    static func raw(_ port: Int, _ head: [UInt8], body: String = "") throws -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        let connection = try RawConnection(port: port)
        let rest = "\r\nHost: t\r\nAuthorization: Bearer \(TestApp.adminToken)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        try connection.send(head + Array(rest.utf8))
        return try connection.readResponse()
    }

    /// Path ids whose escapes are not UTF-8 (`%FF%FE`, the overlong `%C0%AF`, a lone
    /// continuation byte, an encoded surrogate) get a 400 problem on every kind of route, admin
    /// or session, read or write, as bodies that are not UTF-8 do; so do raw bytes that are not
    /// UTF-8. Before, each was decoded to U+FFFD: `%FF%FE` and `%C0%AF` named the same user.
    @Test func pathsThatAreNotUTF8AreRefused() throws {
        let test = try TestApp()
        let session = try SessionClient(sender: test.direct).create(userId: "ada")
        let routes = ["GET /v1/users/{}", "DELETE /v1/users/{}", "GET /v1/users/{}/export", "GET /v1/sessions/{}",
                      "POST /v1/sessions/{}/actions", "GET /v1/flags/{}", "PUT /v1/flows/{}", "GET /v1/flows/{}",
                      "DELETE /v1/sessions/{}", "GET /v1/sessions/\(session.id)/{}"]
        try test.withServer { server in
            for route in routes {
                for id in ["%FF%FE", "%C0%AF", "a%80", "%ED%A0%80"] {
                    let line = route.replacingOccurrences(of: "{}", with: id) + " HTTP/1.1"
                    let answer = try Self.raw(server.port, Array(line.utf8), body: route.hasPrefix("GET") || route.hasPrefix("DELETE") ? "" : "{}")
                    #expect(answer.status == 400, "\(line)")
                    #expect(answer.headers.first { $0.0.lowercased() == "content-type" }?.1 == "application/problem+json", "\(line)")
                }
            }
            let bytes = try Self.raw(server.port, Array("GET /v1/users/".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1".utf8))
            #expect(bytes.status == 400, "raw bytes that are not UTF-8")
            let valid = try Self.raw(server.port, Array("GET /v1/users/%C3%A9 HTTP/1.1".utf8))
            #expect(valid.status == 404, "an escaped UTF-8 id is decoded and looked up (no such user)")
        }
    }

    /// At debug level each request is logged with its route's pattern: a user id, a flag key, a
    /// session id or a client key in the path never reaches the log (where an erasure cannot
    /// follow it), nor does a path that matched no route.
    @Test func requestLogsNameRoutePatterns() throws {
        let database = try TestDatabase()
        let store = try database.migratedStore()
        defer { try? store.close() }
        let log = CapturedLog()
        let app = try Application(store: store, adminToken: TestApp.adminToken, logger: log.logger)
        let sender = DirectSender(app.handle)
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let session = try SessionClient(sender: sender).create(userId: "user-7c1e-private")
        #expect(try sender.send("GET", "/v1/users/user-7c1e-private", headers: admin).status == 200)
        #expect(try sender.send("GET", "/v1/flags/eu-face-scan", headers: admin).status == 200)
        #expect(try sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth).status == 200)
        #expect(try sender.send("GET", "/api/features/fk_private-client-key").status == 401)
        #expect(try sender.send("GET", "/no/such/user-7c1e-private").status == 404)
        let lines = log.lines.withLock { $0 }
        for secret in ["user-7c1e-private", "eu-face-scan", session.id, "fk_private-client-key"] {
            #expect(!lines.contains { $0.contains(secret) }, "\(secret) is not logged: \(lines)")
        }
        for logged in ["GET /v1/users/{userId} 200", "GET /v1/flags/{key} 200", "GET /v1/sessions/{id} 200", "GET unmatched 404"] {
            #expect(lines.contains { $0.contains(logged) }, "\(logged) in \(lines)")
        }
    }

    /// After `DELETE /v1/users/{id}`, the user's id is in neither the SQLite file nor its WAL:
    /// secure_delete zeroed the rows in the pages written, and a TRUNCATE checkpoint emptied
    /// the WAL, which still held the pages as they were before. The user's rows were both in
    /// the database file (checkpointed) and in the WAL (written after) when erased.
    @Test(.enabled(if: TestStoreKind.isSQLite)) func erasureLeavesNoTraceInTheFiles() throws {
        let test = try TestApp()
        let userId = "erase-me-5f0c9a71d3"
        let client = SessionClient(sender: test.direct)
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        func occurrences() throws -> (database: Int, wal: Int) {
            let needle = Array(userId.utf8)
            func count(_ path: String) throws -> Int {
                guard let data = FileManager.default.contents(atPath: path) else { return 0 }
                let bytes = [UInt8](data)
                guard bytes.count >= needle.count else { return 0 }
                return (0...(bytes.count - needle.count)).reduce(0) { found, start in
                    bytes[start] == needle[0] && Array(bytes[start..<(start + needle.count)]) == needle ? found + 1 : found
                }
            }
            return (try count(test.database.path), try count(test.database.path + "-wal"))
        }
        for _ in 0..<3 {
            let session = try client.create(userId: userId)
            #expect(try test.direct.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                         headers: session.auth).status == 200)
        }
        // The background checkpointer copies them into the database file (every 100 ms, or later
        // on a loaded machine).
        let deadline = ContinuousClock.now + .seconds(20)
        while try occurrences().database == 0, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let later = try client.create(userId: userId)
        #expect(try test.direct.send("POST", "/v1/sessions/\(later.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                     headers: later.auth).status == 200)
        let before = try occurrences()
        #expect(before.database > 0 && before.wal > 0, "the id is in both files before: \(before)")
        let erased = try test.direct.send("DELETE", "/v1/users/\(userId)", headers: admin)
        #expect(erased.status == 200, "\(erased.text)")
        // The erasure's own truncation gives up at once when the background checkpointer's
        // turn is copying the WAL at that moment (or within 20 ms for a read in the WAL); the
        // background checkpointer then truncates at its next turn.
        #expect(eventually(.seconds(10)) { (try? occurrences())?.wal == 0 })
        let after = try occurrences()
        #expect(after.database == 0 && after.wal == 0, "the id is in neither file after the erasure: \(after)")
    }
}

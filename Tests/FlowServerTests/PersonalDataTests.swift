// Where a user's id may and may not end up: request logs name route patterns, and an erasure
// leaves the id in neither the SQLite file nor its WAL.
@testable import FlowServer
import Foundation
import FlowStore
import HTTPServer
import HTTPTestClient
import Logging
import StoreTestSupport
import Synchronization
import Testing

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
        Thread.sleep(forTimeInterval: 0.5)  // the background checkpointer copies them into the database file
        let later = try client.create(userId: userId)
        #expect(try test.direct.send("POST", "/v1/sessions/\(later.id)/actions", body: #"{"type":"onboarding.showSecond"}"#,
                                     headers: later.auth).status == 200)
        let before = try occurrences()
        #expect(before.database > 0 && before.wal > 0, "the id is in both files before: \(before)")
        let erased = try test.direct.send("DELETE", "/v1/users/\(userId)", headers: admin)
        #expect(erased.status == 200, "\(erased.text)")
        let after = try occurrences()
        #expect(after.database == 0 && after.wal == 0, "the id is in neither file after the erasure: \(after)")
    }
}

// A stored row the store cannot read is a 503 problem for the request that reads it; the
// server keeps serving everything else.
@testable import FlowServer
import FlowStore
import GRDB
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import Testing

struct CorruptRowTests {
    /// A session whose stored version is not a number (SQLite keeps what it is given) answers
    /// 503 problem+json through a real socket, and the server still answers other requests.
    @Test(.enabled(if: TestStoreKind.isSQLite)) func corruptSessionRowIsAProblemNotACrash() throws {
        let first = try TestApp()
        let session = try SessionClient(sender: first.direct).create(userId: "ada")
        let queue = try DatabaseQueue(path: first.database.path)
        try queue.write { db in try db.execute(sql: "UPDATE sessions SET version = 'corrupt' WHERE id = ?", arguments: [session.id]) }
        try queue.close()
        let test = try first.reopened()  // nothing cached: the row is read from the file
        try test.withLiveServer { sender in
            let response = try sender.send("GET", "/v1/sessions/\(session.id)", headers: [("Authorization", "Bearer \(session.token)")])
            #expect(response.status == 503)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(try sender.send("GET", "/healthz").status == 200)
            let other = try SessionClient(sender: sender).create(userId: "grace")
            #expect(try sender.send("GET", "/v1/sessions/\(other.id)", headers: [("Authorization", "Bearer \(other.token)")]).status == 200)
        }
    }
}

// Where a user's id may and may not end up: an erasure leaves it in neither the SQLite file nor its WAL.
@testable import FlowServer
import Foundation
import FlowStore
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import Testing

struct PersonalDataTests {
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

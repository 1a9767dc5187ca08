// The peers of bench/: GET / answers {"hello":"world"} as JSON (the ceiling: an HTTP answer
// and nothing else); POST /v1/sessions/{id}/actions is the durable write the same server does
// with GRDB, as a team would write it: in one write transaction, the session's version goes
// up by one (its row made on first use) and the posted action is appended to a log with it,
// then the answer names the new version. SQLite in WAL mode with synchronous=NORMAL, as
// FlowStack's default durability. Usage: HelloPeer PORT [DATABASE_PATH]
import Foundation
import GRDB
import Hummingbird

@main
struct HelloPeer {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let port = arguments.count > 1 ? Int(arguments[1]) ?? 8081 : 8081
        let path = arguments.count > 2 ? arguments[2] : NSTemporaryDirectory() + "hello-peer-\(port).sqlite"
        let database = try openDatabase(at: path)
        let router = Router()
        router.get("/") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"hello":"world"}"#)))
        }
        router.post("/v1/sessions/:id/actions") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: 64 * 1024)
            let action = String(buffer: body)
            let version = try await database.write { db -> Int in
                let version = try Int.fetchOne(db, sql: """
                    INSERT INTO sessions (id, version) VALUES (?, 1)
                    ON CONFLICT (id) DO UPDATE SET version = version + 1 RETURNING version
                    """, arguments: [id]) ?? 0
                try db.execute(sql: "INSERT INTO actions (session_id, version, action, created_at) VALUES (?, ?, ?, ?)",
                               arguments: [id, version, action, Date().timeIntervalSince1970])
                return version
            }
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"sessionId":"\#(id)","version":\#(version)}"#)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        print("peer listening on http://127.0.0.1:\(port)")
        try await app.runService()
    }

    static func openDatabase(at path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS actions (session_id TEXT NOT NULL, version INTEGER NOT NULL,
                    action TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (session_id, version));
                """)
        }
        return pool
    }
}

// A database written by the build before the log kept only snapshots (every entry with its tree,
// no head rows) is migrated and serves every route that reads the log: session reads, actions,
// history, replay and export.
@testable import FlowServer
import FlowStore
import Foundation
import GRDB
import HTTPTestClient
import JSON
import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Log migration")
struct LogMigrationTests {
    static let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]

    /// Sessions walked by this build are written again as the previous build wrote them:
    /// migrations 1 to 15, the same rows, and each log entry with the tree, handler and
    /// transition committed at its version. This build migrates the file and answers the same
    /// states and histories, acts on from there (numbering on, history rebuilt across the old
    /// entries and the new), replays every session, and exports each user's log whole.
    @Test func previousBuildsDatabaseServesEveryRoute() throws {
        let scratch = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(scratch) {} }
        let recorder = try scratch.migratedStore()
        let recording = try Application(store: recorder, adminToken: TestApp.adminToken)
        let walks = try LogRebuildTests.walk(recording, store: recorder, seed: 2026, sessions: 6, users: 3, steps: 6 * 40)
        let client = SessionClient(sender: DirectSender(recording.handle))
        var states: [String: JSONValue] = [:]
        var histories: [String: JSONValue] = [:]
        for (id, walk) in walks {
            states[id] = try client.state(walk.session).json
            histories[id] = try client.sender.send("GET", "/v1/sessions/\(id)/actions?limit=1000", headers: walk.session.auth).json["actions"] as JSONValue
        }
        try recorder.close()

        let old = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(old) {} }
        let previous = try SQLiteStore(path: old.path)
        try previous.migrate(Array(Migration.bundled(.sqlite).prefix(15)))
        try previous.pool.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [scratch.path])
            try db.inTransaction {
                let tables = try String.fetchAll(db, sql: """
                    SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                        AND name NOT IN ('schema_migrations', 'actions', 'idempotency_keys')
                    """)
                for table in tables { try db.execute(sql: "INSERT INTO main.\(table) SELECT * FROM src.\(table)") }
                // That build stored each key's answer whole; this one keeps no body.
                let keys = try Row.fetchAll(db, sql: "SELECT session_id, key, request_hash, status, version, created_at FROM src.idempotency_keys")
                for key in keys {
                    let id: String = key[0]
                    let version: Int = key[4]
                    let answered = try #require(walks[id]?.versions[version]?.answer)
                    try db.execute(sql: """
                        INSERT INTO main.idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [id, key[1], key[2], key[3], version, Data(answered.body), key[5]])
                }
                let entries = try Row.fetchAll(db, sql: """
                    SELECT session_id, version, type, source, params, interactive, created_at, client_at FROM src.actions
                    """)
                for entry in entries {
                    let id: String = entry[0]
                    let version: Int = entry[1]
                    let committed = try #require(walks[id]?.versions[version])
                    try db.execute(sql: """
                        INSERT INTO main.actions (session_id, version, type, source, params, interactive, handled_by, transition,
                            created_at, tree, client_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [id, version, entry[2], entry[3], entry[4], entry[5], committed.handledBy, committed.transition,
                                         entry[6], Data(committed.tree), entry[7]])
                }
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE src")
        }
        try previous.close()

        let store = try SQLiteStore(path: old.path)
        _ = try store.migrate()
        defer { try? store.close() }
        let app = try Application(store: store, adminToken: TestApp.adminToken)
        let again = SessionClient(sender: DirectSender(app.handle))
        let stored = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM idempotency_keys WHERE body IS NOT NULL") }
        #expect(stored == walks.values.map(\.versions.count).reduce(0, +), "the answers stored before keep their bodies")
        for (id, walk) in walks {
            #expect(try again.state(walk.session).json == states[id], "\(id) reads as it stood")
            // Keys used before replay the answers stored then.
            for version in [1, walk.versions.count / 2, walk.versions.count] {
                guard let answered = walk.versions[version]?.answer else { continue }
                try ReplayedAnswerTests.expectReplay(again, walk.session, answered, "\(id) migrated")
            }
            let history = try again.sender.send("GET", "/v1/sessions/\(id)/actions?limit=1000", headers: walk.session.auth)
            #expect(history.status == 200 && history.json["actions"] as JSONValue == histories[id], "\(id) history")
            // On from there: two actions (whatever applies), listed with what they answered.
            var answered: [JSONValue] = []
            for body in [#"{"type":"back"}"#, #"{"type":"home.selectTab","params":{"index":1}}"#, #"{"type":"onboarding.showSecond"}"#] {
                let answer = try again.act(walk.session, body)
                if answer.status == 200 { answered.append(answer.json) }
            }
            let version = states[id]?["version"].integerValue ?? 0
            let page = try again.sender.send("GET", "/v1/sessions/\(id)/actions?after=\(version)", headers: walk.session.auth).json
            let listed = page["actions"].arrayValue ?? []
            #expect(listed.map { $0["version"] } == answered.map { $0["version"] }, "\(id) numbering goes on")
            for (entry, answer) in zip(listed, answered) {
                let (listedTransition, answeredTransition): (JSONValue, JSONValue) = (entry["transition"], answer["transition"])
                let (listedHandler, answeredHandler): (JSONValue, JSONValue) = (entry["handledBy"], answer["handledBy"])
                #expect(listedTransition == answeredTransition && listedHandler == answeredHandler, "\(id) new entry")
            }
            let whole = try again.sender.send("GET", "/v1/sessions/\(id)/actions?limit=1000", headers: walk.session.auth).json["actions"] as JSONValue
            #expect(Array((whole.arrayValue ?? []).prefix(histories[id]?.arrayValue?.count ?? 0)) == histories[id]?.arrayValue ?? [])
        }
        let replay = try again.sender.send("POST", "/v1/replays", body: "", headers: Self.admin).json
        let totals: JSONValue = replay["totals"]
        #expect(totals["sessions"] as JSONValue == .integer(walks.count) && totals["skipped"] as JSONValue == .integer(0), "\(totals)")
        for user in ["walker-0", "walker-1", "walker-2"] {
            let export = try again.sender.send("GET", "/v1/users/\(user)/export", headers: Self.admin)
            #expect(export.status == 200)
            for session in export.json["sessions"].arrayValue ?? [] {
                let id = try #require(session["id"].stringValue)
                let listed = try again.sender.send("GET", "/v1/sessions/\(id)/actions?limit=1000", headers: try #require(walks[id]).session.auth)
                #expect(session["actions"] as JSONValue == listed.json["actions"] as JSONValue, "\(id) exported as listed")
            }
        }
    }
}

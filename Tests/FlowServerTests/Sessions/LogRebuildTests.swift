// The log keeps actions and only every LogSnapshots.interval-th tree: over seeded random walks of
// the sample app (many sessions, users shared between them, across snapshot boundaries), every
// version's tree, handler and transition rebuilt from the nearest snapshot equals what the
// server committed, on SQLite and on PostgreSQL (each a named case).
@testable import FlowServer
import FlowEngine
import FlowStore
import Foundation
import HTTPTestClient
import GRDB
import JSON
import SQLiteStore
import StoreTestSupport
import Testing
import TestSupport

@Suite("Log rebuild")
struct LogRebuildTests {
    /// What the server committed at one version, read from the store's head right after, and
    /// the keyed request that made it with the answer it got.
    struct Committed: Equatable {
        var tree: [UInt8]
        var handledBy: String?
        var transition: String?
        var answer: ReplayedAnswerTests.Tap?
    }

    /// Walks `sessions` sessions of `users` users (so one session's `setUser` changes the state
    /// another is judged with: a login in one makes `home.checkout` open checkout in another),
    /// `steps` steps in all, choosing among each session's available actions with random
    /// parameters, plus `back`, interactive starts and, now and then, an admin's onboarding
    /// reset. Returns every session's committed versions.
    static func walk(_ app: Application, store: any FlowStore, seed: UInt64, sessions count: Int, users: Int,
                     steps: Int) throws -> [String: (session: CreatedSession, versions: [Int: Committed])] {
        var random = SeededGenerator(seed: seed)
        let client = SessionClient(sender: DirectSender(app.handle))
        var walks: [String: (session: CreatedSession, versions: [Int: Committed])] = [:]
        var order: [String] = []
        var rowTaps = 0
        for index in 0..<count {
            let session = try client.create(userId: "walker-\(index % users)", attributes: index % 3 == 0 ? #"{"country":"DE"}"# : "{}")
            walks[session.id] = (session, [:])
            order.append(session.id)
        }
        for step in 0..<steps {
            let id = order[Int.random(in: 0..<order.count, using: &random)]
            guard let session = walks[id]?.session else { continue }
            if Int.random(in: 0..<60, using: &random) == 0 {
                let user = "walker-\(Int.random(in: 0..<users, using: &random))"
                _ = try client.sender.send("DELETE", "/v1/users/\(user)/onboarding", headers: [("Authorization", "Bearer \(TestApp.adminToken)")])
                continue
            }
            let available = try client.sender.send("GET", "/v1/sessions/\(id)/actions/available", headers: session.auth).json
            let actions = available["actions"].arrayValue ?? []
            var body = #"{"type":"back"}"#
            // The address picker's rows: a tap or a swipe on one (row taps are not among the
            // available actions, which list one action per screen, not per row).
            let rows = available["from"]["feature"].stringValue == "address.list" ? try Self.rowIds(of: available["from"]["id"], client, session) : []
            if !rows.isEmpty && Int.random(in: 0..<3, using: &random) == 0 {
                let row = rows[Int.random(in: 0..<rows.count, using: &random)]
                let type = Int.random(in: 0..<2, using: &random) == 0 ? "address.removed" : "address.chosen"
                body = #"{"type":"\#(type)","from":"\#(available["from"]["id"].stringValue ?? "")","row":"\#(row)"}"#
            } else if !actions.isEmpty && Int.random(in: 0..<8, using: &random) != 0 {
                let chosen = actions[Int.random(in: 0..<actions.count, using: &random)]
                var params: [String] = []
                for param in chosen["params"].arrayValue ?? [] {
                    guard let name = param["name"].stringValue else { continue }
                    switch param["type"].stringValue {
                    case "integer": params.append(#""\#(name)":\#(Int.random(in: 0...1, using: &random))"#)
                    case "number": params.append(#""\#(name)":\#(Double(Int.random(in: 0...10, using: &random)) / 10)"#)
                    case "object": params.append(#""\#(name)":{"city":"c\#(Int.random(in: 0...3, using: &random))"}"#)
                    default: params.append(#""\#(name)":"v\#(Int.random(in: 0...3, using: &random))""#)
                    }
                }
                if chosen["type"].stringValue == "interaction.end" {
                    params.append(#""velocity":\#(Int.random(in: 0...600, using: &random))"#)
                }
                let from = chosen["from"].stringValue.map { #","from":"\#($0)""# } ?? ""
                let interactive = chosen["interactive"].boolValue == true && Int.random(in: 0..<2, using: &random) == 0
                body = #"{"type":"\#(chosen["type"].stringValue ?? "back")"\#(from),"params":{\#(params.joined(separator: ","))},"interactive":\#(interactive)}"#
            }
            // An answer that is not definitive (a 503 when PostgreSQL did not answer in time on a
            // loaded machine) may come from a commit that landed: the action goes again with the
            // same Idempotency-Key until the answer is definitive, as a client's would, so every
            // committed version is one the walk knows.
            let key = [("Idempotency-Key", "walk-\(seed)-\(step)")]
            var answer = try client.act(session, body, headers: key)
            for _ in 0..<20 where answer.status >= 500 {
                Thread.sleep(forTimeInterval: 0.2)
                answer = try client.act(session, body, headers: key)
            }
            guard answer.status == 200, let version = answer.json["version"].integerValue else { continue }
            if body.contains(#""row":"#) { rowTaps += 1 }
            // What the server committed, from its memory: the store keeps the head only every
            // `LogSnapshots.headInterval` versions on SQLite, and rebuilds the rest on a read.
            let committed = try app.sessions.withSession(id, access: .server) { session in
                (session.version, Committed(tree: session.tree.storageBytes(), handledBy: session.handledBy,
                                            transition: session.lastTransitionJSON.map { String(decoding: $0, as: UTF8.self) },
                                            answer: ReplayedAnswerTests.Tap(key: key[0].1, request: body, version: version,
                                                                            body: answer.body)))
            }
            #expect(committed.0 == version)
            walks[id]?.versions[version] = committed.1
        }
        // Long walks reach the address picker: its row taps (kept in the log as row.id) are
        // rebuilt like any action.
        if steps >= 300 { #expect(rowTaps > 0, "the walk tapped no row") }
        return walks
    }

    /// The row ids of the list of screen `screen`, read from the session's state.
    static func rowIds(of screen: JSONValue, _ client: SessionClient, _ session: CreatedSession) throws -> [String] {
        guard let id = screen.stringValue else { return [] }
        let state = try client.sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth).json
        func find(_ node: JSONValue) -> [String]? {
            for entry in node["entries"].arrayValue ?? [] {
                if entry["id"].stringValue == id {
                    return (entry["sections"].arrayValue ?? []).flatMap { ($0["rows"].arrayValue ?? []).compactMap { $0["id"].stringValue } }
                }
                if entry["flow"].stringValue != nil, let found = find(entry) { return found }
            }
            return node["presented"].isNull ? nil : find(node["presented"])
        }
        return find(state["root"]) ?? []
    }

    /// Rebuilds every version of every walked session, from the start and from a random
    /// `after` (so from a snapshot), and reads the history route: each tree, handler and
    /// transition is the one committed. Returns how many versions were checked.
    static func check(_ app: Application, store: any FlowStore,
                      _ walks: [String: (session: CreatedSession, versions: [Int: Committed])], users: Int, seed: UInt64) throws -> Int {
        var random = SeededGenerator(seed: seed)
        let client = SessionClient(sender: DirectSender(app.handle))
        var checked = 0
        for (id, walk) in walks.sorted(by: { $0.key < $1.key }) {
            let record = try #require(try store.session(id: id))
            let catalog = try #require(DefinitionRegistry.decode(record.flowVersions).flatMap(app.registry.catalog(for:)))
            let rebuild = LogRebuild(catalog: catalog, context: SessionCodecs.decodeContext(record.context, userId: record.userId))
            let last = record.version
            for after in [0, last > 0 ? Int.random(in: 0..<last, using: &random) : 0] {
                let slice = try #require(try store.actionLog(sessionId: id, after: after, limit: 10_000))
                let entries = try #require(rebuild.rebuild(from: slice.startTree, entries: slice.entries), "\(id) rebuilds after \(after)")
                #expect(entries.map(\.action.version) == (last > slice.startVersion ? Array(slice.startVersion + 1 ... last) : []))
                for entry in entries {
                    let committed = try #require(walk.versions[entry.action.version])
                    let rebuilt = Committed(tree: entry.tree.storageBytes(), handledBy: entry.action.handledBy, transition: entry.action.transition,
                                            answer: committed.answer)
                    #expect(rebuilt == committed, "\(id) version \(entry.action.version) rebuilt from \(slice.startVersion)")
                    checked += 1
                }
            }
            // The history route answers the committed handlers and transitions.
            let after = last > 0 ? Int.random(in: 0..<last, using: &random) : 0
            let page = try client.sender.send("GET", "/v1/sessions/\(id)/actions?after=\(after)&limit=100", headers: walk.session.auth)
            #expect(page.status == 200, "\(page.text)")
            for listed in page.json["actions"].arrayValue ?? [] {
                let version = try #require(listed["version"].integerValue)
                let committed = try #require(walk.versions[version])
                #expect(listed["handledBy"].stringValue == committed.handledBy)
                let transition = committed.transition.map { try? JSONParser.parse($0) } ?? nil
                #expect(listed["transition"] == (transition ?? .null), "\(id) version \(version) listed")
            }
        }
        // The export gives each session's log as the history route lists it.
        for user in (0..<users).map({ "walker-\($0)" }) {
            let export = try client.sender.send("GET", "/v1/users/\(user)/export", headers: [("Authorization", "Bearer \(TestApp.adminToken)")])
            #expect(export.status == 200)
            for session in export.json["sessions"].arrayValue ?? [] {
                // The user's sessions of another walk on the same database are that walk's to check.
                guard let id = session["id"].stringValue, let walk = walks[id] else { continue }
                let listed = try client.sender.send("GET", "/v1/sessions/\(id)/actions?limit=1000", headers: walk.session.auth)
                #expect(session["actions"] as JSONValue == listed.json["actions"] as JSONValue, "\(id) exported as listed")
                #expect((session["actions"].arrayValue ?? []).count == walks[id]?.versions.count, "\(id) exported whole")
            }
        }
        return checked
    }

    /// Seeded walks, many sessions, each well past several snapshots: every rebuilt version is
    /// the committed one.
    @Test(arguments: TestStoreKind.allCases) func rebuiltTreesEqualCommittedOnes(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        defer { try? store.close() }
        let app = try Application(store: store, adminToken: TestApp.adminToken)
        for seed: UInt64 in [35, 3_500] {
            let walks = try Self.walk(app, store: store, seed: seed, sessions: 12, users: 4, steps: 12 * 3 * LogSnapshots.interval)
            let versions = walks.values.map { $0.versions.count }
            #expect(versions.reduce(0, +) > 12 * LogSnapshots.interval, "the walks applied actions: \(versions)")
            #expect(versions.filter { $0 > LogSnapshots.interval + 1 }.count >= 6, "most sessions crossed a snapshot: \(versions)")
            #expect(try Self.check(app, store: store, walks, users: 4, seed: seed) >= versions.reduce(0, +))
            let rebuiltBefore = app.sessions.counters.replaysRebuilt.load(ordering: .relaxed)
            #expect(try Self.checkReplays(walks, app: app, seed: seed) > 12 * 6)
            #expect(app.sessions.counters.replaysRebuilt.load(ordering: .relaxed) > rebuiltBefore, "older versions were rebuilt")
            #expect(app.sessions.counters.replaysNotRebuilt.load(ordering: .relaxed) == 0)
            try Self.checkReadAfresh(walks, app: app, database: database)
        }
    }

    /// Replays keyed actions of every walked session at a sample of its versions: the newest
    /// (answered from memory), the one before, each snapshot with the versions beside it, and
    /// `sample` random ones (made again from the log). Each answer is the one the action got,
    /// byte for byte, with its version's `ETag` and `Idempotent-Replayed`. Returns how many
    /// were replayed.
    static func checkReplays(_ walks: [String: (session: CreatedSession, versions: [Int: Committed])], app: Application,
                             seed: UInt64, sample: Int = 8) throws -> Int {
        var random = SeededGenerator(seed: seed)
        let client = SessionClient(sender: DirectSender(app.handle))
        var replayed = 0
        for (id, walk) in walks.sorted(by: { $0.key < $1.key }) {
            guard let last = walk.versions.keys.max() else { continue }
            var versions: Set<Int> = [last, last - 1]
            for snapshot in stride(from: LogSnapshots.interval, through: last, by: LogSnapshots.interval) {
                versions.formUnion([snapshot - 1, snapshot, snapshot + 1])
            }
            for _ in 0..<sample { versions.insert(Int.random(in: 1...last, using: &random)) }
            for version in versions.sorted() {
                guard let answered = walk.versions[version]?.answer else { continue }
                try ReplayedAnswerTests.expectReplay(client, walk.session, answered, "\(id)")
                replayed += 1
            }
        }
        return replayed
    }

    /// Each walked session read by a server started afresh on the database (nothing cached:
    /// the store's head, rebuilt where the head row is behind) is the committed newest version,
    /// and its state document is the one the walking server answers.
    static func checkReadAfresh(_ walks: [String: (session: CreatedSession, versions: [Int: Committed])], app: Application,
                                database: TestDatabase) throws {
        let store = try database.migratedStore()
        defer { try? store.close() }
        let fresh = try Application(store: store, adminToken: TestApp.adminToken)
        let sqlite = store as? SQLiteStore
        var rebuilt = 0
        for (id, walk) in walks.sorted(by: { $0.key < $1.key }) {
            guard let last = walk.versions.keys.max(), let committed = walk.versions[last] else { continue }
            let record = try #require(try store.session(id: id))
            #expect(record.version == last)
            #expect(try store.sessionCredentials(id: id) == SessionCredentials(tokenHash: record.tokenHash, lastActiveAt: record.updatedAt))
            #expect(Committed(tree: record.tree, handledBy: record.handledBy, transition: record.lastTransition, answer: committed.answer) == committed,
                    "\(id) version \(last) read afresh")
            // A key of the newest version and one of an older, replayed with nothing cached.
            for version in [last, last / 2] {
                guard let answered = walk.versions[version]?.answer else { continue }
                try ReplayedAnswerTests.expectReplay(SessionClient(sender: DirectSender(fresh.handle)), walk.session, answered,
                                                     "\(id) afresh")
            }
            let walking = try DirectSender(app.handle).send("GET", "/v1/sessions/\(id)", headers: walk.session.auth)
            let afresh = try DirectSender(fresh.handle).send("GET", "/v1/sessions/\(id)", headers: walk.session.auth)
            #expect(afresh.status == 200 && afresh.body == walking.body, "\(id): \(afresh.text)")
            if let sqlite {
                // The head row stands at the last multiple of the interval (none below it): the
                // versions after it were rebuilt by the read.
                let head = try sqlite.pool.read { db in
                    try Int.fetchOne(db, sql: "SELECT version FROM session_heads WHERE session_id = ?", arguments: [id])
                }
                let expected = last - last % LogSnapshots.headInterval
                #expect(head == (expected > 0 ? expected : nil), "\(id) at \(last): head row at \(head.map(String.init) ?? "none")")
                if head != last { rebuilt += 1 }
            }
        }
        if sqlite != nil { #expect(rebuilt > walks.count / 2, "most sessions were read through a rebuild: \(rebuilt)") }
    }
}

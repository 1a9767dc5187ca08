// Sessions, the action log, user state and idempotent answers on SQLite and on PostgreSQL (each a
// named case).
import FlowStore
import SQLiteStore
import StoreTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@Suite("Session store")
struct SessionStoreTests {
    static func session(_ id: String, user: String = "u-1") -> SessionRecord {
        let now = Timestamp.string()
        return SessionRecord(id: id, userId: user, tokenHash: [1, 2, 3], version: 0, tree: Array("{\"t\":0}".utf8),
                             context: "{}", flags: "{}", experiments: "{}", flowVersions: "{\"app\":1}",
                             createdAt: now, updatedAt: now)
    }

    static func commit(_ id: String, version: Int, user: String = "u-1", patch: String? = nil,
                       key: String? = nil) -> ActionCommit {
        let action = ActionRecord(version: version, type: "t\(version)", source: "e\(version)", params: "{}",
                                  interactive: false, handledBy: "app", transition: "{\"type\":\"push\"}",
                                  createdAt: Timestamp.string())
        return ActionCommit(sessionId: id, userId: user, version: version, tree: Array("{\"t\":\(version)}".utf8),
                            action: action, userPatch: patch,
                            idempotency: key.map { ($0, IdempotentAnswer(requestHash: [9], status: 200, version: version, body: [7])) })
    }


    /// A stored session reads back as it was written, and its user is created.
    @Test(arguments: TestStoreKind.allCases) func insertsAndReadsSessions(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        #expect(try store.session(id: "s-1")?.flowVersions == "{\"app\":1}")
        #expect(try store.session(id: "s-1")?.tokenHash == [1, 2, 3])
        #expect(try store.session(id: "s-2") == nil)
        #expect(try store.user(id: "u-1")?.state == "{}")
    }

    /// Every field of a new session's row reads back as written, those that may be absent too.
    @Test(arguments: TestStoreKind.allCases) func aSessionReadsBackWhole(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        var full = Self.session("s-full")
        full.flags = #"{"f":true}"#
        full.experiments = #"{"e":"b"}"#
        full.updatedAt = "2026-12-01T00:00:01.000Z"
        full.lastTransition = #"{"type":"present"}"#
        full.handledBy = "app"
        full.client = #"{"features":["a"]}"#
        full.context = #"{"attributes":{"country":"FR"}}"#
        let bare = Self.session("s-bare")
        try store.insert(full)
        try store.insert(bare)
        #expect(try store.session(id: "s-full") == full)
        #expect(try store.session(id: "s-bare") == bare)
    }

    /// A session that cannot be stored (its id taken) stores nothing of itself, its user and
    /// exposures neither, and the store goes on storing the next.
    @Test(arguments: TestStoreKind.allCases) func aSessionNotStoredLeavesNothing(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        #expect(throws: (any Error).self) {
            try store.insert(Self.session("s-1", user: "u-2"), exposures: [("exp", "a")], exclusions: [], firstFeature: "home")
        }
        #expect(try store.user(id: "u-2") == nil)
        #expect(try store.experimentReport("exp").isEmpty)
        #expect(try store.session(id: "s-1")?.userId == "u-1")
        try store.insert(Self.session("s-2", user: "u-2"), exposures: [("exp", "a")], exclusions: [], firstFeature: "home")
        #expect(try store.user(id: "u-2")?.state == "{}")
        #expect(try store.experimentReport("exp")["a"]?.sessions == 1)
    }

    /// Each commit raises the version by one, logs the action and keeps the tree.
    @Test(arguments: TestStoreKind.allCases) func commitsActionsInOrder(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        for version in 1...5 { try store.commit(Self.commit("s-1", version: version)) }
        let session = try #require(try store.session(id: "s-1"))
        #expect(session.version == 5)
        #expect(session.tree == Array("{\"t\":5}".utf8))
        #expect(session.handledBy == "app")
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 100).map(\.version) == [1, 2, 3, 4, 5])
        #expect(try store.actions(sessionId: "s-1", after: 2, limit: 2).map(\.type) == ["t3", "t4"])
    }

    /// A commit on a stale version writes nothing and says which version is stored.
    @Test(arguments: TestStoreKind.allCases) func staleCommitWritesNothing(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        try store.commit(Self.commit("s-1", version: 1))
        #expect(throws: CommitError.versionConflict(stored: 1)) {
            try store.commit(Self.commit("s-1", version: 1, patch: "{\"onboarded\":true}", key: "k"))
        }
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 10).count == 1)
        #expect(try store.user(id: "u-1")?.state == "{}")
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "k") == nil)
        #expect(throws: CommitError.sessionNotFound) { try store.commit(Self.commit("nope", version: 1)) }
    }

    /// A commit that skips a version is refused as stale too, and writes nothing.
    @Test(arguments: TestStoreKind.allCases) func commitSkippingAVersionWritesNothing(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        #expect(throws: CommitError.versionConflict(stored: 0)) { try store.commit(Self.commit("s-1", version: 2)) }
        try store.commit(Self.commit("s-1", version: 1))
        #expect(throws: CommitError.versionConflict(stored: 1)) { try store.commit(Self.commit("s-1", version: 3)) }
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 10).map(\.version) == [1])
        #expect(try store.session(id: "s-1")?.version == 1)
    }

    /// An action appends to the log and leaves the session's row as it was: the row's bytes do
    /// not change, the entry carries its tree only at a snapshot (every `LogSnapshots.interval`
    /// versions, with its handler and transition), the head row holds the newest tree, and
    /// reading the session joins the row and the head. The first entry, and the one after a
    /// snapshot, store the user's state they were judged with; the others only when told to.
    @Test(arguments: [TestStoreKind.sqlite]) func commitsAppendWithoutRewritingTheSessionRow(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedSQLiteStore()
        try store.insert(Self.session("s-1"))
        let row = { try store.pool.read { db in try Row.fetchOne(db, sql: "SELECT * FROM sessions WHERE id = 's-1'") } }
        let before = try row()
        let last = LogSnapshots.interval + 2
        for version in 1...last {
            var commit = Self.commit("s-1", version: version)
            commit.judgedUserState = "{\"v\":\(version)}"
            if version == 5 { commit.action.userState = "{\"changed\":true}" }
            try store.commit(commit)
        }
        #expect(try row() == before)
        let entries = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT version, tree, handled_by, transition, user_state FROM actions WHERE session_id = 's-1' ORDER BY version")
        }
        let snapshot = LogSnapshots.interval
        #expect(entries.filter { ($0[1] as Data?) != nil }.map { $0[0] as Int } == [snapshot])
        #expect(entries.filter { ($0[2] as String?) != nil || ($0[3] as String?) != nil }.map { $0[0] as Int } == [snapshot])
        #expect((entries[snapshot - 1][1] as Data?) == Data("{\"t\":\(snapshot)}".utf8))
        #expect(entries.filter { ($0[4] as String?) != nil }.map { $0[0] as Int } == [1, 5])
        #expect((entries[0][4] as String?) == "{\"v\":1}")
        let session = try #require(try store.session(id: "s-1"))
        #expect(session.version == last && session.tree == Array("{\"t\":\(last)}".utf8))
        #expect(session.lastTransition == "{\"type\":\"push\"}" && session.handledBy == "app" && session.flowVersions == "{\"app\":1}")
        // What a reader rebuilds from: the snapshot at or below `after`, and the entries after it.
        let slice = try #require(try store.actionLog(sessionId: "s-1", after: snapshot + 1, limit: 10))
        #expect(slice.startVersion == snapshot && slice.startTree == Array("{\"t\":\(snapshot)}".utf8))
        #expect(slice.entries.map(\.action.version) == [snapshot + 1, snapshot + 2])
        let early = try #require(try store.actionLog(sessionId: "s-1", after: 3, limit: 2))
        #expect(early.startVersion == 0 && early.startTree == Array("{\"t\":0}".utf8))
        #expect(early.entries.map(\.action.version) == [1, 2, 3, 4, 5])
        #expect(try store.actionLog(sessionId: "nope", after: 0, limit: 1) == nil)
    }

    /// A database written before migration 4 (the row rewritten at every action, entries without
    /// a tree) keeps its sessions where they stood, and their next actions go on from there.
    @Test(arguments: [TestStoreKind.sqlite]) func sessionsFromBeforeTheLogCarriedTreesGoOn(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try SQLiteStore(path: database.path)
        try store.migrate(Array(Migration.bundled(.sqlite).prefix(3)))
        try store.pool.write { db in
            // The row as the store of that schema wrote it (today's has columns added since).
            try db.execute(sql: """
                INSERT INTO users (id, state, created_at, updated_at) VALUES ('u-1', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
                INSERT INTO sessions (id, user_id, token_hash, version, tree, context, flags, experiments, flow_versions,
                    created_at, updated_at)
                VALUES ('old', 'u-1', x'010203', 0, '{"t":0}', '{}', '{}', '{}', '{"app":1}',
                    '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')
                """)
        }
        try store.pool.write { db in
            // What the old store wrote for two actions.
            for version in 1...2 {
                try db.execute(sql: """
                    INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition, created_at)
                    VALUES ('old', ?, 't', NULL, '{}', 0, 'app', '{"type":"pop"}', '2026-01-01T00:00:00.000Z')
                    """, arguments: [version])
            }
            try db.execute(sql: """
                UPDATE sessions SET version = 2, tree = '{"t":"old"}', last_transition = '{"type":"pop"}' WHERE id = 'old'
                """)
        }
        try store.migrate()
        let migrated = try #require(try store.session(id: "old"))
        #expect(migrated.version == 2 && migrated.tree == Array("{\"t\":\"old\"}".utf8))
        #expect(migrated.lastTransition == "{\"type\":\"pop\"}")
        #expect(throws: CommitError.versionConflict(stored: 2)) { try store.commit(Self.commit("old", version: 2)) }
        try store.commit(Self.commit("old", version: 3))
        let moved = try #require(try store.session(id: "old"))
        #expect(moved.version == 3 && moved.tree == Array("{\"t\":3}".utf8))
        #expect(try store.actions(sessionId: "old", after: 0, limit: 10).map(\.version) == [1, 2, 3])
    }

    /// User patches merge into the user's state; removing a key resets it.
    @Test(arguments: TestStoreKind.allCases) func mergesAndResetsUserState(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        try store.commit(Self.commit("s-1", version: 1, patch: "{\"onboarded\":true}"))
        try store.commit(Self.commit("s-1", version: 2, patch: "{\"plan\":\"pro\"}"))
        #expect(sameJSON(try store.user(id: "u-1")?.state, "{\"onboarded\":true,\"plan\":\"pro\"}"))
        #expect(sameJSON(try store.removeUserState(id: "u-1", key: "onboarded")?.state, "{\"plan\":\"pro\"}"))
        #expect(try store.removeUserState(id: "nobody", key: "onboarded") == nil)
        // Any key, a quote in it included, and only that key.
        try store.commit(Self.commit("s-1", version: 3, patch: #"{"q\"k":1,"qk":2}"#))
        #expect(sameJSON(try store.removeUserState(id: "u-1", key: "q\"k")?.state, #"{"plan":"pro","qk":2}"#))
    }

    /// An action's changes replace top-level keys only, as the engine and the server's cache
    /// apply them: a nested object is stored as given (not merged into the one stored, its nulls
    /// kept), a null removes its key, and any key can be set, a quote in it included.
    @Test(arguments: TestStoreKind.allCases) func userStateChangesReplaceTopLevelKeys(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        try store.commit(Self.commit("s-1", version: 1, patch: #"{"prefs":{"a":1,"b":2},"keep":1,"gone":true}"#))
        try store.commit(Self.commit("s-1", version: 2, patch: #"{"prefs":{"a":null},"gone":null,"q\"k":0.30000000000000004}"#))
        let state = try #require(try store.user(id: "u-1")?.state)
        #expect(sameJSON(state, #"{"keep":1,"prefs":{"a":null},"q\"k":0.30000000000000004}"#), "\(state)")
    }

    /// A user's stored state that is not a JSON object fails the commit that changes it, with an
    /// error naming no values; the session and the user are left as they were.
    @Test func aStateThatIsNotAnObjectFailsItsCommit() throws {
        let database = try TestDatabase(kind: .sqlite)
        defer { withExtendedLifetime(database) {} }
        let store = try SQLiteStore(path: database.path)
        try store.migrate()
        try store.insert(Self.session("s-1"))
        try store.pool.write { try $0.execute(sql: "UPDATE users SET state = '[1' WHERE id = 'u-1'") }
        #expect(throws: StoreError.undecodableRow(location: database.path, detail: "users.state is not a JSON object")) {
            try store.commit(Self.commit("s-1", version: 1, patch: #"{"plan":"pro"}"#))
        }
        #expect(try store.session(id: "s-1")?.version == 0)
        try store.commit(Self.commit("s-1", version: 1))
        #expect(try store.session(id: "s-1")?.version == 1, "the server goes on committing")
    }

    /// An idempotent answer is stored with its commit and found again by key.
    @Test(arguments: TestStoreKind.allCases) func storesIdempotentAnswers(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        try store.commit(Self.commit("s-1", version: 1, key: "key-1"))
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "key-1") == IdempotentAnswer(requestHash: [9], status: 200, version: 1, body: [7]))
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "key-2") == nil)
    }

    /// The server stores answers without their body (a replay makes it again from the log):
    /// one stored so reads back nil, by itself and among several, beside one with a body (an
    /// empty body is one, not none); the key is still refused a second time.
    @Test(arguments: TestStoreKind.allCases) func storesAnswersWithoutABody(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        let bodies: [[UInt8]?] = [nil, [7], [], nil]
        for (index, body) in bodies.enumerated() {
            var commit = Self.commit("s-1", version: index + 1)
            commit.idempotency = ("k\(index)", IdempotentAnswer(requestHash: [UInt8(index)], status: 200, version: index + 1, body: body))
            try store.commit(commit)
        }
        let found = try store.idempotentAnswers(sessionId: "s-1", keys: bodies.indices.map { "k\($0)" })
        for (index, body) in bodies.enumerated() {
            let expected = IdempotentAnswer(requestHash: [UInt8(index)], status: 200, version: index + 1, body: body)
            #expect(try store.idempotentAnswer(sessionId: "s-1", key: "k\(index)") == expected)
            #expect(found["k\(index)"] == expected)
        }
        var again = Self.commit("s-1", version: bodies.count + 1)
        again.idempotency = ("k0", IdempotentAnswer(requestHash: [0], status: 200, version: bodies.count + 1, body: nil))
        #expect(throws: CommitError.self) { try store.commit(again) }
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 10).count == bodies.count)
    }

    /// Deleting a session deletes its log and answers, and no other session's.
    @Test(arguments: TestStoreKind.allCases) func deleteCascades(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        try store.insert(Self.session("s-2"))
        try store.commit(Self.commit("s-1", version: 1, key: "k"))
        try store.commit(Self.commit("s-2", version: 1))
        #expect(try store.deleteSession(id: "s-1"))
        #expect(try store.deleteSession(id: "s-1") == false)
        #expect(try store.actions(sessionId: "s-1", after: 0, limit: 10).isEmpty)
        #expect(try store.idempotentAnswer(sessionId: "s-1", key: "k") == nil)
        #expect(try store.actions(sessionId: "s-2", after: 0, limit: 10).count == 1)
    }
}

extension SessionStoreTests {
    /// The client's time of an action is stored beside the server's and reads back as written;
    /// an action without one reads back nil.
    @Test(arguments: TestStoreKind.allCases) func clientTimeRoundTrips(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        var offline = Self.commit("s-1", version: 1)
        offline.action.clientAt = "2026-11-25T10:00:00.123Z"
        try store.commit(offline)
        try store.commit(Self.commit("s-1", version: 2))
        let log = try store.actions(sessionId: "s-1", after: 0, limit: 10)
        #expect(log.map(\.clientAt) == ["2026-11-25T10:00:00.123Z", nil])
        var stored = offline.action
        // Not a snapshot: its handler and transition are rebuilt by readers, not stored.
        (stored.handledBy, stored.transition) = (nil, nil)
        #expect(log.first == stored)
    }

    /// Several keys are looked up at once: those stored for this session come back by key, keys
    /// of another session, unknown keys and keys with quotes or commas do not.
    @Test(arguments: TestStoreKind.allCases) func looksUpSeveralKeysAtOnce(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(Self.session("s-1"))
        try store.insert(Self.session("s-2"))
        try store.commit(Self.commit("s-1", version: 1, key: "a"))
        try store.commit(Self.commit("s-1", version: 2, key: #"b",{"c\"#))
        try store.commit(Self.commit("s-2", version: 1, key: "d"))
        let found = try store.idempotentAnswers(sessionId: "s-1", keys: ["a", #"b",{"c\"#, "d", "e", "b"])
        #expect(found.keys.sorted() == ["a", #"b",{"c\"#])
        #expect(found["a"]?.version == 1)
        #expect(found[#"b",{"c\"#]?.version == 2)
        #expect(try store.idempotentAnswers(sessionId: "s-1", keys: []).isEmpty)
    }
}

extension SessionStoreTests {
    /// A batch writer that answers fewer results than commits does not leave the rest waiting
    /// forever: each commit without a result fails with `MissingResult`, and the mismatch is
    /// reported; extra results are ignored and reported too.
    @Test func missingResultsFailTheirCommits() throws {
        let reports = Mutex<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let group = GroupCommit(report: { line in reports.withLock { $0.append(line) } }) { batch, _ in
            gate.wait()  // let all four queue up, so they go in one batch
            return batch.count == 1 ? [.success(()), .success(())] : [.success(())]
        }
        defer { group.shutdown() }
        let done = DispatchSemaphore(value: 0)
        let outcomes = Mutex<[Result<Void, any Error>]>([])
        let commits = (1...4).map { SessionStoreTests.commit("m-1", version: $0) }
        group.submit(commits) { results in
            outcomes.withLock { $0 = results }
            done.signal()
        }
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success, "completions were dropped: the batch never finished")
        let missing = outcomes.withLock { $0.map { result -> Int? in
            if case .failure(let error as GroupCommit.MissingResult) = result { error.version } else { nil }
        } }
        #expect(missing == [nil, 2, 3, 4])
        #expect(outcomes.withLock { $0.count } == 4)
        #expect(reports.withLock { $0 } == ["group commit: the store answered 1 results for a batch of 4 commits; the 3 without one fail"])

        let single = DispatchSemaphore(value: 0)
        group.submit(SessionStoreTests.commit("m-2", version: 1)) { result in
            if case .failure = result { Issue.record("a commit with a result failed") }
            single.signal()
        }
        gate.signal()
        #expect(single.wait(timeout: .now() + 10) == .success)
        #expect(reports.withLock { $0.last } == "group commit: the store answered 2 results for a batch of 1 commits; the extra ones are ignored")
    }

    /// The results of `commits`, submitted as one session's batch, once their transaction is over.
    static func submitted(_ commits: [ActionCommit], to store: any FlowStore) -> [Result<Void, any Error>] {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<[Result<Void, any Error>]>([])
        store.submit(commits) { results in
            box.withLock { $0 = results }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }
    }

    /// Successive commits of one session submitted together apply in order; once one fails,
    /// every later one fails too (its version is not next), so no version is written on top of
    /// a missing one, and a key already used refuses its commit.
    @Test(arguments: TestStoreKind.allCases) func successiveCommitsSubmittedTogether(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(SessionStoreTests.session("b-1"))
        let commits = [1, 2, 4, 5].map { SessionStoreTests.commit("b-1", version: $0, key: "k\($0)") }
        let failed = Self.submitted(commits, to: store).map { if case .failure = $0 { true } else { false } }
        #expect(failed == [false, false, true, true])
        #expect(try store.actions(sessionId: "b-1", after: 0, limit: 10).map(\.version) == [1, 2])
        let reused = [SessionStoreTests.commit("b-1", version: 3, key: "k1"), SessionStoreTests.commit("b-1", version: 4)]
        #expect(Self.submitted(reused, to: store).map { if case .failure = $0 { true } else { false } } == [true, true])
        #expect(try store.session(id: "b-1")?.version == 2)
        #expect(Self.submitted([], to: store).isEmpty)
    }

    /// Every commit of a batch stores its own texts and blobs, however many commits and sessions
    /// the batch holds and whatever their lengths: on SQLite the writer keeps a commit's values in
    /// an arena it reuses for the next commit (`BindArena`; debug builds overwrite what a reset
    /// frees), and a value longer than the arena (params of 20,000 bytes) is copied by SQLite
    /// instead. A snapshot's entry (version 64) binds its tree, transition and handler there too.
    @Test(arguments: TestStoreKind.allCases) func aBatchStoresEachCommitsOwnTexts(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let sessions = ["t-1", "t-22", "t-333"]
        for id in sessions { try store.insert(SessionStoreTests.session(id)) }
        var commits: [ActionCommit] = []
        for version in 1...4 {
            for (index, id) in sessions.enumerated() {
                let long = version == 3 && index == 1
                let params = long ? "{\"text\":\"\(String(repeating: "p", count: 20_000))\"}" : "{\"n\":\(version * 10 + index)}"
                let action = ActionRecord(version: version, type: "type.\(id).\(version)", source: index == 0 ? nil : "e\(index)\(version)",
                                          params: params, interactive: index == 2, handledBy: "app", transition: "{}",
                                          createdAt: "2026-12-02T04:0\(version):0\(index).000Z",
                                          clientAt: index == 1 ? "2026-12-02T03:00:0\(version).000Z" : nil,
                                          userState: index == 2 ? "{\"seen\":\(version)}" : nil)
                commits.append(ActionCommit(sessionId: id, userId: "u-1", version: version, tree: Array("{\"t\":\(version)}".utf8),
                                            action: action,
                                            idempotency: ("key-\(id)-\(version)-" + String(repeating: "k", count: version * 7),
                                                          IdempotentAnswer(requestHash: Array(repeating: UInt8(version * 16 + index), count: 32),
                                                                           status: 200, version: version, body: nil))))
            }
        }
        // Two batches, so that the second reuses what the first left behind.
        let results = Self.submitted(Array(commits[..<6]), to: store) + Self.submitted(Array(commits[6...]), to: store)
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
        for id in sessions {
            let written = commits.filter { $0.sessionId == id }
            let stored = try store.actions(sessionId: id, after: 0, limit: 10)
            #expect(stored.map(\.version) == written.map(\.version))
            for (commit, entry) in zip(written, stored) {
                #expect(entry.type == commit.action.type)
                #expect(entry.source == commit.action.source)
                #expect(entry.params == commit.action.params)
                #expect(entry.interactive == commit.action.interactive)
                #expect(entry.createdAt == commit.action.createdAt)
                #expect(entry.clientAt == commit.action.clientAt)
                #expect(entry.userState == commit.action.userState)
                let key = try #require(commit.idempotency?.key)
                let answer = try store.idempotentAnswer(sessionId: id, key: key)
                #expect(answer?.version == commit.version)
                #expect(answer?.requestHash == commit.idempotency?.answer.requestHash)
            }
        }
        // One session to its first snapshot, 16 commits a batch.
        try store.insert(SessionStoreTests.session("t-64"))
        let toSnapshot = (1...LogSnapshots.interval).map { version in
            var commit = SessionStoreTests.commit("t-64", version: version, key: "snap-\(version)")
            commit.action.handledBy = "flow.\(version)"
            commit.action.transition = "{\"type\":\"push\",\"v\":\(version)}"
            commit.tree = Array("{\"tree\":\(version),\"pad\":\"\(String(repeating: "t", count: version))\"}".utf8)
            return commit
        }
        for start in stride(from: 0, to: toSnapshot.count, by: 16) {
            let results = Self.submitted(Array(toSnapshot[start..<start + 16]), to: store)
            #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
        }
        let last = try #require(toSnapshot.last)
        let slice = try #require(try store.actionLog(sessionId: "t-64", after: last.version, limit: 1))
        #expect(slice.startVersion == last.version && slice.startTree == last.tree)
        let snapshot = try #require(try store.actions(sessionId: "t-64", after: last.version - 1, limit: 1).first)
        #expect(snapshot.version == last.version && snapshot.handledBy == last.action.handledBy)
        #expect(snapshot.transition == last.action.transition)
    }

    /// A commit that follows another (the next tap of a batch) is not written on top of another
    /// writer's entry: when that writer took the previous tap's version, both fail, where the
    /// version check alone would have let the second land on the writer's entry.
    @Test(arguments: TestStoreKind.allCases) func followingCommitsNeedTheirPredecessor(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        try store.insert(SessionStoreTests.session("f-1"))
        try store.commit(SessionStoreTests.commit("f-1", version: 1, key: "tap-1"))
        try store.commit(SessionStoreTests.commit("f-1", version: 2, key: "elsewhere"))  // another writer
        var next = SessionStoreTests.commit("f-1", version: 3, key: "tap-3")
        next.follows = "tap-2"
        let taps = [SessionStoreTests.commit("f-1", version: 2, key: "tap-2"), next]
        let outcomes = Self.submitted(taps, to: store)
        #expect(outcomes.map { if case .failure(CommitError.versionConflict) = $0 { true } else { false } } == [true, true])
        #expect(try store.session(id: "f-1")?.version == 2)
        next.follows = "elsewhere"
        try store.commit(next)
        #expect(try store.actions(sessionId: "f-1", after: 0, limit: 10).map(\.version) == [1, 2, 3])
    }

    /// Concurrent commits on many sessions all land, in order per session, while stale commits
    /// mixed into the same transactions fail alone.
    @Test(arguments: TestStoreKind.allCases) func concurrentCommitsShareTransactionsAndFailAlone(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        for index in 0..<16 { try store.insert(SessionStoreTests.session("g\(index)")) }
        let conflicts = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            for version in 1...25 {
                do {
                    try store.commit(SessionStoreTests.commit("g\(index)", version: version))
                } catch {
                    Issue.record("commit \(version) of g\(index) failed: \(error)")
                }
                // A duplicate of the commit just made: stale, refused, and harmless to the batch.
                if (try? store.commit(SessionStoreTests.commit("g\(index)", version: version))) == nil {
                    conflicts.withLock { $0 += 1 }
                }
            }
        }
        #expect(conflicts.withLock { $0 } == 16 * 25)
        for index in 0..<16 {
            #expect(try store.session(id: "g\(index)")?.version == 25)
            #expect(try store.actions(sessionId: "g\(index)", after: 0, limit: 100).map(\.version) == Array(1...25))
        }
    }
}

/// Whether two JSON texts hold the same value (PostgreSQL's jsonb orders keys its own way).
func sameJSON(_ a: String?, _ b: String) -> Bool {
    guard let a, let left = try? JSONSerialization.jsonObject(with: Data(a.utf8)),
          let right = try? JSONSerialization.jsonObject(with: Data(b.utf8)) else { return false }
    return (left as? NSObject) == (right as? NSObject)
}

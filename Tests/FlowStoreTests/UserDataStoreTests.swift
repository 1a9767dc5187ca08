// Erasure and export of one user's data on SQLite and on PostgreSQL (each a named case): every
// table emptied of exactly that user, reports that no longer count them, commits that cannot bring
// them back.
import FlowStore
import Foundation
import GRDB
@testable import PostgresStore
@testable import SQLiteStore
import StoreTestSupport
import Synchronization
import Testing

@Suite("User data store")
struct UserDataStoreTests {
    static let stamp = AuditStamp(credential: "admin")

    /// User `user` with three sessions: `<user>-live` in experiment `exp` (variant `a`), onboarded
    /// through a commit with an Idempotency-Key, a stream ticket and a rollout row;
    /// `<user>-excluded` kept out of `exp`; `<user>-gone`, in `exp`, deleted since (its
    /// experiment records and rollout row stay, as they do). An onboarding reset audited by id.
    static func populate(_ store: any FlowStore, user: String) throws -> [String] {
        let live = "\(user)-live", excluded = "\(user)-excluded", gone = "\(user)-gone"
        try store.insert(SessionStoreTests.session(live, user: user), exposures: [("exp", "a")], exclusions: [], firstFeature: "first")
        try store.insert(SessionStoreTests.session(excluded, user: user), exposures: [], exclusions: [("exp", "b")], firstFeature: nil)
        try store.insert(SessionStoreTests.session(gone, user: user), exposures: [("exp", "b")], exclusions: [], firstFeature: "first")
        var commit = SessionStoreTests.commit(live, version: 1, user: user, patch: #"{"onboarded":true}"#, key: "k-1")
        commit.reachedFeature = "home"
        commit.completesOnboarding = true
        try store.commit(commit)
        try store.commit(SessionStoreTests.commit(live, version: 2, user: user))
        try store.commit(SessionStoreTests.commit(gone, version: 1, user: user))
        let now = Int(Date().timeIntervalSince1970 * 1000)
        try store.insertStreamTicket(hash: Array("\(user)-ticket".utf8), sessionId: live, expiresAt: now + 60_000, endsAt: now + 60_000, now: now)
        try store.insertRolloutSession(sessionId: live, releaseId: 7, arm: "new", at: Timestamp.string())
        try store.markRolloutSession(sessionId: live, .converted)
        try store.insertRolloutSession(sessionId: gone, releaseId: 7, arm: "new", at: Timestamp.string())
        _ = try store.removeUserState(id: user, key: "x", audit: AuditStamp(credential: "admin", action: "user.x.reset"))
        try store.deleteSession(id: gone)
        return [live, excluded, gone]
    }

    /// Runs `sql` (placeholders `$1`, `$2`, … on both stores) and answers its rows as text.
    static func rows(_ store: any FlowStore, _ sql: String, _ arguments: [String] = []) throws -> [[String?]] {
        if let sqlite = store as? SQLiteStore {
            return try sqlite.pool.read { db in
                try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                    row.databaseValues.map { value -> String? in
                        switch value.storage {
                        case .null: nil
                        case .int64(let number): String(number)
                        case .double(let number): String(number)
                        case .string(let text): text
                        case .blob(let data): data.base64EncodedString()
                        }
                    }
                }
            }
        }
        let postgres = try #require(store as? PostgresStore)
        let result = try postgres.read([PGStatement(sql, arguments.map { .text($0) })])[0]
        return result.values
    }

    /// Every table of the schema with the columns that can name a user or a session.
    static func personalColumns(_ store: any FlowStore) throws -> [(table: String, columns: [String])] {
        let tables: [String]
        if store.dialect == .sqlite {
            tables = try rows(store, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").compactMap { $0[0] }
        } else {
            tables = try rows(store, """
                SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                ORDER BY table_name
                """).compactMap { $0[0] }
        }
        return try tables.map { table in
            let columns = store.dialect == .sqlite
                ? try rows(store, "SELECT name FROM pragma_table_info($1)", [table]).compactMap { $0[0] }
                : try rows(store, """
                    SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1
                    """, [table]).compactMap { $0[0] }
            return (table, columns)
        }
    }

    /// Per table, the rows that name `user` or one of `sessions`: by a `user_id` or
    /// `session_id` column, the `id` of users and sessions, or the audit log's `subject`.
    static func footprint(_ store: any FlowStore, user: String, sessions: [String]) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (table, columns) in try personalColumns(store) {
            var conditions: [String] = []
            let list = sessions.map { "'\($0)'" }.joined(separator: ", ")
            if columns.contains("user_id") { conditions.append("user_id = '\(user)'") }
            if columns.contains("session_id") { conditions.append("session_id IN (\(list))") }
            if table == "users" { conditions.append("id = '\(user)'") }
            if table == "sessions" { conditions.append("id IN (\(list))") }
            if columns.contains("subject") { conditions.append("subject = '\(user)'") }
            guard !conditions.isEmpty else { continue }
            let count = try rows(store, "SELECT COUNT(*) FROM \(table) WHERE " + conditions.joined(separator: " OR "))
            counts[table] = Int(count.first?.first.flatMap { $0 } ?? "0") ?? 0
        }
        return counts
    }

    /// Erasure removes every row that names the user or one of their sessions, in every table
    /// of the schema (found by walking it: a table added later that names users or sessions is
    /// checked too), counts what it removed, and leaves another user's rows as they were.
    @Test(arguments: TestStoreKind.allCases) func erasureEmptiesEveryTableOfThatUserOnly(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let erasedSessions = try Self.populate(store, user: "u-1")
        let keptSessions = try Self.populate(store, user: "u-2")
        let before = try Self.footprint(store, user: "u-1", sessions: erasedSessions)
        #expect(before.values.reduce(0, +) > 0)
        let kept = try Self.footprint(store, user: "u-2", sessions: keptSessions)

        let erased = try store.eraseUser(id: "u-1", auditSubject: "sha256:u1", audit: Self.stamp)

        let after = try Self.footprint(store, user: "u-1", sessions: erasedSessions)
        #expect(after.filter { $0.value > 0 }.isEmpty, "rows left: \(after.filter { $0.value > 0 })")
        #expect(try Self.footprint(store, user: "u-2", sessions: keptSessions) == kept)
        #expect(erased.users == 1)
        #expect(erased.sessions == 2, "live and excluded; gone was deleted before")
        #expect(erased.actions == 2)
        #expect(erased.idempotencyKeys == 1)
        #expect(erased.exposures == 2)
        #expect(erased.exclusions == 1)
        #expect(erased.sessionFeatures == 3, "first and home of live, first of gone")
        #expect(erased.streamTickets == 1)
        #expect(erased.rolloutSessions == 2)
        #expect(erased.auditEntries == 1)
        #expect(Set(erased.sessionIds) == Set(erasedSessions))
        #expect(try store.user(id: "u-1") == nil)
        #expect(try store.session(id: "u-1-live") == nil)
        #expect(try store.exportUser(id: "u-1", limits: UserExportLimits()).isEmpty)
    }

    /// Erasing again removes nothing and says so; each erasure is in the audit log under the
    /// subject given, with its counts, and no entry names the user in clear any more.
    @Test(arguments: TestStoreKind.allCases) func erasureIsRepeatableAndAuditedWithoutTheId(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        _ = try Self.populate(store, user: "u-1")
        _ = try store.eraseUser(id: "u-1", auditSubject: "sha256:u1", audit: Self.stamp)
        let again = try store.eraseUser(id: "u-1", auditSubject: "sha256:u1", audit: AuditStamp(credential: "key:ops"))
        #expect(again.counts.allSatisfy { $0.count == 0 }, "\(again.counts)")
        #expect(again.sessionIds.isEmpty)
        let log = try store.auditLog(after: 0, limit: 100)
        #expect(!log.contains { $0.subject == "u-1" || ($0.detail ?? "").contains("u-1") })
        let erasures = log.filter { $0.action == AuditAction.userErase }
        #expect(erasures.map(\.subject) == ["sha256:u1", "sha256:u1"])
        #expect(erasures.map(\.credential) == ["admin", "key:ops"])
        #expect(erasures.first?.detail?.hasPrefix(#"{"users":1,"sessions":2,"actions":2,"#) == true)
        #expect(erasures.last?.detail == #"{"users":0,"sessions":0,"actions":0,"idempotencyKeys":0,"exposures":0,"exclusions":0,"sessionFeatures":0,"streamTickets":0,"rolloutSessions":0,"auditEntries":0}"#)
        #expect(log.contains { $0.action == "user.x.reset" && $0.subject == "sha256:u1" })
    }

    /// A commit of an erased session fails as `sessionNotFound` and writes nothing: no log entry,
    /// and its user-state change does not bring the user's row back.
    @Test(arguments: TestStoreKind.allCases) func commitAfterErasureWritesNothing(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        _ = try Self.populate(store, user: "u-1")
        _ = try store.eraseUser(id: "u-1", auditSubject: "sha256:u1", audit: Self.stamp)
        var commit = SessionStoreTests.commit("u-1-live", version: 3, user: "u-1", patch: #"{"onboarded":true}"#, key: "k-2")
        commit.reachedFeature = "home"
        commit.completesOnboarding = true
        #expect(throws: CommitError.sessionNotFound) { try store.commit(commit) }
        #expect(try store.user(id: "u-1") == nil)
        #expect(try store.actions(sessionId: "u-1-live", after: 0, limit: 10).isEmpty)
        #expect(try store.idempotentAnswer(sessionId: "u-1-live", key: "k-2") == nil)
        #expect(try Self.footprint(store, user: "u-1", sessions: ["u-1-live"]).values.allSatisfy { $0 == 0 })
    }

    /// A real race: threads create sessions for the user and commit actions that change the
    /// user's state while the user is erased. Every commit either came first (and its rows
    /// were erased) or failed as `sessionNotFound`; afterwards no row of a session from before
    /// the erasure is left, and every session left (made after it) has its user's row.
    @Test(arguments: TestStoreKind.allCases) func erasureRacingCommitsAndCreationsLeavesNoOrphans(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        let before = (0..<8).map { "race-\($0)" }
        for id in before { try store.insert(SessionStoreTests.session(id, user: "u-r"), exposures: [("exp", "a")], firstFeature: "first") }
        let erasedAt = Atomic<Int>(0)
        let unexpected = Mutex<[String]>([])
        let created = Mutex<[String]>([])
        let clock = Atomic<Int>(0)
        // A thread each (concurrentPerform runs two at a time on two cores, one after the other).
        let done = DispatchGroup()
        let work: @Sendable (Int) -> Void = { worker in
            if worker == 8 {
                Thread.sleep(forTimeInterval: 0.02)
                do {
                    _ = try store.eraseUser(id: "u-r", auditSubject: "sha256:ur", audit: Self.stamp)
                } catch {
                    unexpected.withLock { $0.append("erase: \(error)") }
                }
                erasedAt.store(clock.add(1, ordering: .sequentiallyConsistent).newValue, ordering: .sequentiallyConsistent)
                return
            }
            let id = before[worker]
            var erased = false
            for version in 1...40 {
                if !erased {
                    var commit = SessionStoreTests.commit(id, version: version, user: "u-r", patch: #"{"n":\#(version)}"#, key: "k\(version)")
                    commit.reachedFeature = "f\(version)"
                    do {
                        try store.commit(commit)
                    } catch CommitError.sessionNotFound {
                        erased = true
                    } catch {
                        unexpected.withLock { $0.append("\(id) v\(version): \(error)") }
                        erased = true
                    }
                }
                if version % 5 == 0 {
                    // Creations go on after the erasure: those made after it stay, with their user.
                    let fresh = "race-new-\(worker)-\(version)"
                    do {
                        try store.insert(SessionStoreTests.session(fresh, user: "u-r"))
                        created.withLock { $0.append(fresh) }
                    } catch {
                        unexpected.withLock { $0.append("insert \(fresh): \(error)") }
                    }
                }
                _ = clock.add(1, ordering: .sequentiallyConsistent)
            }
        }
        for worker in 0..<9 {
            done.enter()
            Thread { work(worker); done.leave() }.start()
        }
        done.wait()
        #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 })")
        #expect(erasedAt.load(ordering: .relaxed) > 0)
        let left = try Self.footprint(store, user: "nobody", sessions: before)
        #expect(left.values.allSatisfy { $0 == 0 }, "rows of sessions from before the erasure: \(left.filter { $0.value > 0 })")
        let survivors = try Self.rows(store, "SELECT id FROM sessions WHERE user_id = $1", ["u-r"]).compactMap { $0[0] }
        #expect(Set(survivors).isSubset(of: Set(created.withLock { $0 })))
        if !survivors.isEmpty {
            #expect(try store.user(id: "u-r") != nil, "sessions made after the erasure have their user")
        }
        let orphans = try Self.rows(store, """
            SELECT COUNT(*) FROM session_features f WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = f.session_id)
            """)
        #expect(orphans.first?.first.flatMap { $0 } == "0")
    }

    /// Reports computed after the erasure differ from those before by exactly the user's rows:
    /// the experiment report (sessions, onboarded, funnel, excluded), the rollout's guardrail
    /// counts, and the sessions that activation impact counts.
    @Test(arguments: TestStoreKind.allCases) func reportsNoLongerCountTheUser(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        _ = try Self.populate(store, user: "u-1")
        _ = try Self.populate(store, user: "u-2")
        _ = try Self.populate(store, user: "u-3")
        let report = try store.experimentReport("exp")
        let rollout = try store.rolloutCounts(releaseId: 7)
        let clients = try store.clientCounts(createdSince: "2000-01-01", limit: 10).total
        _ = try store.eraseUser(id: "u-1", auditSubject: "sha256:u1", audit: Self.stamp)
        let after = try store.experimentReport("exp")
        // u-1 had, in `a`: one session (onboarded, first and home); in `b`: one session (first)
        // and one exclusion.
        #expect(after["a"] == ExperimentVariantCounts(sessions: (report["a"]?.sessions ?? 0) - 1, onboarded: (report["a"]?.onboarded ?? 0) - 1,
                                                      funnel: ["first": 2, "home": 2], excluded: 0))
        #expect(after["b"] == ExperimentVariantCounts(sessions: (report["b"]?.sessions ?? 0) - 1, onboarded: 0,
                                                      funnel: ["first": 2], excluded: (report["b"]?.excluded ?? 0) - 1))
        #expect(report["a"]?.sessions == 3 && report["b"]?.excluded == 3)
        let rolloutAfter = try store.rolloutCounts(releaseId: 7)
        #expect(rolloutAfter["new"]?.sessions == (rollout["new"]?.sessions ?? 0) - 2)
        #expect(rolloutAfter["new"]?.conversions == (rollout["new"]?.conversions ?? 0) - 1)
        #expect(try store.clientCounts(createdSince: "2000-01-01", limit: 10).total == clients - 2)
    }

    /// The export holds everything stored about the user, read in one transaction: their row,
    /// each session as it stands (newest tree) with its log and keys, experiment records of
    /// sessions deleted earlier too, funnel and rollout rows; and within its bounds it says
    /// `truncated`, per session where a log was cut.
    @Test(arguments: TestStoreKind.allCases) func exportHoldsEverythingWithinItsBounds(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        _ = try Self.populate(store, user: "u-1")
        _ = try Self.populate(store, user: "u-2")
        let export = try store.exportUser(id: "u-1", limits: UserExportLimits())
        #expect(export.user?.state.replacingOccurrences(of: " ", with: "") == #"{"onboarded":true}"#, "jsonb spaces it")
        #expect(Set(export.sessions.map(\.session.id)) == ["u-1-live", "u-1-excluded"])
        let live = try #require(export.sessions.first { $0.session.id == "u-1-live" })
        #expect(live.session.version == 2)
        #expect(live.session.tree == Array("{\"t\":2}".utf8))
        #expect(live.actions.map(\.version) == [1, 2])
        #expect(!live.actionsTruncated)
        #expect(live.idempotencyKeys.map(\.key) == ["k-1"])
        #expect(live.idempotencyKeys.first?.version == 1)
        #expect(Set(export.exposures.map(\.sessionId)) == ["u-1-live", "u-1-gone"])
        #expect(export.exposures.first { $0.sessionId == "u-1-live" }?.onboarded == true)
        #expect(export.exclusions.map(\.sessionId) == ["u-1-excluded"])
        #expect(Set(export.features.map { "\($0.sessionId) \($0.feature)" }) == ["u-1-live first", "u-1-live home", "u-1-gone first"])
        #expect(Set(export.rolloutSessions.map(\.sessionId)) == ["u-1-live", "u-1-gone"])
        #expect(export.rolloutSessions.first { $0.sessionId == "u-1-live" }?.marks == .converted)
        #expect(!export.truncated)

        let bounded = try store.exportUser(id: "u-1", limits: UserExportLimits(sessions: 1, actions: 1, rows: 1))
        #expect(bounded.truncated)
        #expect(bounded.sessions.count == 1)
        #expect(bounded.exposures.count == 1 && bounded.features.count == 1 && bounded.rolloutSessions.count == 1)
        let onlyLive = try store.exportUser(id: "u-1", limits: UserExportLimits(sessions: 10, actions: 1, rows: 10))
        let cut = try #require(onlyLive.sessions.first { $0.session.id == "u-1-live" })
        #expect(cut.actions.map(\.version) == [1])
        #expect(cut.actionsTruncated)
        #expect(onlyLive.sessions.first { $0.session.id == "u-1-excluded" }?.actionsTruncated == false, "no log to cut")
        #expect(try store.exportUser(id: "nobody", limits: UserExportLimits()).isEmpty)
    }

    /// Each statement of an erasure and of an export finds the user's rows through an index,
    /// never by scanning a whole table (migrations sqlite 0015, postgresql 0012). PostgreSQL
    /// plans tiny tables as scans whatever their indexes, so there sequential scans are turned
    /// off for the check: a plan that still scans has no index to use.
    @Test(arguments: TestStoreKind.allCases) func erasureUsesIndexes(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        if let sqlite = store as? SQLiteStore {
            let statements = [SQLiteStore.userSessionsSQL] + SQLiteStore.erasureBySessionSQL + SQLiteStore.erasureByUserSQL
                + [SQLiteStore.erasureAuditSQL]
            for sql in statements {
                let literal = sql.replacingOccurrences(of: "?1", with: "'x'").replacingOccurrences(of: "?2", with: "'y'")
                    .replacingOccurrences(of: "?", with: "'x'")
                let plan = try sqlite.pool.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + literal).map { $0["detail"] as String? ?? "" }
                }
                // A delete by key shows no plan row at all, or SEARCH ... USING INDEX.
                #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(sql): \(plan)")
            }
        } else {
            let postgres = try #require(store as? PostgresStore)
            let statements = PostgresStore.erasureBySessionSQL.map { $0.replacingOccurrences(of: "$1::text[]", with: "ARRAY['x']") }
                + PostgresStore.erasureByUserSQL.map { $0.replacingOccurrences(of: "$1::text", with: "'x'") }
                + ["UPDATE audit_log SET subject = 'y' WHERE subject = 'x' AND action LIKE 'user.%'",
                   "SELECT id FROM sessions WHERE user_id = 'x' ORDER BY id COLLATE \"C\" FOR UPDATE"]
            for sql in statements {
                let result = try postgres.read([PGStatement("BEGIN"), PGStatement("SET LOCAL enable_seqscan = off"),
                                                PGStatement("EXPLAIN " + sql), PGStatement("ROLLBACK")])
                let plan = result[2].values.compactMap { $0.first ?? nil }
                #expect(!plan.contains { $0.contains("Seq Scan") }, "\(sql): \(plan)")
            }
        }
    }
}

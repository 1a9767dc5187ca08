// What the stores keep of rollouts, on SQLite and on PostgreSQL (each a named case): one rollout
// per release, moves that are compare-and-sets, and per-side guardrail counts.
import FlowStore
import Foundation
import StoreTestSupport
import Testing

@Suite("Rollout store")
struct RolloutStoreTests {
    static func rollout(_ releaseId: Int, percentage: Int = 10) -> RolloutRecord {
        let now = Timestamp.string()
        return RolloutRecord(releaseId: releaseId, state: RolloutRecord.rollingOut, percentage: percentage,
                             plan: #"{"percentage":10}"#, flows: #"{"onboarding":2}"#, nextStepAt: now, startedAt: now, updatedAt: now)
    }

    /// A rollout is stored once per release and read back as stored; listing filters by state.
    @Test(arguments: TestStoreKind.allCases) func rolloutsRoundTripOncePerRelease(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        let first = Self.rollout(3)
        #expect(try store.insertRollout(first))
        #expect(try store.insertRollout(Self.rollout(3, percentage: 50)) == false)
        #expect(try store.rollout(releaseId: 3) == first)
        #expect(try store.rollout(releaseId: 4) == nil)
        var done = Self.rollout(5)
        done.state = RolloutRecord.completed
        #expect(try store.insertRollout(done))
        #expect(try store.rollouts(state: nil).map(\.releaseId) == [5, 3])
        #expect(try store.rollouts(state: RolloutRecord.rollingOut).map(\.releaseId) == [3])
    }

    /// One rollout in progress at a time, whichever node starts it: a second release's rollout is
    /// refused while the first runs, and taken once it has ended.
    @Test(arguments: TestStoreKind.allCases) func oneRolloutInProgress(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        #expect(try store.insertRollout(Self.rollout(1)))
        #expect(try store.insertRollout(Self.rollout(2)) == false)
        #expect(try store.rollout(releaseId: 2) == nil)
        var ended = Self.rollout(1)
        ended.state = RolloutRecord.rolledBack
        #expect(try store.updateRollout(releaseId: 1, from: (RolloutRecord.rollingOut, 10), to: ended))
        #expect(try store.insertRollout(Self.rollout(2)))
        #expect(try store.rollouts(state: RolloutRecord.rollingOut).map(\.releaseId) == [2])
    }

    /// A move applies only from the state and percentage it was judged on: of two nodes rolling
    /// back the same rollout, one wins and the other changes nothing.
    @Test(arguments: TestStoreKind.allCases) func movesAreCompareAndSet(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        let start = Self.rollout(7)
        #expect(try store.insertRollout(start))
        var raised = start
        raised.percentage = 50
        raised.nextStepAt = nil
        #expect(try store.updateRollout(releaseId: 7, from: (RolloutRecord.rollingOut, 10), to: raised, audit: AuditStamp(credential: "key:ops")))
        // A move that did not happen writes no entry.
        #expect(try store.updateRollout(releaseId: 7, from: (RolloutRecord.rollingOut, 10), to: raised, audit: AuditStamp(credential: "key:late")) == false)
        let entries = try store.auditLog(after: 0, limit: 100).filter { $0.action == "rollout.raise" }
        #expect(entries.map { [$0.subject, "\($0.oldVersion ?? -1)", "\($0.newVersion ?? -1)", $0.credential] } == [["7", "10", "50", "key:ops"]])
        var back = raised
        back.state = RolloutRecord.rolledBack
        back.verdict = "rolled back: refused actions 31% vs 0%"
        #expect(try store.updateRollout(releaseId: 7, from: (RolloutRecord.rollingOut, 10), to: back) == false)
        #expect(try store.updateRollout(releaseId: 7, from: (RolloutRecord.rollingOut, 50), to: back))
        #expect(try store.updateRollout(releaseId: 7, from: (RolloutRecord.rollingOut, 50), to: back) == false)
        #expect(try store.rollout(releaseId: 7) == back)
    }

    /// Sessions count per side; marks only ever set (twice is once), a session in no rollout is
    /// left alone, and a second insert of a session changes nothing.
    @Test(arguments: TestStoreKind.allCases) func guardrailCountsPerSide(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        let store = try database.migratedStore()
        defer { try? store.close() }
        let at = Timestamp.string()
        for index in 0..<4 { try store.insertRolloutSession(sessionId: "n\(index)", releaseId: 2, arm: "new", at: at) }
        for index in 0..<3 { try store.insertRolloutSession(sessionId: "o\(index)", releaseId: 2, arm: "old", at: at) }
        try store.insertRolloutSession(sessionId: "n0", releaseId: 2, arm: "old", at: at)
        try store.insertRolloutSession(sessionId: "x", releaseId: 9, arm: "new", at: at)
        try store.markRolloutSession(sessionId: "n0", .refused)
        try store.markRolloutSession(sessionId: "n0", .refused)
        try store.markRolloutSession(sessionId: "n1", [.refused, .deadEnd])
        try store.markRolloutSession(sessionId: "n1", .converted)
        try store.markRolloutSession(sessionId: "o2", .converted)
        try store.markRolloutSession(sessionId: "nobody", .refused)
        #expect(try store.rolloutCounts(releaseId: 2) == [
            "new": GuardrailCounts(sessions: 4, refused: 2, deadEnds: 1, conversions: 1),
            "old": GuardrailCounts(sessions: 3, refused: 0, deadEnds: 0, conversions: 1),
        ])
        #expect(try store.rolloutCounts(releaseId: 9)["new"]?.sessions == 1)
        #expect(try store.rolloutCounts(releaseId: 1).isEmpty)
    }
}

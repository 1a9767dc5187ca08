// Rollouts and their sessions' guardrail outcomes on SQLite.
import FlowStore
import Foundation
import GRDB

extension SQLiteStore {
    public func insertRollout(_ rollout: RolloutRecord) throws -> Bool {
        try writing { db in
            try db.execute(sql: """
                INSERT INTO rollouts (release_id, state, percentage, plan, flows, next_step_at, verdict, started_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """, arguments: [rollout.releaseId, rollout.state, rollout.percentage, rollout.plan, rollout.flows,
                                 rollout.nextStepAt, rollout.verdict, rollout.startedAt, rollout.updatedAt])
            return db.changesCount == 1
        }
    }

    public func rollout(releaseId: Int) throws -> RolloutRecord? {
        try reading { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.rolloutColumns) FROM rollouts WHERE release_id = ?",
                             arguments: [releaseId]).map(Self.rolloutRecord)
        }
    }

    public func rollouts(state: String?) throws -> [RolloutRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.rolloutColumns) FROM rollouts WHERE ? IS NULL OR state = ? ORDER BY release_id DESC
                """, arguments: [state, state]).map(Self.rolloutRecord)
        }
    }

    public func updateRollout(releaseId: Int, from: (state: String, percentage: Int), to: RolloutRecord,
                              audit: AuditStamp?) throws -> Bool {
        try writing { db in
            try db.execute(sql: """
                UPDATE rollouts SET state = ?, percentage = ?, plan = ?, flows = ?, next_step_at = ?, verdict = ?, updated_at = ?
                WHERE release_id = ? AND state = ? AND percentage = ?
                """, arguments: [to.state, to.percentage, to.plan, to.flows, to.nextStepAt, to.verdict, to.updatedAt,
                                 releaseId, from.state, from.percentage])
            guard db.changesCount == 1 else { return false }
            if let audit {
                try Self.appendAudit(db, at: to.updatedAt, action: audit.action ?? "rollout.raise", subject: String(releaseId),
                                     old: from.percentage, new: to.percentage, audit)
            }
            return true
        }
    }

    public func insertRolloutSession(sessionId: String, releaseId: Int, arm: String, at: String) throws {
        try writing { db in
            try db.cachedStatement(sql: """
                INSERT INTO rollout_sessions (session_id, release_id, arm, created_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (session_id) DO NOTHING
                """).execute(arguments: [sessionId, releaseId, arm, at])
        }
    }

    public func markRolloutSession(sessionId: String, _ marks: GuardrailMarks) throws {
        guard !marks.isEmpty else { return }
        try writing { db in
            try db.cachedStatement(sql: """
                UPDATE rollout_sessions SET refused = MAX(refused, ?), dead_end = MAX(dead_end, ?), converted = MAX(converted, ?)
                WHERE session_id = ?
                """).execute(arguments: [marks.contains(.refused) ? 1 : 0, marks.contains(.deadEnd) ? 1 : 0,
                                         marks.contains(.converted) ? 1 : 0, sessionId])
        }
    }

    public func rolloutCounts(releaseId: Int) throws -> [String: GuardrailCounts] {
        try reading { db in
            var counts: [String: GuardrailCounts] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT arm, COUNT(*), SUM(refused), SUM(dead_end), SUM(converted) FROM rollout_sessions
                WHERE release_id = ? GROUP BY arm
                """, arguments: [releaseId]) {
                counts[try row.decode(atIndex: 0)] = GuardrailCounts(sessions: try row.decode(atIndex: 1), refused: try row.decode(atIndex: 2), deadEnds: try row.decode(atIndex: 3), conversions: try row.decode(atIndex: 4))
            }
            return counts
        }
    }

    static let rolloutColumns = "release_id, state, percentage, plan, flows, next_step_at, verdict, started_at, updated_at"

    static func rolloutRecord(_ row: Row) throws -> RolloutRecord {
        try RolloutRecord(releaseId: row.decode(atIndex: 0), state: row.decode(atIndex: 1), percentage: row.decode(atIndex: 2), plan: row.decode(atIndex: 3), flows: row.decode(atIndex: 4), nextStepAt: row.decode(atIndex: 5),
                      verdict: row.decode(atIndex: 6), startedAt: row.decode(atIndex: 7), updatedAt: row.decode(atIndex: 8))
    }
}

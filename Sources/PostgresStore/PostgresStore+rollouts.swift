// Rollouts and their sessions' guardrail outcomes on PostgreSQL: every node reads and moves the
// same rows, each move a compare-and-set.
import FlowStore

extension PostgresStore {
    public func insertRollout(_ rollout: RolloutRecord) throws -> Bool {
        let rows = try write([PGStatement("""
            INSERT INTO rollouts (release_id, state, percentage, plan, flows, next_step_at, verdict, started_at, updated_at)
            VALUES ($1::bigint, $2::text, $3::integer, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text)
            ON CONFLICT DO NOTHING RETURNING release_id
            """, [.integer(rollout.releaseId), .text(rollout.state), .integer(rollout.percentage), .text(rollout.plan),
                  .text(rollout.flows), .optional(rollout.nextStepAt), .optional(rollout.verdict), .text(rollout.startedAt),
                  .text(rollout.updatedAt)])])
        return rows[0].count == 1
    }

    public func rollout(releaseId: Int) throws -> RolloutRecord? {
        try Self.rolloutRecords(try read([PGStatement(
            "SELECT \(Self.rolloutColumns) FROM rollouts WHERE release_id = $1::bigint", [.integer(releaseId)])])[0]).first
    }

    public func rollouts(state: String?) throws -> [RolloutRecord] {
        try Self.rolloutRecords(try read([PGStatement(
            "SELECT \(Self.rolloutColumns) FROM rollouts WHERE $1::text IS NULL OR state = $1::text ORDER BY release_id DESC",
            [.optional(state)])])[0])
    }

    public func updateRollout(releaseId: Int, from: (state: String, percentage: Int), to: RolloutRecord,
                              audit: AuditStamp?) throws -> Bool {
        let rows = try writeAudited(PGStatement("""
            WITH moved AS (
                UPDATE rollouts SET state = $1::text, percentage = $2::integer, plan = $3::text, flows = $4::text,
                    next_step_at = $5::text, verdict = $6::text, updated_at = $7::text
                WHERE release_id = $8::bigint AND state = $9::text AND percentage = $10::integer RETURNING release_id
            ), logged AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential, detail)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $7::text, $12::text, moved.release_id::text,
                       $10::integer, $2::integer, $11::text, $13::text
                FROM moved WHERE $11::text IS NOT NULL
            )
            SELECT release_id FROM moved
            """, [.text(to.state), .integer(to.percentage), .text(to.plan), .text(to.flows), .optional(to.nextStepAt),
                  .optional(to.verdict), .text(to.updatedAt), .integer(releaseId), .text(from.state), .integer(from.percentage),
                  .optional(audit?.credential), .text(audit?.action ?? "rollout.raise"), .optional(audit?.detail)]), audit: audit)
        return rows[0].count == 1
    }

    public func insertRolloutSession(sessionId: String, releaseId: Int, arm: String, at: String) throws {
        try write([PGStatement("""
            INSERT INTO rollout_sessions (session_id, release_id, arm, created_at) VALUES ($1::text, $2::bigint, $3::text, $4::text)
            ON CONFLICT (session_id) DO NOTHING
            """, [.text(sessionId), .integer(releaseId), .text(arm), .text(at)])])
    }

    public func markRolloutSession(sessionId: String, _ marks: GuardrailMarks) throws {
        guard !marks.isEmpty else { return }
        try write([PGStatement("""
            UPDATE rollout_sessions SET refused = GREATEST(refused, $1::integer), dead_end = GREATEST(dead_end, $2::integer),
                converted = GREATEST(converted, $3::integer)
            WHERE session_id = $4::text
            """, [.integer(marks.contains(.refused) ? 1 : 0), .integer(marks.contains(.deadEnd) ? 1 : 0),
                  .integer(marks.contains(.converted) ? 1 : 0), .text(sessionId)])])
    }

    public func rolloutCounts(releaseId: Int) throws -> [String: GuardrailCounts] {
        let rows = try read([PGStatement("""
            SELECT arm, COUNT(*), SUM(refused), SUM(dead_end), SUM(converted) FROM rollout_sessions
            WHERE release_id = $1::bigint GROUP BY arm
            """, [.integer(releaseId)])])[0]
        var counts: [String: GuardrailCounts] = [:]
        for row in 0..<rows.count {
            guard let arm = try rows.string(row, 0) else { continue }
            counts[arm] = GuardrailCounts(sessions: try rows.integer(row, 1) ?? 0, refused: try rows.integer(row, 2) ?? 0,
                                          deadEnds: try rows.integer(row, 3) ?? 0, conversions: try rows.integer(row, 4) ?? 0)
        }
        return counts
    }

    static let rolloutColumns = "release_id, state, percentage, plan, flows, next_step_at, verdict, started_at, updated_at"

    static func rolloutRecords(_ rows: PGRows) throws -> [RolloutRecord] {
        try (0..<rows.count).compactMap { row in
            guard let releaseId = try rows.integer(row, 0), let state = try rows.string(row, 1), let percentage = try rows.integer(row, 2),
                  let plan = try rows.string(row, 3), let flows = try rows.string(row, 4), let startedAt = try rows.string(row, 7),
                  let updatedAt = try rows.string(row, 8) else { return nil }
            return RolloutRecord(releaseId: releaseId, state: state, percentage: percentage, plan: plan, flows: flows,
                                 nextStepAt: try rows.string(row, 5), verdict: try rows.string(row, 6), startedAt: startedAt,
                                 updatedAt: updatedAt)
        }
    }
}

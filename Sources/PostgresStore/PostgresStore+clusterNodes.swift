// The nodes serving on this database (migration 0015): each announced in a statement of its own.
import FlowStore

extension PostgresStore: ClusterNodeStore {
    public func announceNode(_ node: String, ownsSessions: Bool) throws {
        // Statements of their own, each committed: a node's announcement is seen by any node's
        // later look, whatever that look's transaction began with.
        try write([PGStatement("""
            INSERT INTO cluster_nodes (node, owns_sessions, seen_at) VALUES ($1::text, $2::boolean, now())
            ON CONFLICT (node) DO UPDATE SET owns_sessions = EXCLUDED.owns_sessions, seen_at = EXCLUDED.seen_at
            """, [.text(node), .boolean(ownsSessions)])])
        try write([PGStatement("DELETE FROM cluster_nodes WHERE seen_at < now() - interval '1 day'")])
    }

    public func nodesSeen(ownsSessions: Bool, withinMilliseconds: Int) throws -> [String] {
        let rows = try read([PGStatement("""
            SELECT node FROM cluster_nodes
            WHERE owns_sessions = $1::boolean AND seen_at > now() - $2::integer * interval '1 millisecond'
            ORDER BY node
            """, [.boolean(ownsSessions), .integer(withinMilliseconds)])])[0]
        return try (0..<rows.count).compactMap { try rows.string($0, 0) }
    }

    public func withdrawNode(_ node: String) throws {
        try write([PGStatement("DELETE FROM cluster_nodes WHERE node = $1::text", [.text(node)])])
    }
}

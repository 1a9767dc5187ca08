// Session leases in PostgreSQL (migration 0014): taken, renewed and given up in one round trip.
import FlowStore

extension PostgresStore: SessionLeaseStore {
    public func acquireLease(sessionId: String, node: String, milliseconds: Int) throws -> LeaseGrant {
        // The holder's row may go between the statements (a node giving its leases up as it
        // stops): asked again, it is free.
        for _ in 0..<2 {
            if let grant = try acquireOnce(sessionId: sessionId, node: node, milliseconds: milliseconds) { return grant }
        }
        return try acquireOnce(sessionId: sessionId, node: node, milliseconds: milliseconds) ?? .missing
    }

    /// One try: nil when the session exists and no one held its lease, yet it was not taken.
    private func acquireOnce(sessionId: String, node: String, milliseconds: Int) throws -> LeaseGrant? {
        // One transaction, three statements: the upsert waits for the commits in flight under the
        // old epoch (they hold the row FOR SHARE); the head and the holder are read by statements
        // of their own, after it, so they see those commits.
        let rows = try write([
            PGStatement("BEGIN"),
            PGStatement(Self.acquireLeaseSQL, [.text(sessionId), .text(node), .integer(milliseconds)]),
            PGStatement("SELECT node, epoch FROM session_leases WHERE session_id = $1::text", [.text(sessionId)]),
            PGStatement(Self.headSQL, [.text(sessionId)]),
            PGStatement("COMMIT"),
        ])
        guard rows[3].count == 1, let head = try rows[3].integer(0, 0) else { return .missing }
        if rows[1].count == 1, let epoch = try rows[1].integer(0, 0) { return .granted(epoch: epoch, head: head) }
        guard rows[2].count == 1, let owner = try rows[2].string(0, 0), let epoch = try rows[2].integer(0, 1) else { return nil }
        return .held(owner: owner, epoch: epoch, head: head)
    }

    public func renewLeases(node: String, sessionIds: [String], milliseconds: Int) throws -> [String: Int] {
        guard !sessionIds.isEmpty else { return [:] }
        let rows = try write([PGStatement(Self.renewLeasesSQL, [.text(node), .text(Self.textArray(sessionIds)), .integer(milliseconds)])])[0]
        var renewed: [String: Int] = [:]
        for row in 0..<rows.count {
            if let id = try rows.string(row, 0), let epoch = try rows.integer(row, 1) { renewed[id] = epoch }
        }
        return renewed
    }

    /// $1 the node, $2 the sessions, $3 the lease's length in milliseconds: the node's leases of
    /// them that have not expired, renewed under their epochs. Never shortened: a renewal that
    /// waited for locks counts from when its transaction began, maybe before an acquire that
    /// went first. The rows are locked in the order of their ids, as other batches lock them.
    static let renewLeasesSQL = """
        UPDATE session_leases l SET expires_at = GREATEST(l.expires_at, now() + $3::integer * interval '1 millisecond')
        WHERE l.session_id IN (SELECT d.session_id FROM session_leases d WHERE d.session_id = ANY($2::text[]) AND d.node = $1::text
                ORDER BY d.session_id FOR UPDATE)
            AND l.node = $1::text AND l.expires_at > now()
        RETURNING l.session_id, l.epoch
        """

    public func deleteLeasedSession(id sessionId: String, epoch: Int) throws -> Bool? {
        // The session's row first (waits for its commits in flight; later ones wait for this),
        // then its lease row (waits for a takeover in flight), as a takeover locks the lease row
        // before the fence; then the fence is read, current, by the DELETE's own statement.
        let rows = try write([
            PGStatement("BEGIN"),
            PGStatement("SELECT 1 FROM sessions WHERE id = $1::text FOR UPDATE", [.text(sessionId)]),
            PGStatement("SELECT 1 FROM session_leases WHERE session_id = $1::text FOR UPDATE", [.text(sessionId)]),
            PGStatement("""
                DELETE FROM sessions s WHERE s.id = $1::text
                    AND EXISTS (SELECT 1 FROM session_lease_fences f WHERE f.session_id = $1::text AND f.epoch = $2::bigint)
                RETURNING 1
                """, [.text(sessionId), .integer(epoch)]),
            PGStatement("COMMIT"),
        ])
        if rows[3].count == 1 { return true }
        return rows[1].count == 1 ? nil : false
    }

    public func releaseLeases(node: String, sessionIds: [String]) throws {
        guard !sessionIds.isEmpty else { return }
        try write([PGStatement("DELETE FROM session_leases WHERE node = $1::text AND session_id = ANY($2::text[])",
                               [.text(node), .text(Self.textArray(sessionIds))])])
    }

    /// $1 the session, $2 the node, $3 the lease's length in milliseconds. A new lease, or the
    /// asker's own renewed (its epoch kept while it has not expired), or an expired one taken
    /// over with a new epoch; no row when another node's lease holds, or there is no session.
    /// A new epoch is also set in the session's fence row (after the lease row: the same order
    /// everywhere), whose UPDATE waits for the commits in flight under the old one.
    ///
    /// A lease another node holds is seen in the statement's snapshot first and left alone, so
    /// that asking (which every read of a session this node does not own does) neither locks the
    /// row nor waits for the owner's commits; so is the fence row when the epoch is kept.
    static let acquireLeaseSQL = """
        WITH current AS (
            SELECT h.node, h.epoch, h.expires_at > now() AS live FROM session_leases h WHERE h.session_id = $1::text
        ), taken AS (
            INSERT INTO session_leases AS l (session_id, node, epoch, expires_at)
            SELECT s.id, $2::text, nextval('session_lease_epochs'), now() + $3::integer * interval '1 millisecond'
            FROM sessions s WHERE s.id = $1::text
                AND NOT EXISTS (SELECT 1 FROM current WHERE current.live AND current.node <> $2::text)
            ON CONFLICT (session_id) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at,
                epoch = CASE WHEN l.node = excluded.node AND l.expires_at > now() THEN l.epoch ELSE excluded.epoch END
            WHERE l.node = excluded.node OR l.expires_at <= now()
            RETURNING l.session_id, l.epoch
        ), fenced AS (
            INSERT INTO session_lease_fences AS f (session_id, epoch)
            SELECT taken.session_id, taken.epoch FROM taken
            WHERE taken.epoch IS DISTINCT FROM (SELECT current.epoch FROM current)
            ON CONFLICT (session_id) DO UPDATE SET epoch = excluded.epoch
        )
        SELECT epoch FROM taken
        """
}

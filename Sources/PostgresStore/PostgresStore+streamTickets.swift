// Stream tickets in PostgreSQL: shared by every node, so a stream reopens on any of them.
import FlowStore

extension PostgresStore {
    public func insertStreamTicket(hash: [UInt8], sessionId: String, expiresAt: Int, endsAt: Int, now: Int) throws {
        _ = try write([
            PGStatement("DELETE FROM stream_tickets WHERE expires_at < $1::bigint OR ends_at < $1::bigint", [.integer(now)]),
            PGStatement("INSERT INTO stream_tickets (ticket_hash, session_id, expires_at, ends_at) VALUES ($1::bytea, $2::text, $3::bigint, $4::bigint)",
                        [.bytes(hash), .text(sessionId), .integer(expiresAt), .integer(endsAt)]),
        ])
    }

    public func takeStreamTicket(hash: [UInt8], sessionId: String, now: Int, holdUntil: Int) throws -> StreamTicketHold? {
        let rows = try write([PGStatement("""
            UPDATE stream_tickets SET generation = generation + 1, expires_at = $1::bigint
            WHERE ticket_hash = $2::bytea AND session_id = $3::text AND expires_at >= $4::bigint AND ends_at >= $4::bigint
            RETURNING generation, ends_at
            """, [.integer(holdUntil), .bytes(hash), .text(sessionId), .integer(now)])])[0]
        guard rows.count == 1, let generation = try rows.integer(0, 0), let endsAt = try rows.integer(0, 1) else { return nil }
        return StreamTicketHold(hash: hash, generation: generation, endsAt: endsAt)
    }

    public func renewStreamTickets(_ holds: [StreamTicketHold], until: Int) throws -> [StreamTicketHold] {
        guard !holds.isEmpty else { return [] }
        // One statement per hold, in one round trip; each answers the row it moved, if any.
        let results = try write(holds.map { hold in
            PGStatement("UPDATE stream_tickets SET expires_at = $1::bigint WHERE ticket_hash = $2::bytea AND generation = $3::bigint RETURNING 1",
                        [.integer(until), .bytes(hold.hash), .integer(hold.generation)])
        })
        return zip(holds, results).compactMap { hold, rows in rows.count == 1 ? nil : hold }
    }
}

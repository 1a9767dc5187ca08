// The stream-ticket role of a store: short-lived tickets that open a session's event stream.

/// Tickets that open a session's event stream (`GET /v1/sessions/{id}/events`), kept as their
/// SHA-256. A ticket is shared by every node on one database, so a client reconnecting to
/// another node keeps its stream; a generation per ticket lets the newest stream replace the
/// one before it.
///
/// ```swift
/// try store.insertStreamTicket(hash: sha, sessionId: "s_1", expiresAt: now + 30_000, endsAt: now + 3_600_000, now: now)
/// let hold = try store.takeStreamTicket(hash: sha, sessionId: "s_1", now: now, holdUntil: now + 30_000)
/// try store.renewStreamTickets([hold!], until: now + 60_000)    // [] while this stream holds it
/// ```
public protocol StreamTicketStore: AnyObject, Sendable {
    /// Stores a ticket (its SHA-256) that may open session `sessionId`'s event stream until
    /// `expiresAt`, and reopen it within its reconnection window, never after `endsAt`
    /// (milliseconds since 1970); tickets past either time at `now` are deleted with it.
    func insertStreamTicket(hash: [UInt8], sessionId: String, expiresAt: Int, endsAt: Int, now: Int) throws
    /// Opens a stream with the ticket: when it was made for `sessionId` and `now` is within both
    /// its window and its end, it gets a new generation (the stream that held it before is
    /// replaced) and its window moves to `holdUntil`. Returns that generation and the ticket's
    /// end, or nil (unknown, for another session, out of its window or past its end).
    func takeStreamTicket(hash: [UInt8], sessionId: String, now: Int, holdUntil: Int) throws -> StreamTicketHold?
    /// Moves to `until` the window of each ticket in `holds` that is still at the generation
    /// given; returns the holds that are not (a newer stream took the ticket, or it is gone).
    func renewStreamTickets(_ holds: [StreamTicketHold], until: Int) throws -> [StreamTicketHold]
}

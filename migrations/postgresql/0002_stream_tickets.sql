-- Stream tickets: a browser's EventSource cannot send an Authorization header, so a client
-- holding the session token trades it for a ticket that may open the session's event stream
-- once, within seconds (`POST /v1/sessions/{id}/events/ticket`). Kept in the database, not in
-- a node's memory, so a ticket made through one node opens the stream through another; used or
-- not, it is deleted, so it works once. Only its SHA-256 is stored, like session tokens.
CREATE TABLE stream_tickets (
    ticket_hash  BYTEA PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    expires_at   BIGINT NOT NULL             -- milliseconds since 1970, UTC
);
CREATE INDEX stream_tickets_by_expiry ON stream_tickets (expires_at);

-- The client's time beside the server's: a tap made offline and sent later in a batch
-- (`POST /v1/sessions/{id}/actions/batch`) keeps when it happened on the device, as the client
-- said (ISO 8601 UTC with milliseconds, normalized from its offset); `created_at` stays the
-- server's commit time. NULL for actions posted on their own, and for every earlier entry.
-- A nullable column without a default: PostgreSQL adds it without rewriting the table.
ALTER TABLE actions ADD COLUMN client_at TEXT;

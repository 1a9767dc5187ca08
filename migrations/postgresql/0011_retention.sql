-- Retention: indexes so that each batch of the background compaction is an index range scan
-- (oldest first), never a scan of the table.
CREATE INDEX IF NOT EXISTS actions_by_created_at ON actions (created_at);
CREATE INDEX IF NOT EXISTS sessions_by_updated_at ON sessions (updated_at);
CREATE INDEX IF NOT EXISTS idempotency_keys_by_created_at ON idempotency_keys (created_at);
-- Deleting a session cascades to its stream tickets: by index, not by a scan.
CREATE INDEX IF NOT EXISTS stream_tickets_by_session ON stream_tickets (session_id);

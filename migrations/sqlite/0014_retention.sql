-- Retention: indexes so that each batch of the background compaction is an index range scan
-- (oldest first), never a scan of the table. The log needs none: its batches read it from its
-- start in rowid order, which is time order (see SQLiteStore.compactActions), and an index on
-- created_at would cost every action a second B-tree insert.
CREATE INDEX sessions_by_updated_at ON sessions (updated_at);
CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);
-- Deleting a session cascades to its stream tickets: by index, not by a scan.
CREATE INDEX stream_tickets_by_session ON stream_tickets (session_id);

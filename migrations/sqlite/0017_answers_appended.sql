-- Answers stored under idempotency keys move to a rowid table, as the action log did (0002):
-- every keyed action stores its answer (a state document, a few kilobytes), and keyed by
-- (session_id, key) each went into a random leaf of a tree that holds whole answers, splitting
-- pages half full and spilling a kilobyte past the leaf into an overflow page of its own. In a
-- rowid table the answers of one commit batch append to shared pages at the table's end; the
-- unique index on (session_id, key), a few dozen bytes an entry, finds them, and keeps one
-- answer per key. The rows move as they are, oldest first.
ALTER TABLE idempotency_keys RENAME TO idempotency_keys_keyed;
CREATE TABLE idempotency_keys (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    request_hash  BLOB NOT NULL,             -- SHA-256 of the request body; another body is 422
    status        INTEGER NOT NULL,
    version       INTEGER NOT NULL,          -- the session version the answer showed (its ETag)
    body          BLOB NOT NULL,
    created_at    TEXT NOT NULL
);
INSERT INTO idempotency_keys (session_id, key, request_hash, status, version, body, created_at)
SELECT session_id, key, request_hash, status, version, body, created_at FROM idempotency_keys_keyed
ORDER BY created_at, session_id, key;
DROP TABLE idempotency_keys_keyed;
CREATE UNIQUE INDEX idempotency_keys_by_session ON idempotency_keys (session_id, key);
CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);

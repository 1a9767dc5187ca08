-- An answer stored under an idempotency key keeps what a replay needs to find it and check it
-- (the request's hash, the status, the version it showed), not its body: the body is the state
-- document of that version, which the server makes again from the log when a key is replayed
-- (LogRebuild, as history and export do). The body was 1,400 of the 1,579 database bytes a keyed
-- action wrote, and every tap of the clients is keyed. SQLite cannot drop a NOT NULL, so the
-- table is made again, its rows in the order they were appended (their rowids, which retention
-- prunes by), in the migration's one transaction: its time and WAL grow with the answers stored
-- (kept for --retention), and the file does not shrink. Answers stored before keep their bodies
-- and are replayed as stored.
ALTER TABLE idempotency_keys RENAME TO idempotency_keys_with_bodies;
CREATE TABLE idempotency_keys (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    request_hash  BLOB NOT NULL,             -- SHA-256 of the request body; another body is 422
    status        INTEGER NOT NULL,
    version       INTEGER NOT NULL,          -- the session version the answer showed (its ETag)
    body          BLOB,                      -- NULL: the state document at `version`, rebuilt
    created_at    TEXT NOT NULL
);
INSERT INTO idempotency_keys (rowid, session_id, key, request_hash, status, version, body, created_at)
SELECT rowid, session_id, key, request_hash, status, version, body, created_at FROM idempotency_keys_with_bodies
WHERE session_id IN (SELECT id FROM sessions)  -- rows of sessions deleted with foreign keys off are dropped
ORDER BY rowid;
DROP TABLE idempotency_keys_with_bodies;
CREATE UNIQUE INDEX idempotency_keys_by_session ON idempotency_keys (session_id, key);

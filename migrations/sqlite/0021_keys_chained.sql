-- A session's idempotency keys are chained as its log is (migration 20), and their unique index
-- leads by the key. The index `idempotency_keys_by_session (session_id, key)` took an entry of
-- every keyed action inside its session's range: a leaf of its own for each session in a
-- commit batch, written to the WAL at every commit that touched it and copied again by the
-- checkpointer. Led by the key, keys that sort by time (UUIDv7, which both clients send) land
-- on the index's last leaves, and a batch's keys share them: a keyed action cost the server
-- 0.84x the CPU, and it took 1.27x the keyed actions a second (BENCHMARKS.md, issue 35,
-- nineteenth session). Keys in random order (UUIDv4, the clients' before) cost what they did.
--
-- What needs a session's keys (loading them with the session, ending or deleting it, export)
-- walks its chain: each key names the session's key before it (`previous`, its rowid), and
-- the session's row in `log_heads` names its newest (`newest_key`). A walk checks each step's
-- session and that its rowid goes down, so a `previous` that names a key retention deleted, or
-- a number SQLite gave again, ends the walk. Erasure also scans the table, so that it leaves
-- nothing of the user.
--
-- The table no longer references `sessions` (a foreign key's cascade looks its child rows up
-- by `session_id`, which would now scan the table): whatever deletes a session deletes its keys
-- along their chain first (`SQLiteStore.cutSession`). It is rebuilt for that, its rows keeping
-- their rowids (retention prunes them in that order), now declared as `id INTEGER PRIMARY KEY`
-- so that `VACUUM` and `.dump` keep the links.
CREATE TABLE idempotency_keys_chained (
    id            INTEGER PRIMARY KEY,       -- the rowid, which `previous` and `log_heads.newest_key` name
    session_id    TEXT NOT NULL,
    key           TEXT NOT NULL,
    request_hash  BLOB NOT NULL,             -- SHA-256 of the request body; another body is 422
    status        INTEGER NOT NULL,
    version       INTEGER NOT NULL,          -- the session version the answer showed (its ETag)
    body          BLOB,                      -- NULL: the state document at `version`, rebuilt
    created_at    TEXT NOT NULL,
    previous      INTEGER                    -- the rowid of the session's key before this one, NULL for none
);
INSERT INTO idempotency_keys_chained (id, session_id, key, request_hash, status, version, body, created_at, previous)
SELECT rowid, session_id, key, request_hash, status, version, body, created_at,
       lag(rowid) OVER (PARTITION BY session_id ORDER BY rowid)
FROM idempotency_keys
WHERE session_id IN (SELECT id FROM sessions)  -- rows of sessions deleted with foreign keys off are dropped
ORDER BY rowid;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_chained RENAME TO idempotency_keys;
CREATE UNIQUE INDEX idempotency_keys_by_key ON idempotency_keys (key, session_id);

-- Each session's newest key, beside its newest log entry: every keyed commit moves both in the
-- one statement that moved the entry alone. A head row stays while it names a key, after its
-- log is gone (`newest` then names an entry that is not there, which reads as none); a session
-- with keys and no head row (its log compacted away before this) gets one whose `newest` is 0,
-- no entry's rowid.
ALTER TABLE log_heads ADD COLUMN newest_key INTEGER;  -- the rowid of its newest key, NULL for none
UPDATE log_heads SET newest_key = k.newest
FROM (SELECT session_id, max(id) AS newest FROM idempotency_keys GROUP BY session_id) AS k
WHERE k.session_id = log_heads.session_id;
INSERT INTO log_heads (session_id, newest, newest_key)
SELECT session_id, 0, max(id) FROM idempotency_keys WHERE session_id NOT IN (SELECT session_id FROM log_heads)
GROUP BY session_id ORDER BY min(id);

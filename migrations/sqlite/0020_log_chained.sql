-- A session's log entries are chained instead of indexed: each entry names the one before it
-- (`previous`, its rowid), and a small row per session in `log_heads` names its newest. The
-- unique index `actions_by_session (session_id, version)` took an entry of every action at the
-- end of its session's range, a leaf of its own for each session in a commit batch, each leaf
-- written to the WAL at every commit that touched it and copied again by the checkpointer:
-- some 40% of the writer thread's time per durable action (BENCHMARKS.md, issue 35). A head
-- row is a few bytes and the heads of sessions that act in the same period were numbered
-- together, so a batch's heads share a few pages.
--
-- Entries with a tree (the snapshots, every `LogSnapshots.interval` versions, and every entry
-- written before 0016) keep a partial index, written once per snapshot: a walk to a version
-- starts at the nearest snapshot above it, or at the head, and is never longer than the
-- interval plus the entries it reads. A walk checks each step's session and version, so a
-- `previous` that names a deleted entry (the log cut below it) or a number SQLite gave again
-- ends the walk.
--
-- Another program that writes entries into the file must link them as the server does
-- (`scripts/relink_log.sql` links a log written without): an entry no chain reaches is not
-- read, and a version it took is not seen by the server's next commit, which no unique index
-- refuses any more. Erasure alone also scans the log, so that it leaves nothing of the user.
--
-- The log no longer references `sessions`: a foreign key's cascade looks its child rows up by
-- `session_id`, which would now scan the log. Whatever deletes a session deletes its log along
-- its chain first (`SQLiteStore.cutLog`). The table is rebuilt for that (SQLite cannot drop a
-- constraint); the entries keep their rowids, oldest first, now declared as `id INTEGER
-- PRIMARY KEY` (the same B-tree): `VACUUM` may renumber the rowids of a table without one,
-- and `.dump` leaves them out, either of which would break every link.
CREATE TABLE actions_chained (
    id           INTEGER PRIMARY KEY,        -- the rowid, which `previous` and `log_heads.newest` name
    session_id   TEXT NOT NULL,
    version      INTEGER NOT NULL,
    type         TEXT NOT NULL,
    source       TEXT,                       -- the `from` entry id the client named
    params       TEXT NOT NULL,              -- JSON object
    interactive  INTEGER NOT NULL,
    handled_by   TEXT,
    transition   TEXT,                       -- JSON, null when nothing moved (e.g. an interaction update)
    created_at   TEXT NOT NULL,
    tree         BLOB,                       -- the tree at this version, at a snapshot only (0016)
    client_at    TEXT,
    user_state   TEXT,
    previous     INTEGER                     -- the rowid of the session's entry before this one, NULL for none
);
INSERT INTO actions_chained (id, session_id, version, type, source, params, interactive, handled_by, transition,
                             created_at, tree, client_at, user_state, previous)
SELECT rowid, session_id, version, type, source, params, interactive, handled_by, transition, created_at, tree, client_at,
       user_state, lag(rowid) OVER (PARTITION BY session_id ORDER BY version)
FROM actions
WHERE session_id IN (SELECT id FROM sessions)  -- entries of sessions deleted with foreign keys off are dropped
ORDER BY rowid;

-- Each session's newest entry; a session without entries has no row.
CREATE TABLE log_heads (
    session_id  TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
    newest      INTEGER NOT NULL             -- the rowid of its newest entry in `actions`
);
INSERT INTO log_heads (session_id, newest)
SELECT session_id, entry FROM (
    SELECT session_id, rowid AS entry, row_number() OVER (PARTITION BY session_id ORDER BY version DESC) AS place FROM actions
) WHERE place = 1 AND session_id IN (SELECT id FROM sessions)
ORDER BY entry;

DROP TABLE actions;
ALTER TABLE actions_chained RENAME TO actions;
CREATE UNIQUE INDEX actions_snapshots ON actions (session_id, version) WHERE tree IS NOT NULL;

-- The log keeps what happened, not the whole tree (see LogSnapshots in Sources/FlowStore): an
-- entry carries its tree, handler and transition only every 64 versions (a snapshot), and the
-- user's state it was judged with where a rebuild could not derive it; every other version's
-- tree is rebuilt with the engine from the nearest snapshot. The session's newest tree lives in
-- a small head row that each commit rewrites in place, so the database grows by the entry
-- alone. Entries written before this keep their trees: each is a snapshot.
ALTER TABLE actions ADD COLUMN user_state TEXT;

-- The head: the version the session stands at, its tree, and what the last action reported.
-- Written by every commit; the version must be the log's newest (the log still decides the
-- version check). A session without a row here stands where its `sessions` row does.
CREATE TABLE session_heads (
    session_id       TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    version          INTEGER NOT NULL,
    tree             BLOB NOT NULL,
    last_transition  TEXT,
    handled_by       TEXT,
    updated_at       TEXT NOT NULL
) WITHOUT ROWID;

-- Each session's newest entry, where it carries a tree newer than the row, becomes its head.
INSERT INTO session_heads (session_id, version, tree, last_transition, handled_by, updated_at)
SELECT a.session_id, a.version, a.tree, a.transition, a.handled_by, a.created_at
FROM actions a JOIN sessions s ON s.id = a.session_id
WHERE a.tree IS NOT NULL AND a.version > s.version
  AND a.version = (SELECT max(b.version) FROM actions b WHERE b.session_id = a.session_id);

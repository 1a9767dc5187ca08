-- The log keeps what happened, not the whole tree (see LogSnapshots in Sources/FlowStore): an
-- entry carries its tree, handler and transition only every 64 versions (a snapshot), and the
-- user's state it was judged with where a rebuild could not derive it; every other version's
-- tree is rebuilt with the engine from the nearest snapshot. The session's newest tree lives in
-- a small head row that each commit's statement rewrites, so the log grows by the entry alone.
-- Entries written before this keep their trees: each is a snapshot. Dropping NOT NULL and
-- adding a nullable column without a default rewrite nothing.
ALTER TABLE actions ALTER COLUMN tree DROP NOT NULL;
ALTER TABLE actions ADD COLUMN user_state TEXT;

-- The head: the version the session stands at, its tree, and what the last action reported.
-- Written with each log entry; the log still decides the version check. A session without a
-- row here stands where its `sessions` row does. No index but the key, and half of each page
-- left free, so that its updates are HOT: they leave no index entries behind and are pruned
-- within the page.
CREATE TABLE session_heads (
    session_id       TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    version          INTEGER NOT NULL,
    tree             BYTEA NOT NULL,
    last_transition  TEXT,
    handled_by       TEXT,
    updated_at       TEXT NOT NULL
) WITH (fillfactor = 50);

-- Each session's newest entry, where it is newer than the row, becomes its head.
INSERT INTO session_heads (session_id, version, tree, last_transition, handled_by, updated_at)
SELECT DISTINCT ON (a.session_id) a.session_id, a.version, a.tree, a.transition, a.handled_by, a.created_at
FROM actions a JOIN sessions s ON s.id = a.session_id
WHERE a.version > s.version
ORDER BY a.session_id, a.version DESC;

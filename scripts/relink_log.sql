-- Links log entries written straight into a SQLite file (bench/history.py, bench/startup.py, tests
-- that play another writer) the way the server links its own (migration 0020): each entry names
-- the session's entry before it (`previous`), and each session's head row names its newest.
-- Entries the server wrote are already linked and stay as they are. (Idempotency keys are chained
-- too since migration 0021; these writers write none.)
WITH chained AS (
    SELECT rowid AS entry, lag(rowid) OVER (PARTITION BY session_id ORDER BY version) AS before FROM actions
)
UPDATE actions SET previous = chained.before FROM chained
WHERE actions.rowid = chained.entry AND actions.previous IS NOT chained.before;
INSERT INTO log_heads (session_id, newest)
SELECT session_id, entry FROM (
    SELECT session_id, rowid AS entry, row_number() OVER (PARTITION BY session_id ORDER BY version DESC) AS place FROM actions
) WHERE place = 1
ON CONFLICT (session_id) DO UPDATE SET newest = excluded.newest;

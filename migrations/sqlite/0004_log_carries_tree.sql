-- Each log entry carries the session's tree after its action, so an action appends to the log
-- and no longer rewrites the session row: one B-tree page per action fewer, however large the
-- row's context and flags grow. The session's current state is its newest log entry with a
-- tree when that entry is newer than the row; otherwise the row (as created, or as it stood
-- when this migration ran: entries written before it have no tree and never a newer version).
ALTER TABLE actions ADD COLUMN tree BLOB;

-- Who owns a session now (issue 35): one node at a time holds a session's lease, answers its
-- reads from memory while the lease holds, and is the only node whose commits of it apply.
--
-- Two rows per owned session, so that renewing a lease never waits for a commit nor a commit for
-- a renewal (a renewal of many leases and a batch of commits of many sessions, each locking the
-- same rows in its own order, deadlocked: PostgreSQL broke each cycle after its 1 s
-- deadlock_timeout):
--   - session_leases: the holder, its epoch and until when (the database's clock). Taken and
--     renewed here; a node takes a lease over only once it has expired. `node` is the holder:
--     the address the other nodes forward writes to, then `#` and a mark of the process.
--   - session_lease_fences: the epoch commits are fenced by. Each commit of a node that holds
--     leases names its epoch and locks this row FOR SHARE; a takeover sets the new epoch here,
--     so its UPDATE waits for the commits in flight under the old one, and the old owner's later
--     commits match nothing and write nothing (the fencing of Temporal's shard range ids).
-- Epochs come from one sequence, so an epoch is never given twice, even to a session deleted and
-- made again under the same id. Half of each page is left free: the updates are HOT.
CREATE SEQUENCE session_lease_epochs;

CREATE TABLE session_leases (
    session_id  TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    node        TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL
) WITH (fillfactor = 50);

CREATE TABLE session_lease_fences (
    session_id  TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    epoch       BIGINT NOT NULL
) WITH (fillfactor = 50);

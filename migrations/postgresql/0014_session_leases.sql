-- Who owns a session now (issue 35): one node at a time holds a session's lease, answers its
-- reads from memory while the lease holds, and is the only node whose commits of it apply.
-- Every commit of a node that holds leases names its epoch and locks this row FOR SHARE; a node
-- takes a lease over only once it has expired (`expires_at`, the database's clock), with a new
-- epoch, and its UPDATE waits for the commits in flight under the old one: the old owner's later
-- commits no longer match and write nothing (the fencing of Temporal's shard range ids).
-- `node` is the owner's address as the other nodes reach it (they forward writes there).
-- Epochs come from one sequence, so an epoch is never given twice, even to a session deleted and
-- made again under the same id. Half of each page is left free: renewals are HOT updates.
CREATE SEQUENCE session_lease_epochs;

CREATE TABLE session_leases (
    session_id  TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    node        TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL
) WITH (fillfactor = 50);

-- The nodes serving on this database now, and whether each owns sessions under leases (issue 35).
--
-- A node that owns sessions answers their reads from memory, trusting that no other node commits
-- them while its lease holds; a node started without --node-url takes no leases and commits
-- without the fence, so beside one an owner's memory could go stale unseen. Every node says here
-- how it runs and renews its row while it serves (`seen_at`, the database's clock); an owner that
-- sees a live node of the other kind checks the head on every read until it is gone, and a node
-- without leases that finds owners waits, before it serves, until they have seen it. So turning
-- leases on or off is a rolling restart, with no wrong read on the way.
CREATE TABLE cluster_nodes (
    node           TEXT PRIMARY KEY,
    owns_sessions  BOOLEAN NOT NULL,
    seen_at        TIMESTAMPTZ NOT NULL
);

-- Stored answers are pruned in the order they were appended (the table's rowid, see
-- SQLiteStore.pruneIdempotencyRecords), as the action log is compacted: the one writer appends
-- them in time order. The index on created_at cost every keyed action a third B-tree insert.
DROP INDEX idempotency_keys_by_created_at;

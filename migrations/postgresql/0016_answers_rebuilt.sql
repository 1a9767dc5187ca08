-- An answer stored under an idempotency key keeps what a replay needs to find it and check it
-- (the request's hash, the status, the version it showed), not its body: the body is the state
-- document of that version, which the server makes again from the log when a key is replayed
-- (LogRebuild, as history and export do). Answers stored before keep their bodies and are
-- replayed as stored.
ALTER TABLE idempotency_keys ALTER COLUMN body DROP NOT NULL;

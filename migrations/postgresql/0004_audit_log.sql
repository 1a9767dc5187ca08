-- The audit log: every admin change (a flow version stored or made live, a flag or experiment
-- stored, a user's onboarding reset, a client key made or revoked), appended in the transaction
-- that makes the change, so the log holds exactly the changes that happened. `credential` names
-- the admin credential that made it by a fingerprint (`admin:` and the first 8 hex digits of the
-- token's SHA-256), never the token: a rotated token shows as a new fingerprint.
--
-- Ids are not a sequence: a transaction that appends takes `LOCK TABLE audit_log IN EXCLUSIVE
-- MODE` and uses max(id) + 1, so ids are given in commit order with no gap, and a reader paging
-- by `after=<id>` never skips an entry another node committed late (sequence values can commit
-- out of order). Admin changes are rare; readers are not blocked.
CREATE TABLE audit_log (
    id           BIGINT PRIMARY KEY,
    at           TEXT NOT NULL,
    action       TEXT NOT NULL,                       -- flow.put, flow.activate, flag.put, experiment.put, …
    subject      TEXT NOT NULL,                       -- flow name, flag or experiment key, user id, client key id
    old_version  BIGINT,                              -- version or revision before; NULL: none
    new_version  BIGINT,                              -- version or revision after
    credential   TEXT NOT NULL
);

-- Releases: a set of flow versions (and flag and experiment definitions) made, validated, tested
-- and activated together, and rolled back together. The flow versions are ordinary rows of
-- flow_versions (stored, not live, when the release is made); a release names them in `versions`.
CREATE TABLE releases (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    description     TEXT NOT NULL DEFAULT '',
    state           TEXT NOT NULL,          -- draft, failed, ready, live, rolling-out, rolled-back
    document        TEXT NOT NULL,          -- the submitted JSON as sent
    versions        TEXT NOT NULL,          -- {"login": 1, "app": 5}: the versions it makes live
    flags           TEXT NOT NULL,          -- {"key": "<definition text>"}
    experiments     TEXT NOT NULL,          -- {"key": "<definition text>"}
    base            TEXT NOT NULL,          -- the live versions of every flow its tests ran on
    previous        TEXT,                   -- what was live before activation (flows, flag and experiment texts)
    tests           TEXT,                   -- the last test run's result, NULL before any
    created_by      TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    approved_by     TEXT,
    activated_by    TEXT,
    activated_at    TEXT,
    rolled_back_at  TEXT,
    reason          TEXT,
    rollout         TEXT                    -- filled by rollouts (JSON), NULL otherwise
);

-- Why a change was made (a rollback's reason), shown by GET /v1/audit.
ALTER TABLE audit_log ADD COLUMN detail TEXT;

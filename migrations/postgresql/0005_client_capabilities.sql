-- Every build in the field: what each session's client said it can render, the history of
-- activations (a session whose client cannot render a live version falls back to the newest
-- earlier activated one), and the sessions kept out of an experiment whose variants their
-- client cannot render.

-- The client of a session as it sent it ({"platform", "appVersion", "features"}, canonical JSON
-- with features sorted, so equal clients have equal text); NULL: none sent. Activation impact
-- groups the sessions of the last 7 days by it, found through the index on created_at.
ALTER TABLE sessions ADD COLUMN client TEXT;
CREATE INDEX sessions_by_created_at ON sessions (created_at);

-- Every version ever made live, with its first and last activation. Filled by every activation
-- (seeding included); backfilled here from the live versions and the audit log.
CREATE TABLE flow_activations (
    name                TEXT NOT NULL,
    version             INTEGER NOT NULL,
    first_activated_at  TEXT NOT NULL,
    last_activated_at   TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at)
SELECT name, version, MIN(at), MAX(at) FROM (
    SELECT name, version, activated_at AS at FROM live_flows
    UNION ALL
    SELECT subject AS name, new_version::integer AS version, at FROM audit_log
    WHERE action = 'flow.activate' AND new_version IS NOT NULL
) AS activations
WHERE EXISTS (SELECT 1 FROM flow_versions f WHERE f.name = activations.name AND f.version = activations.version)
GROUP BY name, version;

-- Sessions an experiment bucketed but did not enrol because their client cannot render one of
-- its variants: no exposure, no pins; the report counts them per variant they hashed into.
-- Kept when the session is deleted, like exposures.
CREATE TABLE experiment_exclusions (
    session_id  TEXT NOT NULL,
    experiment  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    variant     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, experiment)
);
CREATE INDEX experiment_exclusions_by_experiment ON experiment_exclusions (experiment, variant);

-- Flow definitions are versioned and immutable; one version of each flow is live for new sessions.
CREATE TABLE flow_versions (
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    definition  TEXT NOT NULL,              -- the JSON document as uploaded
    created_at  TEXT NOT NULL,
    PRIMARY KEY (name, version)
) WITHOUT ROWID;

CREATE TABLE live_flows (
    name          TEXT PRIMARY KEY NOT NULL,
    version       INTEGER NOT NULL,
    activated_at  TEXT NOT NULL,
    FOREIGN KEY (name, version) REFERENCES flow_versions (name, version)
) WITHOUT ROWID;

-- Flags and experiments: the current definition of each key (JSON as uploaded), with a revision
-- that grows at every PUT. Sessions keep what was evaluated at their creation.
CREATE TABLE flags (
    key         TEXT PRIMARY KEY NOT NULL,
    definition  TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    updated_at  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE experiments (
    key         TEXT PRIMARY KEY NOT NULL,
    definition  TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    updated_at  TEXT NOT NULL
) WITHOUT ROWID;

-- One row per session placed in an experiment: who saw which variant, and whether that session
-- completed onboarding. Kept when the session is deleted: it is the experiment's record.
CREATE TABLE exposures (
    session_id  TEXT NOT NULL,
    experiment  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    variant     TEXT NOT NULL,
    onboarded   INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, experiment)
) WITHOUT ROWID;
CREATE INDEX exposures_by_experiment ON exposures (experiment, variant);

-- The features each session in an experiment has shown on top, for the report's funnel.
CREATE TABLE session_features (
    session_id  TEXT NOT NULL,
    feature     TEXT NOT NULL,
    PRIMARY KEY (session_id, feature)
) WITHOUT ROWID;

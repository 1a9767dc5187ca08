-- The FlowStack schema on PostgreSQL: the same tables as the SQLite dialect's migrations 1–4,
-- in one step. Plain SQL only (no triggers, functions or extensions), so that it also runs on
-- PostgreSQL-compatible distributed databases. The keys are what keeps several nodes correct:
-- a log entry's key is (session_id, version), an Idempotency-Key is unique per session.

-- Users outlive sessions; `state` is the JSON object of per-user state that flows read and
-- write through `setUser` (the first key is `onboarded`).
-- `revision` grows with every change of `state`: a node judges an action with the state it
-- has cached, and its commit applies only while the revision is still the one it saw.
CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    state       JSONB NOT NULL DEFAULT '{}',
    revision    BIGINT NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

-- Sessions: one flow-controller tree per user and device, and what was decided at creation.
-- The row is written once; an action appends to the log, whose newest entry carries the tree.
CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    token_hash       BYTEA NOT NULL,         -- SHA-256 of the bearer token; the token is never stored
    version          INTEGER NOT NULL,       -- the version the row stands at (0: as created)
    tree             BYTEA NOT NULL,         -- the flow tree in the engine's storage encoding (JSON)
    context          TEXT NOT NULL,
    flags            TEXT NOT NULL,
    experiments      TEXT NOT NULL,
    flow_versions    TEXT NOT NULL,
    last_transition  TEXT,
    handled_by       TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id);

-- The append-only log of applied actions. Its key is the version each produced: a second
-- writer of the same version fails instead of overwriting.
CREATE TABLE actions (
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    type         TEXT NOT NULL,
    source       TEXT,
    params       TEXT NOT NULL,
    interactive  BOOLEAN NOT NULL,
    handled_by   TEXT,
    transition   TEXT,
    created_at   TEXT NOT NULL,
    tree         BYTEA NOT NULL,             -- the session's tree after this action
    PRIMARY KEY (session_id, version)
);

-- Answers stored under a client's Idempotency-Key, replayed when the same key comes again.
CREATE TABLE idempotency_keys (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    request_hash  BYTEA NOT NULL,
    status        INTEGER NOT NULL,
    version       INTEGER NOT NULL,
    body          BYTEA NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);

-- Flow definitions are versioned and immutable; one version of each flow is live for new sessions.
CREATE TABLE flow_versions (
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    definition  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (name, version)
);

CREATE TABLE live_flows (
    name          TEXT PRIMARY KEY,
    version       INTEGER NOT NULL,
    activated_at  TEXT NOT NULL,
    FOREIGN KEY (name, version) REFERENCES flow_versions (name, version)
);

-- Flags and experiments: the current definition of each key, with a revision that grows at every PUT.
CREATE TABLE flags (
    key         TEXT PRIMARY KEY,
    definition  TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE experiments (
    key         TEXT PRIMARY KEY,
    definition  TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    updated_at  TEXT NOT NULL
);

-- One row per session placed in an experiment. Kept when the session is deleted.
CREATE TABLE exposures (
    session_id  TEXT NOT NULL,
    experiment  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    variant     TEXT NOT NULL,
    onboarded   INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, experiment)
);
CREATE INDEX exposures_by_experiment ON exposures (experiment, variant);

-- The features each session in an experiment has shown on top, for the report's funnel.
CREATE TABLE session_features (
    session_id  TEXT NOT NULL,
    feature     TEXT NOT NULL,
    PRIMARY KEY (session_id, feature)
);

-- Sessions: one flow-controller tree per user and device, its version, and what was decided at
-- creation (evaluation context, flag values, experiment variants, flow versions).
CREATE TABLE sessions (
    id               TEXT PRIMARY KEY NOT NULL,
    user_id          TEXT NOT NULL,
    token_hash       BLOB NOT NULL,          -- SHA-256 of the bearer token; the token is never stored
    version          INTEGER NOT NULL,       -- grows by one with every applied action
    tree             BLOB NOT NULL,          -- the flow tree in the engine's storage encoding (JSON)
    context          TEXT NOT NULL,          -- {"attributes": {...}, "traits": {...}, "user": {...}}
    flags            TEXT NOT NULL,          -- flag evaluation details, fixed for the session's life
    experiments      TEXT NOT NULL,          -- {experiment key: variant key}
    flow_versions    TEXT NOT NULL,          -- {flow name: version} the session runs
    last_transition  TEXT,                   -- transition that produced this version (JSON), if any
    handled_by       TEXT,                   -- flow that handled the last action
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_by_user ON sessions (user_id);

-- The append-only log of applied actions; (session_id, version) is the version each produced.
-- A rowid table: entries append at its end, so the actions of one commit batch share pages;
-- the unique index finds a session's entries in order.
CREATE TABLE actions (
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    type         TEXT NOT NULL,
    source       TEXT,                       -- the `from` entry id the client named
    params       TEXT NOT NULL,              -- JSON object
    interactive  INTEGER NOT NULL,
    handled_by   TEXT,
    transition   TEXT,                       -- JSON, null when nothing moved (e.g. an interaction update)
    created_at   TEXT NOT NULL
);
CREATE UNIQUE INDEX actions_by_session ON actions (session_id, version);

-- Answers stored under a client's Idempotency-Key, replayed when the same key comes again.
CREATE TABLE idempotency_keys (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    request_hash  BLOB NOT NULL,             -- SHA-256 of the request body; another body is 422
    status        INTEGER NOT NULL,
    version       INTEGER NOT NULL,          -- the session version the answer showed (its ETag)
    body          BLOB NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;

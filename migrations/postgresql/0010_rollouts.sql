-- Rollouts: a release live for a share of new sessions, raised step by step, and the guardrail
-- outcomes of each session in it. One row per release that was rolled out; `state` moves from
-- `rolling-out` to `completed` (100 %, a full activation) or `rolled-back`, each change a
-- compare-and-set on (state, percentage), so two nodes acting on one rollout cannot both act.
CREATE TABLE rollouts (
    release_id    BIGINT PRIMARY KEY,
    state         TEXT NOT NULL,        -- rolling-out | completed | rolled-back
    percentage    INTEGER NOT NULL,     -- share of new sessions on the release, 0…100
    plan          TEXT NOT NULL,        -- JSON: steps, interval, guardrails, as accepted
    flows         TEXT NOT NULL,        -- JSON {flow: version}: what the new side runs
    next_step_at  TEXT,                 -- when the schedule raises it next; NULL: by hand only
    verdict       TEXT,                 -- the guardrails' last word, in a sentence
    started_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

-- One row per session created while a rollout ran: its side, and whether it hit a refused
-- action, a dead end, or converted (each only ever set, 0 → 1). Written off the action's path;
-- kept when the session is deleted, so the guardrails' counts do not move backwards.
CREATE TABLE rollout_sessions (
    session_id  TEXT PRIMARY KEY,
    release_id  BIGINT NOT NULL,
    arm         TEXT NOT NULL,          -- new | old
    refused     INTEGER NOT NULL DEFAULT 0,
    dead_end    INTEGER NOT NULL DEFAULT 0,
    converted   INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);
CREATE INDEX rollout_sessions_by_release ON rollout_sessions (release_id, arm);

-- One rollout in progress at a time, on every node: a second node starting another release's
-- rollout at the same moment finds this index, not an in-memory check that each node makes alone.
CREATE UNIQUE INDEX one_rollout_in_progress ON rollouts (state) WHERE state = 'rolling-out';

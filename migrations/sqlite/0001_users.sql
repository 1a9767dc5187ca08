-- Users outlive sessions; `state` is the JSON object of per-user state that flows read and
-- write through `setUser` (the first key is `onboarded`).
CREATE TABLE users (
    id          TEXT PRIMARY KEY NOT NULL,
    state       TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
) WITHOUT ROWID;

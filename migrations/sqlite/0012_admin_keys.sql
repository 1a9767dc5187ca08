-- Named admin keys with a role, and the bootstrap admin token. A key is shown once, at
-- creation; only its SHA-256 is stored (like client keys). Names are unique among live keys, so
-- the audit log's `key:<name>` and its time name one key; a revoked key stays listed, opens
-- nothing from its revocation on, and frees its name.
CREATE TABLE admin_keys (
    id          TEXT PRIMARY KEY,            -- ak_…, names the key in lists and in DELETE
    name        TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('read', 'edit', 'publish', 'admin')),
    key_hash    BLOB NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL,               -- the credential that made it, as in the audit log
    revoked_at  TEXT
);
CREATE UNIQUE INDEX admin_keys_live_name ON admin_keys (name) WHERE revoked_at IS NULL;
-- The bootstrap admin token's SHA-256 when FLOWSTACK_ADMIN_TOKEN is unset: made at the first
-- start (which prints the token once), kept across restarts, replaced by `flowstack admin-token
-- --reset`. One row at most.
CREATE TABLE admin_token (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    token_hash  BLOB NOT NULL,
    created_at  TEXT NOT NULL
);

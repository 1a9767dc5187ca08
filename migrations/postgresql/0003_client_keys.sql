-- Client keys: what ships inside an app. A key may create sessions and evaluate flags for a
-- context (OFREP, the GrowthBook payload), nothing else. The key is shown once, at creation;
-- only its SHA-256 is stored, like session tokens. A revoked key stays listed with the time it
-- was revoked, and opens nothing from then on.
CREATE TABLE client_keys (
    id          TEXT PRIMARY KEY,            -- ck_…, names the key in lists and in DELETE
    name        TEXT NOT NULL,
    key_hash    BYTEA NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);

-- API keys of the HTTP API: only the sha256 of each token is stored; the token is shown once at creation.
CREATE SCHEMA IF NOT EXISTS semlayer;

CREATE TABLE IF NOT EXISTS semlayer.api_key (
    key_id       text PRIMARY KEY,                -- short public id (prefix of the token)
    name         text NOT NULL,
    token_sha256 text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS api_key_active_name
    ON semlayer.api_key (name) WHERE revoked_at IS NULL;

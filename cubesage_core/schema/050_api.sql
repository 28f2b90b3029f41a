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

-- scopes (ask: questions, catalog, feedback proposals; ingest: /v1/ingest/*; admin: everything, and approving
-- feedback). Keys made before scopes existed keep what they could do: ask and ingest (approval is new: admin
-- must be granted explicitly with 'cubesage keys scopes').
ALTER TABLE semlayer.api_key ADD COLUMN IF NOT EXISTS scopes text[];
UPDATE semlayer.api_key SET scopes = ARRAY['ask', 'ingest'] WHERE scopes IS NULL;
ALTER TABLE semlayer.api_key ALTER COLUMN scopes SET DEFAULT ARRAY['ask'];
ALTER TABLE semlayer.api_key ALTER COLUMN scopes SET NOT NULL;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'api_key_scopes_known') THEN
        ALTER TABLE semlayer.api_key ADD CONSTRAINT api_key_scopes_known
            CHECK (scopes <@ ARRAY['ask', 'ingest', 'admin']);
    END IF;
END
$$;

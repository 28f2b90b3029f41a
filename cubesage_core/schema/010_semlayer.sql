-- semlayer: semantic assets the four engines retrieve (written by cube_models export and the glossary loader)
CREATE SCHEMA IF NOT EXISTS semlayer;

CREATE TABLE IF NOT EXISTS semlayer.asset (
    asset_id    text PRIMARY KEY,              -- e.g. metric:loans.fee_sum, table:loans, column:loans.status
    asset_type  text NOT NULL CHECK (asset_type IN
                 ('table','column','metric','dimension','segment','join','term','business_rule')),
    name        text NOT NULL,                 -- technical name (loans.fee_sum)
    title       text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    parent_id   text REFERENCES semlayer.asset(asset_id) ON DELETE CASCADE,
    certified   boolean NOT NULL DEFAULT false,
    meta        jsonb NOT NULL DEFAULT '{}'::jsonb,
    content_hash text NOT NULL DEFAULT '',     -- hash of the exported content: export is idempotent
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS asset_type_idx ON semlayer.asset (asset_type);
CREATE INDEX IF NOT EXISTS asset_parent_idx ON semlayer.asset (parent_id);
CREATE INDEX IF NOT EXISTS asset_name_trgm ON semlayer.asset USING gin (name gin_trgm_ops);

CREATE TABLE IF NOT EXISTS semlayer.asset_embedding (
    asset_id  text PRIMARY KEY REFERENCES semlayer.asset(asset_id) ON DELETE CASCADE,
    embedding vector(512) NOT NULL,
    text_hash text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS asset_embedding_hnsw
    ON semlayer.asset_embedding USING hnsw (embedding vector_cosine_ops);

CREATE TABLE IF NOT EXISTS semlayer.business_term (
    term_id           text PRIMARY KEY,
    canonical_term    text NOT NULL,
    synonyms          text[] NOT NULL DEFAULT '{}',
    language          text NOT NULL DEFAULT 'en',
    definition        text NOT NULL DEFAULT '',
    mapped_asset_type text,
    mapped_asset_id   text,
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS business_term_canonical_trgm
    ON semlayer.business_term USING gin (canonical_term gin_trgm_ops);

CREATE TABLE IF NOT EXISTS semlayer.join_edge (
    edge_id      text PRIMARY KEY,             -- left_table->right_table
    left_table   text NOT NULL,
    right_table  text NOT NULL,
    on_sql       text NOT NULL,
    relationship text NOT NULL,                -- many_to_one | one_to_many | one_to_one
    fanout_risk  text NOT NULL CHECK (fanout_risk IN ('low','medium','high')),
    content_hash text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS join_edge_left_idx ON semlayer.join_edge (left_table);
CREATE INDEX IF NOT EXISTS join_edge_right_idx ON semlayer.join_edge (right_table);

CREATE TABLE IF NOT EXISTS semlayer.dynamic_few_shot_cache (
    id         bigserial PRIMARY KEY,
    question   text NOT NULL,
    embedding  vector(512) NOT NULL,
    cube_query jsonb,
    sql        text,
    approved   boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    hits       integer NOT NULL DEFAULT 0,
    UNIQUE (question)
);
CREATE INDEX IF NOT EXISTS few_shot_hnsw
    ON semlayer.dynamic_few_shot_cache USING hnsw (embedding vector_cosine_ops);

CREATE TABLE IF NOT EXISTS semlayer.query_log (
    query_id   uuid PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    session_id text,
    api_key_id text,
    question   text NOT NULL,
    intent     text,
    plan       jsonb NOT NULL DEFAULT '{}'::jsonb,
    timings    jsonb NOT NULL DEFAULT '{}'::jsonb,
    executed_sql text,
    answer     jsonb NOT NULL DEFAULT '{}'::jsonb,
    feedback   jsonb
);
CREATE INDEX IF NOT EXISTS query_log_session_idx ON semlayer.query_log (session_id, created_at);

-- sag: SAG index (relational part) and the PostgreSQL vector/BM25 backend (pgvector + BM25 postings).
CREATE SCHEMA IF NOT EXISTS sag;

-- chunk -> event (exactly one), event <-> entity, chunk -> entity (through the event)
CREATE TABLE IF NOT EXISTS sag.source_chunk (
    chunk_id    text PRIMARY KEY,                  -- content hash of (source, heading, text)
    source      text NOT NULL,                     -- file name, table name, corpus id
    source_type text NOT NULL,                     -- markdown | text | html | json | row
    kind        text NOT NULL DEFAULT 'doc' CHECK (kind IN ('doc', 'row')),
    position    integer NOT NULL DEFAULT 0,
    heading     text NOT NULL DEFAULT '',
    text        text NOT NULL,
    meta        jsonb NOT NULL DEFAULT '{}'::jsonb,
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'indexed')),
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- which vector store holds the chunk's vectors: switching stores (e.g. after an Elasticsearch outage
-- served by the PostgreSQL fallback) re-embeds into the new store instead of silently missing vectors
ALTER TABLE sag.source_chunk ADD COLUMN IF NOT EXISTS indexed_in text;
CREATE INDEX IF NOT EXISTS source_chunk_pending_idx ON sag.source_chunk (status) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS source_chunk_source_idx ON sag.source_chunk (source);

CREATE TABLE IF NOT EXISTS sag.event (
    event_id   text PRIMARY KEY,
    chunk_id   text NOT NULL UNIQUE REFERENCES sag.source_chunk(chunk_id) ON DELETE CASCADE,
    title      text NOT NULL,
    content    text NOT NULL,
    mode       text NOT NULL DEFAULT 'fast',       -- fast | llm
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS sag.entity (
    entity_id  text PRIMARY KEY,                   -- hash of normalized
    name       text NOT NULL,
    type       text NOT NULL,
    normalized text NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS sag.event_entity (
    event_id    text NOT NULL REFERENCES sag.event(event_id) ON DELETE CASCADE,
    entity_id   text NOT NULL REFERENCES sag.entity(entity_id) ON DELETE CASCADE,
    role        text NOT NULL DEFAULT 'mention' CHECK (role IN ('subject', 'mention')),
    description text NOT NULL DEFAULT '',
    PRIMARY KEY (event_id, entity_id)
);
CREATE INDEX IF NOT EXISTS event_entity_entity_idx ON sag.event_entity (entity_id, role);

-- entities whose name vectors a vector store already holds (so each name is embedded once per store)
CREATE TABLE IF NOT EXISTS sag.entity_in_store (
    store_key text NOT NULL,
    entity_id text NOT NULL REFERENCES sag.entity(entity_id) ON DELETE CASCADE,
    PRIMARY KEY (store_key, entity_id)
);

-- PostgreSQL backend of the vector/BM25 store (mirrors the three Elasticsearch indices)
CREATE TABLE IF NOT EXISTS sag.event_vectors (
    event_id  text PRIMARY KEY,
    chunk_id  text NOT NULL,
    kind      text NOT NULL DEFAULT 'doc',
    title     text NOT NULL,
    title_vec vector(512),
    content_vec vector(512)                       -- title + content; both NULL for table rows (no dense search)
);
ALTER TABLE sag.event_vectors ALTER COLUMN title_vec DROP NOT NULL, ALTER COLUMN content_vec DROP NOT NULL;
CREATE INDEX IF NOT EXISTS event_vectors_kind_idx ON sag.event_vectors (kind);

CREATE TABLE IF NOT EXISTS sag.entity_vectors (
    entity_id  text PRIMARY KEY,
    name       text NOT NULL,
    normalized text NOT NULL,
    type       text NOT NULL,
    name_vec   vector(512)                        -- NULL for ids and numbers (matched exactly)
);
CREATE INDEX IF NOT EXISTS entity_vectors_normalized_idx ON sag.entity_vectors (normalized);

CREATE TABLE IF NOT EXISTS sag.event_entity_vectors (
    event_id    text NOT NULL,
    entity_id   text NOT NULL,
    description text NOT NULL,
    desc_vec    vector(512) NOT NULL,
    PRIMARY KEY (event_id, entity_id)
);

-- BM25 postings over the shared tokenizer's terms (idx: 'event' | 'entity')
CREATE TABLE IF NOT EXISTS sag.bm25_doc (
    idx    text NOT NULL,
    doc_id text NOT NULL,
    kind   text NOT NULL DEFAULT 'doc',
    length integer NOT NULL,
    PRIMARY KEY (idx, doc_id)
);
CREATE TABLE IF NOT EXISTS sag.bm25_term (
    idx    text NOT NULL,
    term   text NOT NULL,
    doc_id text NOT NULL,
    tf     integer NOT NULL,
    PRIMARY KEY (idx, term, doc_id)
);

-- row lookup served by indexes (sag_index.row_lookup): exact names through the unique btree on
-- sag.entity.normalized, near spellings through this trigram index (no in-memory name dictionary)
CREATE INDEX IF NOT EXISTS entity_normalized_trgm ON sag.entity USING gin (normalized gin_trgm_ops);

-- names of entity rows for the detail path's directory (sag_index.entity_names): one row per surface form,
-- filled server-side from the warehouse tables, looked up by the btree on surface
CREATE TABLE IF NOT EXISTS sag.entity_name_source (
    source      text PRIMARY KEY,               -- schema.table
    position    integer NOT NULL,               -- order of the table in the detail catalog
    table_name  text NOT NULL,
    key_column  text NOT NULL,
    entity_type text NOT NULL,
    state       text NOT NULL,                  -- file node + write counters + definition, hashed
    built_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sag.entity_name (
    source    text NOT NULL,
    surface   text NOT NULL,
    kind      smallint NOT NULL,                -- 0 label or name column, 1 word prefix or suffixed form
    key_value jsonb NOT NULL,
    label     text NOT NULL
);
CREATE INDEX IF NOT EXISTS entity_name_surface_idx ON sag.entity_name (surface);
CREATE INDEX IF NOT EXISTS entity_name_source_idx ON sag.entity_name (source);

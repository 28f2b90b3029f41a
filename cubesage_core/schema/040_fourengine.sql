-- fourengine: columns the four-engine retrieval needs on top of 010_semlayer.sql (idempotent)

-- value terms (北区 -> branches.area = 'north') carry the filter value of their dimension
ALTER TABLE semlayer.business_term ADD COLUMN IF NOT EXISTS filter_value text;
-- normalised match keys of canonical_term + synonyms (lower-case, NFKC, singular); written by the loaders
ALTER TABLE semlayer.business_term ADD COLUMN IF NOT EXISTS lexemes text[] NOT NULL DEFAULT '{}';
CREATE INDEX IF NOT EXISTS business_term_lexemes_gin ON semlayer.business_term USING gin (lexemes);
CREATE INDEX IF NOT EXISTS business_term_mapped_idx ON semlayer.business_term (mapped_asset_id);

-- thresholds of engines V and D and of the CRAG grades fitted to the embedder (fourengine.calibration), with
-- the embedder's fingerprint and the index key they were fitted on: recomputed when either changes
CREATE TABLE IF NOT EXISTS semlayer.calibration (
    name        text PRIMARY KEY,
    fingerprint text NOT NULL,
    index_key   text NOT NULL,
    thresholds  jsonb NOT NULL,
    stats       jsonb NOT NULL DEFAULT '{}'::jsonb,
    computed_at timestamptz NOT NULL DEFAULT now()
);
-- the labelled dev questions a calibration was fitted on (a suite's or a benchmark's dev split): kept so that a
-- recomputation for a new embedder or index fits on them again
CREATE TABLE IF NOT EXISTS semlayer.calibration_question (
    question  text NOT NULL,
    gold      text[] NOT NULL DEFAULT '{}',
    in_domain boolean NOT NULL DEFAULT true,
    scope     text,
    query_key text,
    PRIMARY KEY (question, in_domain)
);

-- fourengine: columns the four-engine retrieval needs on top of 010_semlayer.sql (idempotent)

-- value terms (北区 -> branches.area = 'north') carry the filter value of their dimension
ALTER TABLE semlayer.business_term ADD COLUMN IF NOT EXISTS filter_value text;
-- normalised match keys of canonical_term + synonyms (lower-case, NFKC, singular); written by the loaders
ALTER TABLE semlayer.business_term ADD COLUMN IF NOT EXISTS lexemes text[] NOT NULL DEFAULT '{}';
CREATE INDEX IF NOT EXISTS business_term_lexemes_gin ON semlayer.business_term USING gin (lexemes);
CREATE INDEX IF NOT EXISTS business_term_mapped_idx ON semlayer.business_term (mapped_asset_id);

-- feedback proposals: a question -> (Cube query | SQL) pair someone proposed through /v1/feedback, validated
-- when proposed and again when approved; only approval (an admin key or 'cubesage feedback approve') copies it
-- into semlayer.dynamic_few_shot_cache, the only table engine D reads.
CREATE TABLE IF NOT EXISTS semlayer.feedback_proposal (
    proposal_id bigserial PRIMARY KEY,
    query_id    uuid NOT NULL,
    question    text NOT NULL,
    verdict     text NOT NULL CHECK (verdict IN ('up', 'down')),
    cube_query  jsonb,
    sql         text,
    comment     text,
    api_key_id  text,
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    validation  jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    reviewed_at timestamptz,
    reviewed_by text,
    cache_id    bigint,
    CHECK (cube_query IS NOT NULL OR sql IS NOT NULL)
);
CREATE INDEX IF NOT EXISTS feedback_proposal_status_idx ON semlayer.feedback_proposal (status, created_at);

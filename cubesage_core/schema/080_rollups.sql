-- cubesage_rollups: the rollup tables cubesage builds from the models' pre_aggregations (cube_models.rollups).
-- The API's role owns the schema (it refreshes rollups when the warehouse changes); generated SQL reads
-- them as the reader role.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'cubesage_rollups') THEN
        CREATE SCHEMA cubesage_rollups AUTHORIZATION cubesage_api;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA cubesage_rollups TO cubesage_reader;

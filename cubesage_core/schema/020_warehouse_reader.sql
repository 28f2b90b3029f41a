-- the read-only role every generated query runs under (SET LOCAL ROLE inside a READ ONLY transaction);
-- its grants on the configured warehouse schemas are made by cubesage_core.db.grant_reader
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cubesage_reader') THEN
        CREATE ROLE cubesage_reader NOLOGIN;
    END IF;
END
$$;

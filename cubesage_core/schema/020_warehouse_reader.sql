-- the read-only role every generated query runs under (SET LOCAL ROLE inside a READ ONLY transaction)
CREATE SCHEMA IF NOT EXISTS warehouse;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cubesage_reader') THEN
        CREATE ROLE cubesage_reader NOLOGIN;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA warehouse TO cubesage_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA warehouse TO cubesage_reader;
ALTER DEFAULT PRIVILEGES IN SCHEMA warehouse GRANT SELECT ON TABLES TO cubesage_reader;

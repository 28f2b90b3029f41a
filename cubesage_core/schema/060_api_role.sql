-- the login role the API connects as: no superuser, database, role, replication or row-security rights;
-- its grants (cubesage's schemas, reader membership, the warehouse schemas) are made by
-- cubesage_core.db.grant_api
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cubesage_api') THEN
        CREATE ROLE cubesage_api LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    END IF;
END
$$;

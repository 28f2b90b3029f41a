"""Database access: resolve the URL (external or embedded), apply schema files, open connections.

Sync connections serve the CLI and loaders; an async pool (psycopg 3) serves the API.
Every connection has pgvector's types registered.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Protocol

import psycopg
from pgvector.psycopg import register_vector, register_vector_async
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from cubesage_core.settings import Settings, get_settings

SCHEMA_PACKAGE = "cubesage_core.schema"
READER_ROLE = "cubesage_reader"
PGVECTOR_STATEMENT = "CREATE EXTENSION vector;"


class DatabaseSetupError(RuntimeError):
    """The database cannot hold cubesage's schemas; the message says what to run or fix."""


class Executor(Protocol):
    def execute(self, query: str | sql.Composable, params: Sequence[object] | None = None, /) -> object: ...


def database_url(settings: Settings | None = None) -> str:
    """The configured database URL, starting the embedded server when none is set."""
    settings = settings or get_settings()
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    from cubesage_core.embedded_pg import EmbeddedPostgres

    return EmbeddedPostgres(settings.pg_data_dir, port=settings.pg_port).start().url()


def connect(url: str, autocommit: bool = True) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=autocommit)
    register_vector(conn)
    return conn


@contextmanager
def connection(url: str) -> Iterator[psycopg.Connection]:
    conn = connect(url)
    try:
        yield conn
    finally:
        conn.close()


def schema_files() -> list[Path]:
    """Numbered DDL files (``NNN_name.sql``), applied in order; each is idempotent."""
    folder = resources.files(SCHEMA_PACKAGE)
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".sql"))


def apply_schema(url: str, schemas: Sequence[str] | None = None) -> None:
    """Create extensions, schemas, tables, indices, the read-only role and its grants on the warehouse
    ``schemas`` (default: ``settings.warehouse_schemas``); idempotent. Raises :class:`DatabaseSetupError`
    when the database is unreachable or pgvector cannot be created."""
    schemas = list(schemas) if schemas is not None else get_settings().warehouse_schemas
    try:
        conn = psycopg.connect(url, autocommit=True)  # no vector type yet on a brand-new database
    except psycopg.OperationalError as err:
        raise DatabaseSetupError(f"cannot connect to PostgreSQL: {str(err).strip()}") from err
    with conn:
        conn.execute("SELECT pg_advisory_lock(4242)")
        try:
            create_extensions(conn)
            for path in schema_files():
                conn.execute(path.read_text())
            grant_reader(conn, schemas)
        finally:
            conn.execute("SELECT pg_advisory_unlock(4242)")


def create_extensions(conn: Executor) -> None:
    """pgvector and pg_trgm; a missing or forbidden pgvector names the statement a superuser must run."""
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as err:
        raise DatabaseSetupError(
            f"pgvector is not available to this database ({str(err).strip().splitlines()[0]}); install the "
            f"pgvector package on the server, then run as a superuser in this database: {PGVECTOR_STATEMENT}"
        ) from err
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")


def grant_reader(conn: Executor, schemas: Sequence[str]) -> None:
    """USAGE, SELECT on every table and default SELECT on future tables of each schema, for the reader role
    (schemas are created when missing, so grants made before the data is loaded still apply)."""
    role = sql.Identifier(READER_ROLE)
    for schema in schemas:
        name = sql.Identifier(schema)
        for statement in ("CREATE SCHEMA IF NOT EXISTS {schema}",
                          "GRANT USAGE ON SCHEMA {schema} TO {role}",
                          "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}",
                          "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO {role}"):
            conn.execute(sql.SQL(statement).format(schema=name, role=role))


def bootstrap(settings: Settings | None = None) -> str:
    """The database URL with cubesage's schemas applied: what every command that reads them calls first."""
    settings = settings or get_settings()
    url = database_url(settings)
    apply_schema(url, settings.warehouse_schemas)
    return url


async def _configure(conn: psycopg.AsyncConnection) -> None:
    await register_vector_async(conn)


def async_pool(url: str, min_size: int = 1, max_size: int = 16) -> AsyncConnectionPool:
    """An (unopened) async pool; open it with ``await pool.open()`` or ``async with``."""
    return AsyncConnectionPool(
        url, min_size=min_size, max_size=max_size, configure=_configure, open=False,
        kwargs={"autocommit": True},
    )

"""Database access: resolve the URL (external or embedded), apply schema files, open connections.

Sync connections serve the CLI and loaders; an async pool (psycopg 3) serves the API.
Every connection has pgvector's types registered.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector, register_vector_async
from psycopg_pool import AsyncConnectionPool

from cubesage_core.settings import Settings, get_settings

SCHEMA_PACKAGE = "cubesage_core.schema"
READER_ROLE = "cubesage_reader"


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


def apply_schema(url: str) -> None:
    """Create extensions, schemas, tables, indices and the read-only role (idempotent)."""
    with psycopg.connect(url, autocommit=True) as conn:  # no vector type yet on a brand-new database
        conn.execute("SELECT pg_advisory_lock(4242)")
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            for path in schema_files():
                conn.execute(path.read_text())
        finally:
            conn.execute("SELECT pg_advisory_unlock(4242)")


async def _configure(conn: psycopg.AsyncConnection) -> None:
    await register_vector_async(conn)


def async_pool(url: str, min_size: int = 1, max_size: int = 16) -> AsyncConnectionPool:
    """An (unopened) async pool; open it with ``await pool.open()`` or ``async with``."""
    return AsyncConnectionPool(
        url, min_size=min_size, max_size=max_size, configure=_configure, open=False,
        kwargs={"autocommit": True},
    )

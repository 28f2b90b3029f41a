"""Load TPC-H at scale factor 0.1 into PostgreSQL.

DuckDB's built-in ``tpch`` extension generates the eight tables (``CALL dbgen``), each is exported to a
CSV file and streamed into PostgreSQL with ``COPY``. Keys, foreign keys and indexes are added after the
load (``constraints.sql``), then the tables are analysed and the read-only query role may select them.
The schema is dropped and recreated, so loading again gives the same data.
"""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import psycopg
from psycopg import sql

from warehouses._csv_pack import COPY_BLOCK, check_schema, grant_reader, recreate_schema

SCALE_FACTOR = 0.1
HERE = Path(__file__).resolve().parent
TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")


def _columns(conn: psycopg.Connection, table: str) -> list[str]:
    """The PostgreSQL columns of ``table`` (in the current search_path), in table order."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
        " ORDER BY attnum",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def _export_csv(duck: duckdb.DuckDBPyConnection, table: str, columns: list[str], folder: Path) -> Path:
    """Write ``table`` from DuckDB to a headerless CSV file with the PostgreSQL column order."""
    path = folder / f"{table}.csv"
    select = ", ".join(f'"{c}"' for c in columns)
    duck.execute(f"COPY (SELECT {select} FROM {table}) TO '{path}' (FORMAT csv, HEADER false)")
    return path


def _copy_into(conn: psycopg.Connection, table: str, columns: list[str], path: Path) -> int:
    """Stream the CSV file into ``table``; returns the number of rows copied."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    with conn.cursor() as cur:
        with cur.copy(statement) as copy, path.open("rb") as source:
            while block := source.read(COPY_BLOCK):
                copy.write(block)
        return cur.rowcount


def _copy_tables(conn: psycopg.Connection, duck: duckdb.DuckDBPyConnection, folder: Path) -> dict[str, int]:
    """Copy every table; DuckDB exports the next CSV file while PostgreSQL reads the current one."""
    columns = {table: _columns(conn, table) for table in TABLES}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tpch-export") as exporter:
        files = {t: exporter.submit(_export_csv, duck, t, columns[t], folder) for t in TABLES}
        return {t: _copy_into(conn, t, columns[t], files[t].result()) for t in TABLES}


def load(url: str, schema: str) -> dict[str, int]:
    """(Re)create ``schema`` with the TPC-H tables at scale factor 0.1; returns row counts per table."""
    check_schema(schema)
    with (
        tempfile.TemporaryDirectory(prefix="tpch-") as tmp,
        duckdb.connect() as duck,
        psycopg.connect(url, autocommit=True) as conn,
    ):
        duck.execute("SET enable_progress_bar = false")
        duck.execute(f"CALL dbgen(sf = {SCALE_FACTOR})")
        with conn.transaction():
            recreate_schema(conn, schema, HERE)
            counts = _copy_tables(conn, duck, Path(tmp))
            conn.execute((HERE / "constraints.sql").read_text(encoding="utf-8"))
            grant_reader(conn, schema)
        conn.execute(sql.SQL("ANALYZE {}").format(sql.SQL(", ").join(sql.Identifier(schema, t) for t in TABLES)))
    return counts

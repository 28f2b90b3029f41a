"""The HNSW indexes of the PostgreSQL SAG store, dropped for a bulk load and built once after it.

Inserting into an HNSW graph row by row costs far more than building the graph once over loaded rows
(pgvector's advice: create the index after the initial load). A bulk write drops the indexes of
``cubesage_core/schema/035_sag_vector_indexes.sql``; :func:`build` runs that file again. Searches in between
are exact scans (right, only slower); any ``apply_schema`` also rebuilds missing indexes.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

SQL_FILE = Path(__file__).resolve().parents[2] / "cubesage_core" / "schema" / "035_sag_vector_indexes.sql"
BULK_DOCS = 1000  # documents in one batch from which the indexes are dropped until the load is flushed
BUILD_MEMORY = "256MB"  # maintenance_work_mem of the build: the graph of ~200k vectors fits
_INDEX = re.compile(r"CREATE INDEX IF NOT EXISTS (\w+) ON (\w+)\.\w+", re.IGNORECASE)
_RETIRED = re.compile(r"^DROP INDEX IF EXISTS (\w+\.\w+);", re.IGNORECASE | re.MULTILINE)


def names() -> list[str]:
    """Qualified names of the HNSW indexes the schema file creates."""
    return [f"{schema}.{name}" for name, schema in _INDEX.findall(SQL_FILE.read_text())]


def retired() -> list[str]:
    """Qualified names of the indexes the schema file drops (built by earlier versions, no longer searched)."""
    return _RETIRED.findall(SQL_FILE.read_text())


def drop(conn: psycopg.Connection) -> None:
    """Drop the indexes (and retired ones a database that skipped ``apply_schema`` still maintains)."""
    for name in [*names(), *retired()]:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def build(conn: psycopg.Connection) -> None:
    """Create the missing indexes (all of them after :func:`drop`)."""
    with conn.transaction():
        conn.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
        conn.execute(SQL_FILE.read_text())

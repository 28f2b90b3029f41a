"""Run guarded SQL: READ ONLY transaction, SET LOCAL statement_timeout, SET LOCAL ROLE cubesage_reader.

The transaction is always rolled back; entity values travel as bind parameters only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from cubesage_core.db import READER_ROLE
from router.sqlguard import GuardedSql


class QueryExecutionError(RuntimeError):
    """The warehouse refused or timed out a guarded query."""


@dataclass
class QueryRows:
    columns: list[str]
    rows: list[list[Any]]


def run_readonly(
    conn: psycopg.Connection, guarded: GuardedSql, params: dict[str, Any] | None = None, *, timeout_ms: int = 5000
) -> QueryRows:
    """Execute ``guarded`` on an autocommit connection inside a read-only, rolled-back transaction."""
    try:
        with conn.cursor() as cur:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            try:
                cur.execute("SELECT set_config('statement_timeout', %s, true)", (str(int(timeout_ms)),))
                cur.execute(f"SET LOCAL ROLE {READER_ROLE}")
                cur.execute(guarded.sql, params or None)
                columns = [d.name for d in cur.description or []]
                rows = [list(r) for r in cur.fetchall()]
            finally:
                cur.execute("ROLLBACK")
    except psycopg.Error as err:
        raise QueryExecutionError(f"warehouse query failed: {str(err).strip().splitlines()[0]}") from err
    return QueryRows(columns, rows)

"""The guard's allowed tables: physical tables behind the ``table:`` semantic assets.

A table asset names its table in ``meta.sql_table``; a cube defined by SQL (``meta.sql``) allows
the tables that SQL reads.
"""

from __future__ import annotations

import psycopg
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from router.sqlguard.policy import GuardPolicy


def allowed_tables(conn: psycopg.Connection, default_schema: str = "warehouse") -> frozenset[str]:
    rows = conn.execute(
        "SELECT meta->>'sql_table', meta->>'sql' FROM semlayer.asset WHERE asset_type = 'table'").fetchall()
    out: set[str] = set()
    for sql_table, sql in rows:
        if sql_table:
            out.add(sql_table.lower() if "." in sql_table else f"{default_schema}.{sql_table.lower()}")
        elif sql:
            try:
                tree = sqlglot.parse_one(sql, read="postgres")
            except ParseError:
                continue
            out |= {f"{(t.db or default_schema).lower()}.{t.name.lower()}" for t in tree.find_all(exp.Table)}
    return frozenset(out)


def policy_from_assets(conn: psycopg.Connection, *, max_limit: int = 1000, default_limit: int = 100,
                       default_schema: str = "warehouse") -> GuardPolicy:
    """A guard policy over the semantic assets currently in ``semlayer.asset``."""
    return GuardPolicy(allowed_tables(conn, default_schema), max_limit=max_limit, default_limit=default_limit,
                       default_schema=default_schema)

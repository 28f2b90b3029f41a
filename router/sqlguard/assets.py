"""The guard's allowed tables: physical tables behind the ``table:`` semantic assets, within the configured
warehouse schemas.

A table asset names its table in ``meta.sql_table``; a cube defined by SQL (``meta.sql``) allows
the tables that SQL reads. Tables outside ``schemas`` are never allowed, whatever a model says.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from router.sqlguard.policy import GuardPolicy


def allowed_tables(
    conn: psycopg.Connection, default_schema: str = "warehouse", schemas: Sequence[str] | None = None
) -> frozenset[str]:
    rows = conn.execute(
        "SELECT meta->>'sql_table', meta->>'sql' FROM semlayer.asset WHERE asset_type = 'table'"
    ).fetchall()
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
    inside = {s.lower() for s in (schemas or [default_schema])}
    return frozenset(t for t in out if t.split(".", 1)[0] in inside)


def policy_from_assets(
    conn: psycopg.Connection,
    *,
    max_limit: int = 1000,
    default_limit: int = 100,
    default_schema: str | None = None,
    schemas: Sequence[str] | None = None,
) -> GuardPolicy:
    """A guard policy over the semantic assets currently in ``semlayer.asset``, limited to the warehouse
    ``schemas`` (default: ``default_schema`` alone; ``default_schema`` defaults to the first schema)."""
    schemas = list(schemas or [default_schema or "warehouse"])
    default = default_schema or schemas[0]
    return GuardPolicy(
        allowed_tables(conn, default, schemas),
        max_limit=max_limit,
        default_limit=default_limit,
        default_schema=default,
        allowed_schemas=frozenset(schemas),
    )

"""Counts behind a capped detail query, in SQL: its rows without the LIMIT, and its rows per group.

A detail query stops at its LIMIT; how many rows it would have returned, and how many of them belong to
each entity of a mixed answer ("claims per policy"), are counted by the database over the same SELECT
(LIMIT, OFFSET and ORDER BY dropped), never by counting the rows that were fetched. Both queries pass the
SQL guard and run read-only under the reader role, as the detail query did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
import sqlglot
from sqlglot import exp

from router.sqlguard import GuardPolicy, guard_sql
from router.sqlguard.execute import run_readonly


def unlimited(sql: str) -> str:
    """``sql`` without its outer LIMIT, OFFSET and ORDER BY (a set of rows, not a page of them)."""
    tree = sqlglot.parse_one(sql, read="postgres")
    for arg in ("limit", "offset", "order"):
        tree.set(arg, None)
    return tree.sql(dialect="postgres")


def limit_of_sql(sql: str) -> int:
    """The outer LIMIT of ``sql`` (0 without one)."""
    limit = sqlglot.parse_one(sql, read="postgres").args.get("limit")
    value = limit.expression if limit is not None else None
    return int(value.name) if isinstance(value, exp.Literal) and value.is_int else 0


def count_rows(
    conn: psycopg.Connection, sql: str, params: dict[str, Any] | None, policy: GuardPolicy, *, timeout_ms: int
) -> int:
    """How many rows ``sql`` returns without its LIMIT."""
    counted = guard_sql(f"SELECT count(*) AS total FROM ({unlimited(sql)}) AS capped LIMIT 1", policy)
    return int(run_readonly(conn, counted, params, timeout_ms=timeout_ms).rows[0][0])


def count_groups(
    conn: psycopg.Connection,
    sql: str,
    params: dict[str, Any] | None,
    columns: Sequence[str],
    policy: GuardPolicy,
    *,
    timeout_ms: int,
) -> list[tuple[Any, ...]]:
    """(value of each of ``columns``..., row count) of ``sql`` without its LIMIT, grouped by ``columns``
    (output names of ``sql``); at most ``policy.max_limit`` groups, the largest first."""
    names = ", ".join(exp.to_identifier(c, quoted=True).sql(dialect="postgres") for c in columns)
    positions = ", ".join(str(i + 1) for i in range(len(columns)))
    grouped = guard_sql(
        f"SELECT {names}, count(*) AS n FROM ({unlimited(sql)}) AS capped GROUP BY {positions} "
        f"ORDER BY n DESC LIMIT {policy.max_limit}",
        policy,
    )
    return [tuple(row) for row in run_readonly(conn, grouped, params, timeout_ms=timeout_ms).rows]

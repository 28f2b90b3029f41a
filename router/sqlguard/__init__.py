"""SQL guard: parse generated SQL with sqlglot and let through only one bounded, read-only SELECT.

Rules run in order over the AST (one rule per module in ``rules/``, like sqlglot's optimizer):
single statement -> select only -> no writes -> allowed tables -> denied functions -> limit.
Each rule raises :class:`SqlGuardError` naming itself; the limit rule rewrites the tree.
The verdict is a pure function of (SQL, policy), so accepted SQL is memoised.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy
from router.sqlguard.rules import TREE_RULES, single_statement

__all__ = ["GuardPolicy", "GuardedSql", "SqlGuardError", "guard_sql"]

DIALECT = "postgres"


@dataclass(frozen=True)
class GuardedSql:
    """SQL that passed every rule: the rewritten text, the tables it reads and its LIMIT."""

    sql: str
    tables: tuple[str, ...]
    limit: int


@lru_cache(maxsize=4096)
def guard_sql(sql: str, policy: GuardPolicy) -> GuardedSql:
    """Check ``sql`` against ``policy``; return the (LIMIT-enforced) SQL or raise :class:`SqlGuardError`."""
    if not sql or not sql.strip():
        raise SqlGuardError("parse", "empty SQL")
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if isinstance(s, exp.Expression)]  # not None
    except (ParseError, ValueError) as err:
        raise SqlGuardError("parse", f"SQL does not parse: {str(err).splitlines()[0]}") from err
    tree = single_statement(statements, policy)
    for rule in TREE_RULES:
        tree = rule(tree, policy)
    from router.sqlguard.rules.allowed_tables import physical_tables
    from router.sqlguard.rules.limit import limit_of

    return GuardedSql(sql=tree.sql(dialect=DIALECT), tables=tuple(sorted(physical_tables(tree))), limit=limit_of(tree))

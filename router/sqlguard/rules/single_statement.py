"""Rule: exactly one statement (no ``;``-chained statements)."""

from __future__ import annotations

from sqlglot import exp

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy


def single_statement(statements: list[exp.Expression], policy: GuardPolicy) -> exp.Expression:
    if len(statements) != 1:
        raise SqlGuardError("single_statement", f"expected exactly one statement, got {len(statements)}")
    return statements[0]

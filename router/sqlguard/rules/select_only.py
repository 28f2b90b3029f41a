"""Rule: the statement is a SELECT (or a set operation of SELECTs), without INTO or row locks."""

from __future__ import annotations

from sqlglot import exp

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy


def select_only(tree: exp.Expression, policy: GuardPolicy) -> exp.Expression:
    if not isinstance(tree, exp.Select | exp.SetOperation):
        raise SqlGuardError("select_only", f"only SELECT is allowed, got {tree.key.upper()}")
    if tree.find(exp.Into):
        raise SqlGuardError("select_only", "SELECT ... INTO creates a table")
    if tree.find(exp.Lock):
        raise SqlGuardError("select_only", "row locks (FOR UPDATE/SHARE) are not allowed")
    return tree

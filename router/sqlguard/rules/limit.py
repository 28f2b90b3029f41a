"""Rule: the outer query has a literal LIMIT no larger than the cap (added when missing, lowered when over)."""

from __future__ import annotations

from sqlglot import exp

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy


def limit_of(tree: exp.Expression) -> int:
    limit = tree.args.get("limit")
    return int(limit.expression.name) if limit is not None else 0


def enforce_limit(tree: exp.Expression, policy: GuardPolicy) -> exp.Expression:
    assert isinstance(tree, exp.Query), "select_only runs before the limit rule"
    limit = tree.args.get("limit")
    if limit is None:
        return tree.limit(policy.default_limit, copy=False)
    value = limit.expression
    if not (isinstance(value, exp.Literal) and value.is_int):
        raise SqlGuardError("limit", f"LIMIT must be an integer literal, got {value.sql()}")
    if int(value.name) > policy.max_limit:
        return tree.limit(policy.max_limit, copy=False)
    return tree

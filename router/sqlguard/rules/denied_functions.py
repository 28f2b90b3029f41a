"""Rule: no function from the deny-list (sleep, file and directory access, dblink, large objects, settings)."""

from __future__ import annotations

from sqlglot import exp

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy


def _name(func: exp.Func) -> str:
    return func.name if isinstance(func, exp.Anonymous) else func.sql_name()


def denied_functions(tree: exp.Expression, policy: GuardPolicy) -> exp.Expression:
    for func in tree.find_all(exp.Func):
        name = _name(func)
        if name and policy.denies(name):
            raise SqlGuardError("denied_functions", f"function {name.lower()}() is not allowed")
    return tree

"""Rule: every table read lies in a configured warehouse schema and is a physical table of the semantic assets
(CTE names excepted). The schemas come from settings, so no model can widen what the guard lets through."""

from __future__ import annotations

from sqlglot import exp

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy


def _cte_names(tree: exp.Expression) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def physical_tables(tree: exp.Expression, default_schema: str = "warehouse") -> set[str]:
    """``schema.table`` names of the real tables ``tree`` reads (CTE references excluded)."""
    ctes = _cte_names(tree)
    out: set[str] = set()
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # table functions are judged by the function rule
        if not table.db and table.name.lower() in ctes:
            continue
        out.add(f"{(table.db or default_schema).lower()}.{table.name.lower()}")
    return out


def allowed_tables(tree: exp.Expression, policy: GuardPolicy) -> exp.Expression:
    for table in tree.find_all(exp.Table):
        if table.catalog:
            raise SqlGuardError("allowed_tables", f"cross-database reference {table.sql()} is not allowed")
        if not isinstance(table.this, exp.Identifier):
            raise SqlGuardError("allowed_tables", f"table function {table.this.sql()} is not allowed")
    read = physical_tables(tree, policy.default_schema)
    outside = sorted(t for t in read if t.split(".", 1)[0] not in policy.allowed_schemas)
    if outside:
        raise SqlGuardError(
            "allowed_tables",
            f"table(s) {', '.join(outside)} are outside the warehouse schemas "
            f"({', '.join(sorted(policy.allowed_schemas))})",
        )
    if not policy.allowed_tables:
        raise SqlGuardError("allowed_tables", "no semantic assets are loaded, so no table may be read")
    unknown = read - policy.allowed_tables
    if unknown:
        raise SqlGuardError("allowed_tables", f"table(s) {', '.join(sorted(unknown))} are not semantic assets")
    ctes = _cte_names(tree)
    for table in tree.find_all(exp.Table):  # pin unqualified names to the default schema
        if not table.db and table.name.lower() not in ctes:
            table.set("db", exp.to_identifier(policy.default_schema))
    return tree

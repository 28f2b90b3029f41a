"""Render a detail plan as a sqlglot SELECT with named bind parameters (never inlined values).

The tree is built in place (``copy=False``): it is local to one call.
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from router.detail.plan import DetailPlan
from router.detail.schema import DetailCatalog

OPS = {"=": exp.EQ, ">": exp.GT, ">=": exp.GTE, "<": exp.LT, "<=": exp.LTE}


def build_select(plan: DetailPlan, catalog: DetailCatalog) -> tuple[str, dict[str, Any]]:
    """``(sql, params)`` for ``plan``; params are named ``%(pN)s`` placeholders; tables and aliases from
    ``catalog``."""

    def col(table: str, column: str) -> exp.Column:
        return exp.column(column, catalog.alias(table))

    def source(table: str) -> exp.Table:
        spec = catalog.tables[table]
        return exp.table_(spec.table, db=spec.schema, alias=spec.alias)

    names: list[str] = []
    select = []
    for table, column in plan.columns:
        name = column if column not in names else f"{catalog.alias(table)}_{column}"
        names.append(name)
        select.append(col(table, column).as_(name) if name != column else col(table, column))
    query = sqlglot.select(*select).from_(source(plan.target), copy=False)
    for step in plan.joins:
        edge = step.edge
        on = exp.EQ(this=col(edge.child, edge.column), expression=col(edge.parent, edge.parent_column))
        query = query.join(source(step.right), on=on, copy=False)
    params: dict[str, Any] = {}
    equal: dict[tuple[str, str], list[exp.Placeholder]] = {}
    for i, f in enumerate(plan.filters):
        key = f"p{i}"
        params[key] = f.value
        if f.op == "=":  # several values of one column (e.g. five products) mean any of them
            equal.setdefault((f.table, f.column), []).append(exp.Placeholder(this=key))
        else:
            query = query.where(
                OPS[f.op](this=col(f.table, f.column), expression=exp.Placeholder(this=key)), copy=False
            )
    for (table, column), holders in equal.items():
        condition = (
            exp.EQ(this=col(table, column), expression=holders[0])
            if len(holders) == 1
            else exp.In(this=col(table, column), expressions=holders)
        )
        query = query.where(condition, copy=False)
    if plan.distinct:
        query = query.distinct(copy=False)
    if plan.order_by:
        query = query.order_by(exp.Ordered(this=col(*plan.order_by), desc=True), copy=False)
    query = query.limit(plan.limit, copy=False)
    return query.sql(dialect="postgres"), params

"""LLM mode of the detail path: a DSPy program writes the SELECT over the budgeted context.

The prompt lists only the tables the plan needs, the named rows' tables and the recalled tables (their
own columns and the join keys between them, cut to ``CONTEXT_TOKENS``), the named rows as placeholders
(``%(e0)s``) and the words the question binds to values, time ranges and bounds. The SQL is rejected,
and asked again once with the reasons, when it does not parse or pass the SQL guard, reads a table or a
column not listed, inlines an entity value, uses an unknown placeholder, leaves an entity filter unused,
or the warehouse refuses it (``probe``: the caller runs it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dspy
import sqlglot
from sqlglot import exp

from cubesage_core.tokens import count_tokens
from router.detail.entities import EntityMatch
from router.detail.plan import DetailPlan
from router.detail.schema import DetailCatalog
from router.sqlguard import GuardPolicy, SqlGuardError, guard_sql
from router.sqlguard.execute import QueryExecutionError

_FENCE = re.compile(r"^```(?:sql)?\s*|\s*```$", re.IGNORECASE)
CONTEXT_TOKENS = 1200  # table and join lines shown to the LLM
RECALLED_TABLES = 3


class DetailSql(dspy.Signature):
    """Write ONE PostgreSQL SELECT listing the rows the question asks for.
    Use only the tables and columns listed, schema-qualified exactly as listed, joined on the join keys given.
    Filter by every named row through its placeholder exactly as given (e.g. %(e0)s); never write a named
    row's value as a literal. Apply every binding as a WHERE condition. Order by the listed time column,
    newest first, and end with the LIMIT given."""

    question: str = dspy.InputField()
    tables: str = dspy.InputField(desc="tables with their columns, then join keys")
    entities: str = dspy.InputField(desc="placeholder = value (table.column) per named row; use every one")
    bindings: str = dspy.InputField(desc="question words bound to column values, time ranges, bounds; the limit")
    feedback: str = dspy.InputField(desc="why the previous SQL was rejected, or 'none'")
    sql: str = dspy.OutputField(desc="one SELECT statement, no commentary")


@dataclass(frozen=True)
class DetailContext:
    """The budgeted prompt context: tables shown (by name), their text and the columns it lists."""

    tables: tuple[str, ...]
    text: str
    columns: frozenset[str] = frozenset()  # lower-cased: the shown tables' columns and the join keys


def _table_columns(catalog: DetailCatalog, table: str) -> list[str]:
    spec = catalog.tables[table]
    shown = {c for t, c in (*spec.display, *([spec.time] if spec.time else [])) if t == table}
    return sorted(shown | set(spec.columns))


def _table_line(catalog: DetailCatalog, table: str) -> str:
    spec = catalog.tables[table]
    time = f"; time column {spec.time[1]}" if spec.time and spec.time[0] == table else ""
    return f"{spec.qualified}({', '.join(_table_columns(catalog, table))}){time}"


def detail_context(
    plan: DetailPlan, catalog: DetailCatalog, recalled: list[str], budget: int = CONTEXT_TOKENS
) -> DetailContext:
    """Plan tables first, then the named rows' tables, recalled tables, then the target's neighbours, while the
    table lines fit ``budget`` tokens; join keys between the shown tables."""
    neighbours = [
        e.parent if e.child == plan.target else e.child
        for e in catalog.graph.edges
        if plan.target in (e.child, e.parent)
    ]
    wanted = [*plan.tables, *(e.table for e in plan.entities), *recalled[:RECALLED_TABLES], *neighbours]
    shown: list[str] = []
    lines: list[str] = []
    used = 0
    for table in dict.fromkeys(t for t in wanted if t in catalog.tables):
        line = _table_line(catalog, table)
        cost = count_tokens(line) + 1
        if shown and used + cost > budget:
            continue
        shown.append(table)
        lines.append(line)
        used += cost
    tables = catalog.tables
    joins = [e for e in catalog.graph.edges if e.child in shown and e.parent in shown]
    lines += [
        f"join {tables[e.child].qualified}.{e.column} = {tables[e.parent].qualified}.{e.parent_column}" for e in joins
    ]
    columns = {c.lower() for t in shown for c in _table_columns(catalog, t)}
    columns |= {c.lower() for e in joins for c in (e.column, e.parent_column)}
    return DetailContext(tuple(shown), "\n".join(lines), frozenset(columns))


def _unlisted_columns(tree: exp.Expr, context: DetailContext) -> list[str]:
    """Columns the SQL reads that the prompt did not list (names the SQL itself defines as aliases are fine)."""
    defined = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    defined |= {c.name.lower() for alias in tree.find_all(exp.TableAlias) for c in alias.columns}
    return sorted(
        {
            c.name
            for c in tree.find_all(exp.Column)
            if not isinstance(c.this, exp.Star) and c.name.lower() not in context.columns | defined
        }
    )


def entity_params(entities: list[EntityMatch]) -> tuple[str, dict[str, Any]]:
    params = {f"e{i}": e.key_value for i, e in enumerate(entities)}
    text = (
        "\n".join(
            f"%(e{i})s = {e.key_value!r} ({e.table}.{e.key_column}; {e.entity_type} {e.label})"
            for i, e in enumerate(entities)
        )
        or "(none)"
    )
    return text, params


def bindings_text(plan: DetailPlan, catalog: DetailCatalog) -> str:
    """The plan's filters that are not named rows (value words, time range, bounds), and its limit."""
    named = {(e.table, e.key_column, e.key_value) for e in plan.entities}
    lines = [
        f"{catalog.tables[f.table].qualified}.{f.column} {f.op} {f.value!r} ({f.label})"
        for f in plan.filters
        if (f.table, f.column, f.value) not in named and f.table in catalog.tables
    ]
    return "\n".join([*lines, f"LIMIT {plan.limit}"])


def check_sql(
    sql: str,
    params: dict[str, Any],
    entities: list[EntityMatch],
    context: DetailContext,
    catalog: DetailCatalog,
    policy: GuardPolicy,
) -> list[str]:
    """Why the SQL cannot be run as the answer (empty when it can)."""
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
        guard_sql(sql, policy)
    except (sqlglot.errors.ParseError, SqlGuardError) as err:
        return [f"{type(err).__name__}: {err}"[:300]]
    problems = []
    allowed = {catalog.tables[t].table.lower() for t in context.tables}
    allowed |= {cte.alias.lower() for cte in tree.find_all(exp.CTE)}  # a WITH of its own reads listed tables
    outside = sorted({t.name for t in tree.find_all(exp.Table) if t.name.lower() not in allowed})
    if outside:
        problems.append(f"tables not listed: {outside}; use only the listed tables")
    if not outside and (unlisted := _unlisted_columns(tree, context)):
        problems.append(f"columns not listed: {unlisted}; use only the listed columns of the listed tables")
    labels = {str(e.label).lower() for e in entities}
    inlined = sorted({lit.name for lit in tree.find_all(exp.Literal) if lit.is_string and lit.name.lower() in labels})
    if inlined:
        problems.append(f"the SQL inlines the entity value(s) {inlined}: use their placeholders")
    used = {p.name for p in tree.find_all(exp.Placeholder)}
    if unknown := sorted(used - set(params)):
        problems.append(f"unknown placeholders {unknown}")
    for name in sorted(set(params) - used):
        entity = entities[int(name[1:])]
        problems.append(
            f"the entity filter %({name})s ({entity.label}) is unused: filter "
            f"{catalog.tables[entity.table].qualified}.{entity.key_column} by it"
        )
    return problems


Probe = Callable[[str, dict[str, Any]], None]  # runs a checked SQL; raises what the warehouse refuses


def llm_detail_sql(
    question: str,
    plan: DetailPlan,
    catalog: DetailCatalog,
    policy: GuardPolicy,
    recalled: list[str] | None = None,
    probe: Probe | None = None,
) -> tuple[str, dict[str, Any]]:
    """``(sql, params)`` from the LM, asked again once with the problems (the checks, then what ``probe``
    raises running it); raises ValueError after that."""
    entities = list(plan.entities)
    context = detail_context(plan, catalog, recalled or [])
    text, params = entity_params(entities)
    predict = dspy.Predict(DetailSql)
    feedback = "none"
    for _ in range(2):
        reply = predict(
            question=question,
            tables=context.text,
            entities=text,
            bindings=bindings_text(plan, catalog),
            feedback=feedback,
        )
        sql = _FENCE.sub("", str(reply.sql).strip()).strip().rstrip(";")
        problems = check_sql(sql, params, entities, context, catalog, policy)
        if not problems and (refused := _probe(probe, sql, params)) is None:
            return sql, params
        problems = problems or [f"the warehouse refused the SQL: {refused}"]
        feedback = "; ".join(problems)
    raise ValueError(f"the LLM SQL was rejected twice: {feedback}")


def _probe(probe: Probe | None, sql: str, params: dict[str, Any]) -> str | None:
    """What the warehouse says running the SQL, when it refuses it (None: it ran, or nothing to run it on)."""
    if probe is None:
        return None
    try:
        probe(sql, params)
    except (SqlGuardError, QueryExecutionError) as err:
        return str(err)[:300]
    return None

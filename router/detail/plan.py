"""Detail plan: which table's rows to list, filtered by which entities and values, shown with which columns.

The fast planner fills a template from the question: head noun -> target table (or the top SAG table
hit), named entities and value words -> filters, the time range -> a filter on the target's time
column, top-N -> LIMIT; joins follow the shortest path in the join graph. Tables, columns and words
come from the ``DetailCatalog``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from router.detail.entities import EntityMatch
from router.detail.joins import JoinGraph, Step
from router.detail.schema import DetailCatalog
from router.detail.vocabulary import (
    TABLE_LOOKUP,
    ValueWord,
    id_references,
    row_limit,
    target_table,
    threshold,
    unknown_table,
    value_filters,
)
from router.understanding.negation import negation, refusal

# a key word right after a table noun: the noun names a reference column ("发票号", "invoice id"), not rows
_KEY_WORD = re.compile(r"\s*(?:编号|单号|号|id\b|ids\b|number|no\b|#)", re.IGNORECASE)


class DetailPlanError(ValueError):
    """The question names no table, entity or value a detail query could list."""


@dataclass
class Filter:
    table: str
    column: str
    op: str  # = | > | >= | < | <=
    value: Any
    label: str


@dataclass
class DetailPlan:
    kind: str  # rows | table_lookup
    target: str
    columns: list[tuple[str, str]] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    joins: list[Step] = field(default_factory=list)
    order_by: tuple[str, str] | None = None
    limit: int = 100
    distinct: bool = False
    entities: list[EntityMatch] = field(default_factory=list)

    @property
    def tables(self) -> list[str]:
        return [self.target, *[s.right for s in self.joins]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.target,
            "columns": [f"{t}.{c}" for t, c in self.columns],
            "filters": [{"column": f"{f.table}.{f.column}", "op": f.op, "label": f.label} for f in self.filters],
            "joins": [f"{s.left}->{s.right}" for s in self.joins],
            "limit": self.limit,
            "distinct": self.distinct,
            "entities": [e.to_dict() for e in self.entities],
        }


def plan_detail(
    text: str,
    *,
    language: str,
    entities: list[EntityMatch],
    time_range: tuple[date, date] | None,
    limit: int | None,
    recalled_tables: list[str],
    catalog: DetailCatalog,
    default_limit: int = 100,
) -> DetailPlan:
    """The fast (template) plan for a detail question."""
    missing = unknown_table(text, catalog.known_names)
    if missing:
        raise DetailPlanError(
            f"the warehouse has no table named {missing!r} (it has {', '.join(sorted(catalog.tables))})"
        )
    if TABLE_LOOKUP.search(text):
        return _table_lookup(text, recalled_tables, catalog)
    if phrase := negation(text):
        raise DetailPlanError(refusal(phrase))
    entities = [e for e in entities if e.table in catalog.tables]  # rows of tables the model does not describe
    values = value_filters(_without_names(text, entities), catalog.values)
    target = target_table(text, catalog.nouns, catalog.derived_nouns)
    if target is None and entities:
        target = entities[0].table
    if target is None or target not in catalog.tables:
        kinds = [t.entity_type for t in catalog.entity_tables]
        named = ", ".join(kinds[:-1]) + f" or {kinds[-1]}" if len(kinds) > 1 else "".join(kinds) or "entity"
        raise DetailPlanError(f"the question names no table, {named} to list")
    plan = DetailPlan(
        kind="rows", target=target, limit=limit or row_limit(text) or default_limit, entities=list(entities)
    )
    plan.columns = _columns(target, entities, language, catalog)
    for entity in entities:
        plan.filters.append(Filter(entity.table, entity.key_column, "=", entity.key_value, entity.label))
    for table, key, phrase in id_references(text, catalog.key_nouns):
        plan.filters.append(Filter(table, catalog.tables[table].key, "=", key, phrase))
    plan.filters.extend(_value_filter(v) for v in values if not _implied(v, target, catalog))
    _amount_bound(plan, text, catalog)
    time_column = catalog.tables[target].time
    if time_range is not None and time_column is not None:
        start, end = time_range
        plan.filters.append(Filter(*time_column, ">=", start, start.isoformat()))
        plan.filters.append(Filter(*time_column, "<", end + timedelta(days=1), end.isoformat()))
    plan.order_by = time_column
    if plan.order_by:
        plan.columns = _ensure(plan.columns, plan.order_by)
    needed = {t for t, _ in plan.columns} | {f.table for f in plan.filters}
    plan.joins = _join_steps(target, needed, catalog.graph)
    plan.distinct = any(s.fans_out for s in plan.joins)
    if unused := _unused_nouns(text, plan, catalog):
        word, table = unused
        cubes = catalog.tables[table].cube, catalog.tables[target].cube
        raise DetailPlanError(
            f"{word!r} names {cubes[0]} rows, which the {cubes[1]} rows listed neither show nor are filtered by: "
            "say how they relate (e.g. a value or column of them)"
        )
    return plan


def _unused_nouns(text: str, plan: DetailPlan, catalog: DetailCatalog) -> tuple[str, str] | None:
    """A table noun of the question ("退货" in "退货发票") whose table the plan does not touch: the template
    would list rows without it, as if the word were not there. A noun naming a key ("发票号", "invoice id")
    is a column of the rows, the reference they carry."""
    used = set(plan.tables)
    found = [
        (m.span(), table)
        for table, p in (*catalog.nouns, *catalog.derived_nouns)
        for m in p.finditer(text)
        if not _KEY_WORD.match(text, m.end())
    ]
    covered = [span for span, table in found if table in used]
    for (start, end), table in found:
        if table not in used and not any(s <= start and end <= e for s, e in covered):
            return text[start:end], table
    return None


def _table_lookup(text: str, recalled_tables: list[str], catalog: DetailCatalog) -> DetailPlan:
    """ "which table has ...": SAG's ranking, with the table the question's noun names first ("complaint reasons"
    -> complaints)."""
    named = target_table(TABLE_LOOKUP.sub(" ", text), catalog.nouns, catalog.derived_nouns)
    target = named if named in recalled_tables else (recalled_tables[0] if recalled_tables else named)
    if target is None:
        raise DetailPlanError("no table of the warehouse matches the question")
    return DetailPlan(kind="table_lookup", target=target, limit=len(recalled_tables))


def _amount_bound(plan: DetailPlan, text: str, catalog: DetailCatalog) -> None:
    """An amount comparison of the question ("claims over 1000") as a filter on the target's value column
    (shown among the columns); a target without one refuses it."""
    bound = threshold(text, tuple(p for _, p in (*catalog.nouns, *catalog.derived_nouns)))
    if bound is None:
        return
    target = plan.target
    spec = catalog.tables[target]
    if spec.value is None:
        raise DetailPlanError(f"{spec.entity_type} rows have no amount to compare with '{bound.phrase}'")
    plan.filters.append(Filter(target, spec.value, bound.op, bound.value, bound.phrase))
    plan.columns = _ensure(plan.columns, (target, spec.value))


def _without_names(text: str, entities: list[EntityMatch]) -> str:
    """The question without the names of its rows: "Acme T9 drill" names a product, not the brand."""
    for entity in entities:
        text = re.sub(re.escape(str(entity.label)), " ", text, flags=re.IGNORECASE)
    return text


def _columns(target: str, entities: list[EntityMatch], language: str, catalog: DetailCatalog) -> list[tuple[str, str]]:
    """The target's display columns, plus the label of each entity of another table (localised there)."""
    cols = [c if c[0] == target else catalog.localize(c, language) for c in catalog.tables[target].display]
    for entity in entities:
        label = catalog.localize((entity.table, catalog.tables[entity.table].label or entity.key_column), language)
        if entity.table != target and not any(t == entity.table for t, _ in cols):
            cols.append(label)
    return cols


def _ensure(cols: list[tuple[str, str]], col: tuple[str, str]) -> list[tuple[str, str]]:
    return cols if col in cols else [*cols, col]


def _value_filter(word: ValueWord) -> Filter:
    return Filter(word.table, word.column, "=", word.value, word.value)


def _implied(word: ValueWord, target: str, catalog: DetailCatalog) -> bool:
    """ "returns" listed from the returns table already are returned shipments: no status filter needed."""
    return any(
        i.target == target and (i.table, i.column, i.value) == (word.table, word.column, word.value)
        for i in catalog.implied
    )


def _join_steps(target: str, needed: set[str], graph: JoinGraph) -> list[Step]:
    steps: list[Step] = []
    reached = {target}
    for table in sorted(needed - {target}):
        for step in graph.path(target, table):
            if step.right not in reached:
                reached.add(step.right)
                steps.append(step)
    return steps

"""LLM mode of the detail path: a DSPy program writes the SELECT, entity values only as placeholders."""

from __future__ import annotations

import re
from typing import Any

import dspy
import sqlglot
from sqlglot import exp

from router.detail.entities import EntityMatch
from router.detail.joins import JoinGraph
from router.detail.plan import DISPLAY_COLUMNS, TIME_COLUMNS

_FENCE = re.compile(r"^```(?:sql)?\s*|\s*```$", re.IGNORECASE)


class DetailSql(dspy.Signature):
    """Write ONE PostgreSQL SELECT listing the warehouse rows the question asks for.
    Use only the tables and columns given, schema-qualified (warehouse.x). Refer to every entity value
    only through its named placeholder exactly as given, e.g. %(e0)s; never write entity values as literals.
    Add ORDER BY on the time column (newest first) and a LIMIT."""

    question: str = dspy.InputField()
    tables: str = dspy.InputField(desc="tables, their columns and join keys")
    entities: str = dspy.InputField(desc="placeholder = value (table.column) per named entity")
    sql: str = dspy.OutputField(desc="one SELECT statement, no commentary")


class DetailSqlProgram(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.write = dspy.Predict(DetailSql)

    def forward(self, question: str, tables: str, entities: str) -> dspy.Prediction:
        return self.write(question=question, tables=tables, entities=entities)


def schema_text(graph: JoinGraph, schema: str = "warehouse") -> str:
    lines = []
    for table, cols in DISPLAY_COLUMNS.items():
        own = sorted({c for t, c in cols if t == table} | {c for t, c in [TIME_COLUMNS.get(table, ("", ""))]
                                                              if t == table})
        lines.append(f"{schema}.{table}({', '.join(own)})")
    lines += [f"join {schema}.{e.child}.{e.column} = {schema}.{e.parent}.{e.parent_column}" for e in graph.edges]
    return "\n".join(lines)


def entity_params(entities: list[EntityMatch]) -> tuple[str, dict[str, Any]]:
    params = {f"e{i}": e.key_value for i, e in enumerate(entities)}
    text = "\n".join(f"%(e{i})s = {e.key_value!r} ({e.table}.{e.key_column}; {e.entity_type} {e.label})"
                     for i, e in enumerate(entities)) or "(none)"
    return text, params


def llm_detail_sql(question: str, entities: list[EntityMatch], graph: JoinGraph) -> tuple[str, dict[str, Any]]:
    """``(sql, params)`` from the LM; raises ValueError when the SQL inlines an entity value."""
    text, params = entity_params(entities)
    pred = DetailSqlProgram()(question=question, tables=schema_text(graph), entities=text)
    sql = _FENCE.sub("", str(pred.sql).strip()).strip().rstrip(";")
    tree = sqlglot.parse_one(sql, read="postgres")
    labels = {e.label.lower() for e in entities}
    for literal in tree.find_all(exp.Literal):
        if literal.is_string and literal.name.lower() in labels:
            raise ValueError(f"the generated SQL inlines the entity value {literal.name!r}")
    used = {p.name for p in tree.find_all(exp.Placeholder)}
    unknown = used - set(params)
    if unknown:
        raise ValueError(f"the generated SQL uses unknown placeholders {sorted(unknown)}")
    return sql, {k: v for k, v in params.items() if k in used}

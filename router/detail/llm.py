"""LLM mode of the detail path: a DSPy program writes the SELECT, entity values only as placeholders."""

from __future__ import annotations

import re
from typing import Any

import dspy
import sqlglot
from sqlglot import exp

from router.detail.entities import EntityMatch
from router.detail.schema import DetailCatalog

_FENCE = re.compile(r"^```(?:sql)?\s*|\s*```$", re.IGNORECASE)


class DetailSql(dspy.Signature):
    """Write ONE PostgreSQL SELECT listing the warehouse rows the question asks for.
    Use only the tables and columns given, schema-qualified exactly as listed. Refer to every entity value
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


def schema_text(catalog: DetailCatalog) -> str:
    """One line per table (its plain, display and time columns) and one per join key."""
    lines = []
    for table, spec in catalog.tables.items():
        shown = {c for t, c in (*spec.display, *([spec.time] if spec.time else [])) if t == table}
        own = sorted(shown | set(spec.columns))
        lines.append(f"{spec.qualified}({', '.join(own)})")
    tables = catalog.tables
    lines += [f"join {tables[e.child].qualified}.{e.column} = {tables[e.parent].qualified}.{e.parent_column}"
              for e in catalog.graph.edges]
    return "\n".join(lines)


def entity_params(entities: list[EntityMatch]) -> tuple[str, dict[str, Any]]:
    params = {f"e{i}": e.key_value for i, e in enumerate(entities)}
    text = "\n".join(f"%(e{i})s = {e.key_value!r} ({e.table}.{e.key_column}; {e.entity_type} {e.label})"
                     for i, e in enumerate(entities)) or "(none)"
    return text, params


def llm_detail_sql(question: str, entities: list[EntityMatch],
                   catalog: DetailCatalog) -> tuple[str, dict[str, Any]]:
    """``(sql, params)`` from the LM; raises ValueError when the SQL inlines an entity value."""
    text, params = entity_params(entities)
    pred = DetailSqlProgram()(question=question, tables=schema_text(catalog), entities=text)
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

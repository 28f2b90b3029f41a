"""What the warehouse holds, in words built from the Cube model: refusal and clarification texts, nouns.

``model_scope(model, conn)`` reads the cubes' titles, a few example measure titles and the data's time
range (min and max of the first time dimension of each cube whose rows are events, see ``_facts``);
``Scope()`` (no model) gives generic texts.
The service builds it once at startup; the time range is read then and cached with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from psycopg import sql

SUBJECTS_SHOWN = 12  # Chinook has 11 cubes: its tracks must not fall off the list
MEASURES_SHOWN = 3


@dataclass(frozen=True)
class Scope:
    subjects: tuple[str, ...] = ()  # cube titles, in model order
    measures: tuple[str, ...] = ()  # example measure titles
    period: tuple[str, str] | None = None  # first and last month with data ("2023-01", "2025-06")
    nouns: dict[str, str] = field(default_factory=dict)  # physical table -> plural noun (cube title, lower)
    nouns_zh: dict[str, str] = field(default_factory=dict)  # physical table -> Chinese noun (glossary)
    subjects_zh: tuple[str, ...] = ()  # the subjects by their Chinese names where the glossary has them

    def unsupported(self, lang: str) -> str:
        span = (
            (
                f" ({self.period[0]} to {self.period[1]})"
                if lang == "en"
                else f"（{self.period[0]} 至 {self.period[1]}）"
            )
            if self.period
            else ""
        )
        if lang == "zh":
            held = f"：仓库只有{'、'.join(self.subjects_zh or self.subjects)}数据{span}。" if self.subjects else "。"
            return "这个问题超出了数据仓库的范围" + held
        held = f": it holds {', '.join(s.lower() for s in self.subjects)}{span}." if self.subjects else "."
        return "I can't answer that from the warehouse" + held

    def clarify(self, lang: str) -> str:
        examples = ", ".join(self.measures)
        if lang == "zh":
            return (
                f"能再具体一点吗？请说明指标（{examples}……）、时间或具体对象。"
                if examples
                else "能再具体一点吗？请说明指标、时间或具体对象。"
            )
        named = f"Name a metric ({examples}...)" if examples else "Name a metric"
        return f"Could you be more specific? {named}, a period, or a row of the data by its name."

    def noun(self, table: str, lang: str) -> str:
        if lang == "zh":
            return self.nouns_zh.get(table) or "记录"
        return self.nouns.get(table) or "rows"


def _physical(cube: Any) -> str | None:
    return cube.sql_table.rpartition(".")[2] if cube.sql_table else None


def _facts(model: Any) -> list[Any]:
    """The cubes whose rows are events: those joining another cube many-to-one (an invoice its customer),
    not the dimensions they point at (an employee's birth date is no period of the data); all without any."""
    cubes = list(model.cubes.values())
    facts = [c for c in cubes if any(j.relationship == "many_to_one" and j.target != c.name for j in c.joins)]
    return facts if any(c.time_dimensions for c in facts) else cubes


def _period(conn: Any, model: Any, default_schema: str) -> tuple[str, str] | None:
    lows, highs = [], []
    for cube in _facts(model):
        if not cube.sql_table or not cube.time_dimensions:
            continue
        schema, _, table = cube.sql_table.rpartition(".")
        column = cube.time_dimensions[0].sql.replace("{CUBE}.", "")
        if not column.isidentifier():
            continue
        query = sql.SQL("SELECT to_char(min({c}), 'YYYY-MM'), to_char(max({c}), 'YYYY-MM') FROM {t}").format(
            c=sql.Identifier(column), t=sql.Identifier(schema or default_schema, table)
        )
        low, high = conn.execute(query).fetchone()
        if low:
            lows.append(low)
            highs.append(high)
    return (min(lows), max(highs)) if lows else None


class Names(Protocol):
    def member_label(self, column: str, language: str) -> str | None: ...


def model_scope(model: Any, conn: Any = None, default_schema: str = "public", names: Names | None = None) -> Scope:
    """The scope of ``model``; the time range is read through ``conn`` when given; ``names`` (the answer
    vocabulary) gives the Chinese nouns of the cubes the glossary names."""
    cubes = [c for c in model.cubes.values() if c.title]
    measures = [m.title for c in cubes for m in c.measures.values() if m.title and m.type != "count" and m.public]
    # by physical table (the template planner's plans) and by cube name (listings through the model)
    nouns = {key: c.title.lower() for c in cubes for key in (_physical(c), c.name) if key}
    nouns_zh = {
        key: zh
        for c in model.cubes.values()
        if names is not None and (zh := names.member_label(c.name, "zh"))
        for key in (_physical(c), c.name)
        if key
    }
    try:
        period = _period(conn, model, default_schema) if conn is not None else None
    except Exception:  # a table the model names but the database lacks: no range, not a failed start
        period = None
    shown = cubes[:SUBJECTS_SHOWN]
    subjects_zh = tuple((names.member_label(c.name, "zh") if names is not None else None) or c.title for c in shown)
    return Scope(tuple(c.title for c in shown), tuple(measures[:MEASURES_SHOWN]), period, nouns, nouns_zh, subjects_zh)

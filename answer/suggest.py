"""Suggested questions built from the model: measures x dimensions x time, in English or Chinese.

Measures come certified first (``meta.certified``), then in model order; each needs a name in the
language (the glossary's, else for English the model title) and a time dimension. Dimensions are the
string dimensions reachable from the measure's cube over many-to-one joins that have a name and few values
in the warehouse (the value index: at most ``MAX_VALUES``), so every suggestion is a readable chart.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

MAX_VALUES = 12
TEMPLATES = {
    "en": (
        "{m} by {d} this year",
        "{m} by month this year",
        "{m} last month",
        "{m} this year vs last year",
        "{m} by {d} last quarter",
        "{m} by quarter",
    ),
    "zh": ("今年各{d}的{m}", "今年每月的{m}", "上个月的{m}", "{m}今年和去年对比", "上季度各{d}的{m}", "每个季度的{m}"),
}


class Names(Protocol):
    def member_label(self, column: str, language: str) -> str | None: ...


class Values(Protocol):
    surfaces: dict[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class Pick:
    measure: str
    dimensions: tuple[str, ...]


def _reachable(model: Any, cube: str) -> list[str]:
    """The cube and the cubes its many-to-one (or one-to-one) joins reach, nearest first."""
    seen, queue, order = {cube}, deque([cube]), []
    while queue:
        name = queue.popleft()
        order.append(name)
        for join in model.cubes[name].joins:
            if join.relationship in ("many_to_one", "one_to_one") and join.target not in seen:
                seen.add(join.target)
                queue.append(join.target)
    return order


def _value_counts(values: Values | None) -> dict[str, int]:
    counts: dict[str, set[str]] = {}
    for pairs in values.surfaces.values() if values is not None else []:
        for member, value in pairs:
            counts.setdefault(member, set()).add(value)
    return {member: len(v) for member, v in counts.items()}


def picks(model: Any, names: Names, values: Values | None, language: str) -> list[Pick]:
    """The measures worth suggesting, each with its readable low-cardinality dimensions."""
    counts = _value_counts(values)
    measures = [
        m
        for m in model.measures()
        if m.public and names.member_label(m.path, language) and model.time_dimension_for(m.path)
    ]
    measures.sort(key=lambda m: not m.meta.get("certified"))
    out = []
    for measure in measures:
        dims = tuple(
            d.path
            for cube in _reachable(model, measure.cube)
            for d in model.cubes[cube].dimensions.values()
            if d.type == "string"
            and d.public
            and 0 < counts.get(d.path, 0) <= MAX_VALUES
            and names.member_label(d.path, language)
        )
        out.append(Pick(measure.path, dims))
    return out


def suggestions(model: Any, names: Names, values: Values | None, language: str, limit: int = 6) -> list[str]:
    """Up to ``limit`` questions, each template once, measures and dimensions rotating."""
    chosen = picks(model, names, values, language)
    if not chosen:
        return []
    out: list[str] = []
    used: set[str] = set()
    for i, template in enumerate(TEMPLATES["zh" if language == "zh" else "en"][:limit]):
        candidates = [p for p in chosen if "{d}" not in template or p.dimensions]
        if not candidates:
            continue
        pick = candidates[i % len(candidates)]
        dims = [d for d in pick.dimensions if d not in used] or list(pick.dimensions)
        dim = dims[0] if dims else ""
        used.add(dim)
        out.append(
            template.format(
                m=names.member_label(pick.measure, language), d=names.member_label(dim, language) if dim else ""
            )
        )
    return out

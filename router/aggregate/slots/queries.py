"""The ``queries`` pass: one Cube query per (period, measure group), ordered and limited for a ranking."""

from __future__ import annotations

from typing import Any

from cube_models.model import SemanticModel
from router.aggregate.slots.base import Slots
from router.understanding.types import TimeRange, Understanding


def build(s: Slots) -> None:
    """queries: the periods compared (or the question's one range), one query per measure group and period."""
    u, notes = s.u, s.notes
    s.ranges = list(u.comparison.ranges) if u.comparison and len(u.comparison.ranges) > 1 else u.time_ranges[:1]
    s.groups = measure_groups(s.measures, s.model)
    if len(s.groups) > 1:
        notes.append(
            "one query per time dimension, rows merged: " + "; ".join(f"{', '.join(ms)} on {td}" for td, ms in s.groups)
        )
    group_queries = [
        _group_query(u, td, ms, index == 0, s.dimensions, s.filters, s.segments, notes)
        for index, (td, ms) in enumerate(s.groups)
    ]
    s.queries, s.labels = _dated_queries(u, s.ranges, s.groups, group_queries, notes)
    for time_dim, _ in s.groups:
        if time_dim and s.ranges:
            notes.append(f"time on {time_dim}: " + "; ".join(f"{r.label} = {r.start}..{r.end}" for r in s.ranges))


def measure_groups(measures: list[str], model: SemanticModel) -> list[tuple[str | None, list[str]]]:
    """Measures grouped by the time dimension that dates them (turnover by issued_at, credit notes by credited_at,
    new accounts by opened_on): each group is one query, so every measure is dated by its own time."""
    groups: dict[str | None, list[str]] = {}
    for measure in measures:
        groups.setdefault(model.time_dimension_for(measure), []).append(measure)
    return list(groups.items())


def _group_query(
    u: Understanding,
    time_dim: str | None,
    measures: list[str],
    leading: bool,
    dimensions: list[str],
    filters: list[dict[str, Any]],
    segments: list[str],
    notes: list[str],
) -> dict[str, Any]:
    """The query of one measure group (without time); the leading group carries the ranking limit."""
    granularity = u.granularity
    if granularity and time_dim is None:
        notes.append(f"granularity '{granularity}' ignored: {measures[0]} has no time dimension")
    base: dict[str, Any] = {"measures": list(measures)}
    if dimensions:
        base["dimensions"] = list(dimensions)
    if filters:
        base["filters"] = [dict(f) for f in filters]
    if segments:
        base["segments"] = list(segments)
    order: list[list[str]] = []
    if u.ranking and (dimensions or granularity):
        order.append([measures[0], u.ranking.direction])
        if u.ranking.limit and leading:
            base["limit"] = u.ranking.limit
            # a ranking must not be led by groups without a value (PostgreSQL sorts NULLs first in DESC)
            base.setdefault("filters", []).append({"member": measures[0], "operator": "set"})
        if leading:
            notes.append(
                f"order by {measures[0]} {u.ranking.direction}"
                + (f", limit {u.ranking.limit}" if u.ranking.limit else "")
            )
    elif granularity and time_dim:
        order.append([time_dim, "asc"])
    elif dimensions:
        order.append([measures[0], "desc"])
    if order:
        base["order"] = order
    return base


def _dated_queries(
    u: Understanding,
    ranges: list[TimeRange],
    groups: list[tuple[str | None, list[str]]],
    group_queries: list[dict[str, Any]],
    notes: list[str],
) -> tuple[list[dict[str, Any]], list[str]]:
    """One query per (range, measure group), dated on the group's time dimension; with the ranges' labels
    when there are several."""
    queries: list[dict[str, Any]] = []
    labels: list[str] = []
    periods: list[TimeRange | None] = [*ranges] or [None]  # one query round without a range
    for time_range in periods:
        for (time_dim, group), base in zip(groups, group_queries, strict=True):
            query = {k: (list(v) if isinstance(v, list) else v) for k, v in base.items()}
            if time_dim and (time_range is not None or u.granularity):
                td: dict[str, Any] = {"dimension": time_dim}
                if u.granularity:
                    td["granularity"] = u.granularity
                if time_range is not None:
                    td["dateRange"] = time_range.date_range()
                query["timeDimensions"] = [td]
            elif time_range is not None:
                notes.append(f"time range '{time_range.label}' ignored: {group[0]} has no time dimension")
            queries.append(query)
            labels.append(time_range.label if time_range is not None and len(ranges) > 1 else "")
    return queries, labels

"""Follow-up questions as edits of the previous Cube query (fast mode).

"and by channel?" adds a dimension, "只看德国" sets a filter, "what about the invoice count?" swaps the
measures, "and in 2024?" replaces the date range, "top 3 only" ranks and limits. Only what the
follow-up itself names changes; everything else of the previous query is kept. The follow-up is read
on its own (its understanding and its retrieval bindings), never merged into the previous text.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, ContextLike, member_path
from router.aggregate.members import language_variant, resolve_dimension
from router.aggregate.slots.base import METRIC_ASSET_TYPES, is_dimension, is_measure
from router.aggregate.slots.filters import value_filters
from router.aggregate.types import CubeQueryDraft
from router.understanding.types import Understanding


@dataclass
class FollowUp:
    """The previous turn's Cube query and the follow-up read on its own (understanding, retrieval)."""

    previous: dict[str, Any]
    understanding: Understanding
    context: ContextLike


def edit_query(
    previous: dict[str, Any], u: Understanding, context: ContextLike, model: SemanticModel
) -> CubeQueryDraft:
    """The previous Cube query with the follow-up's measures, dimensions, filters, period and ranking."""
    ctx = AggregateContext.of(context)
    query = copy.deepcopy(previous)
    notes = ["follow-up: edited the previous Cube query"]
    _measures(query, ctx, model, notes)
    _dimensions(query, u, ctx, model, notes)
    _filters(query, ctx, model, notes)
    _period(query, u, model, notes)
    _ranking(query, u, notes)
    return CubeQueryDraft([query], [""], None, [], notes)


def _measures(query: dict[str, Any], ctx: AggregateContext, model: SemanticModel, notes: list[str]) -> None:
    named = [
        m
        for m in dict.fromkeys(
            member_path(b.mapped_asset_id)
            for b in ctx.bindings
            if b.mapped_asset_type in METRIC_ASSET_TYPES and b.filter_value is None
        )
        if is_measure(model, m)
    ]
    old = list(query.get("measures", []))
    if not named or named == old:
        return
    query["measures"] = named
    query["order"] = [[named[0] if key in old else key, direction] for key, direction in query.get("order", [])]
    query["filters"] = [f for f in query.get("filters", []) if f.get("member") not in old]
    notes.append(f"measures {', '.join(old)} -> {', '.join(named)}")


def _dimensions(
    query: dict[str, Any], u: Understanding, ctx: AggregateContext, model: SemanticModel, notes: list[str]
) -> None:
    cubes = {m.split(".", 1)[0] for m in query.get("measures", [])}
    added: list[str] = []
    for mention in u.dimensions:
        member = resolve_dimension(model, mention.concept, cubes, u.language)
        if member:
            added.append(member)
    for b in ctx.bindings:
        member = member_path(b.mapped_asset_id)
        if (
            b.mapped_asset_type == "dimension"
            and b.filter_value is None
            and is_dimension(model, member)
            and getattr(model.find_member(member), "type", None) != "time"
        ):
            added.append(language_variant(model, member, u.language))
    dimensions = list(query.get("dimensions", []))
    present = {language_variant(model, d, "en") for d in dimensions}  # countries.title_zh is countries.title_en
    for member in dict.fromkeys(added):
        if language_variant(model, member, "en") not in present:
            dimensions.append(member)
            present.add(language_variant(model, member, "en"))
            notes.append(f"added dimension {member}")
    if dimensions:
        query["dimensions"] = dimensions


def _filters(query: dict[str, Any], ctx: AggregateContext, model: SemanticModel, notes: list[str]) -> None:
    values = value_filters(ctx, model)
    if not values:
        return
    kept = [f for f in query.get("filters", []) if f.get("member") not in values]
    query["filters"] = kept + [{"member": m, "operator": "equals", "values": v} for m, v in values.items()]
    notes.append("filters " + "; ".join(f"{m} = {', '.join(v)}" for m, v in values.items()))


def _period(query: dict[str, Any], u: Understanding, model: SemanticModel, notes: list[str]) -> None:
    if not u.time_ranges and not u.granularity:
        return
    dims = query.get("timeDimensions") or []
    time_dim = dims[0]["dimension"] if dims else model.time_dimension_for(query["measures"][0])
    if time_dim is None:
        notes.append("the follow-up's period is ignored: the measure has no time dimension")
        return
    td = dict(dims[0]) if dims else {"dimension": time_dim}
    if u.time_ranges:
        td["dateRange"] = u.time_ranges[0].date_range()
        notes.append(f"period -> {u.time_ranges[0].label}")
    if u.granularity:
        td["granularity"] = u.granularity
        notes.append(f"granularity -> {u.granularity}")
    query["timeDimensions"] = [td, *dims[1:]]


def _ranking(query: dict[str, Any], u: Understanding, notes: list[str]) -> None:
    if u.ranking is None:
        return
    measure = query["measures"][0]
    query["order"] = [[measure, u.ranking.direction]]
    if u.ranking.limit:
        query["limit"] = u.ranking.limit
    notes.append(
        f"order by {measure} {u.ranking.direction}" + (f", limit {u.ranking.limit}" if u.ranking.limit else "")
    )

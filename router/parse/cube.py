"""A reading as Cube queries: one per compared period and per time dimension that dates its measures
(an aggregate), or one dimensions-only query over the listed cube's key, label and asked columns (a
listing: Cube groups by every dimension, and the key makes every row its own group)."""

from __future__ import annotations

from typing import Any

from router.aggregate.derive import shares_of_total
from router.aggregate.types import CubeQueryDraft
from router.parse.language import UNIT_SECONDS, title_unit
from router.parse.reading import Reading
from router.understanding.types import TimeRange, Understanding

LISTING_LIMIT = 1000


def _ranges(u: Understanding, r: Reading) -> list[TimeRange]:
    compared = r.periods(list(u.comparison.ranges)) if u.comparison else []
    return compared if len(compared) > 1 else r.periods(u.time_ranges)[:1]


def _groups(r: Reading, model: Any) -> list[tuple[str | None, list[str]]]:
    """Measures by the time dimension that dates them; one named by the question dates them all."""
    if r.time_dimension:
        return [(r.time_dimension, list(r.measures))]
    groups: dict[str | None, list[str]] = {}
    for measure in r.measures:
        groups.setdefault(model.time_dimension_for(measure), []).append(measure)
    return list(groups.items())


def _base(
    r: Reading, model: Any, measures: list[str], leading: bool, grain: str | None, time_dim: str | None, single: bool
) -> dict[str, Any]:
    query: dict[str, Any] = {"measures": list(measures)}
    shown = r.shown if single else []
    if r.dimensions or shown:
        query["dimensions"] = [*shown, *r.dimensions]
    # a bound on a measure (HAVING) goes with that measure's query only
    filters = [
        f.cube_filter()
        for f in r.filters
        if f.member in measures or getattr(model.find_member(f.member), "kind", "") != "measure"
    ]
    if r.segments:
        query["segments"] = list(r.segments)
    order = [[m, d] for m, d in r.order if m in measures or m in r.dimensions or m == time_dim]
    if r.limit and leading and (r.dimensions or grain):
        query["limit"] = r.limit
        if order and order[0][0] in measures:  # groups without a value must not take the top places
            filters.append({"member": order[0][0], "operator": "set"})
            filters += [
                {"member": d, "operator": "set"}
                for d in r.dimensions  # "which composer": not "none"
                if getattr(model.find_member(d), "type", "") == "string"
            ]
    if not order and grain and time_dim:
        order = [[time_dim, "asc"]]
    if order:
        query["order"] = order
    if filters:
        query["filters"] = filters
    return query


def aggregate_draft(r: Reading, u: Understanding, model: Any) -> CubeQueryDraft:
    """The Cube queries of an aggregate reading (see the module docstring)."""
    ranges = _ranges(u, r)
    grain = r.granularity or u.granularity
    groups = _groups(r, model)
    notes = list(r.notes)
    queries: list[dict[str, Any]] = []
    labels: list[str] = []
    periods: list[TimeRange | None] = [*ranges] or [None]  # one query round without a range
    single = len(ranges) < 2 and not (r.compared_segments or r.share or r.counted)  # one number: the named row shown
    for time_range in periods:
        for index, (time_dim, measures) in enumerate(groups):
            query = _base(r, model, measures, index == 0, grain, time_dim, single)
            if time_dim and (time_range is not None or grain):
                td: dict[str, Any] = {"dimension": time_dim}
                if grain:
                    td["granularity"] = grain
                if time_range is not None:
                    td["dateRange"] = time_range.date_range()
                query["timeDimensions"] = [td]
            elif time_range is not None:
                notes.append(f"time range '{time_range.label}' ignored: {measures[0]} has no time dimension")
            queries.append(query)
            labels.append(time_range.label if time_range is not None and len(ranges) > 1 else "")
    kind = u.comparison.kind if u.comparison and len(ranges) > 1 else None
    if r.compared_segments and len(queries) == 1:
        titles = [getattr(model.find_member(s), "title", "") or s.split(".", 1)[1] for s in r.compared_segments]
        per_segment = [{**queries[0], "segments": [*queries[0].get("segments", []), s]} for s in r.compared_segments]
        if r.share:  # "what % of revenue comes from video vs audio": each segment's part of the whole, last
            return CubeQueryDraft([*per_segment, _whole(queries[0], r)], [*titles, ""], "members", ["part"], notes)
        return CubeQueryDraft(per_segment, titles, "members", [], notes)
    if r.share and (r.part or r.part_segments) and len(queries) == 1:
        part, by_share = _ranked_by_share(queries[0])
        return CubeQueryDraft([part, _whole(queries[0], r)], ["", ""], None, ["part", *by_share], notes)
    if r.share and (ranked := shares_of_total(queries, notes)) is not None:  # "the top 5 and their share"
        return ranked
    post = ["share"] if r.share and r.dimensions else []
    if r.counted:  # the groups passing the bounds are counted: the query's total, not its rows
        queries = [{**query, "limit": 1, "total": True} for query in queries]
    return CubeQueryDraft(
        queries,
        labels,
        kind,
        post,
        notes,
        groups=len(groups),
        keep=dict(r.keep),
        counted=r.counted,
        units=_units(r, model),
        per=r.per,
    )


def _units(r: Reading, model: Any) -> dict[str, tuple[str, float]]:
    """Each measure shown in another unit of time: (the unit, the factor from the one its title names)."""
    out = {}
    for measure, unit in r.units.items():
        own = title_unit(model.find_member(measure))
        if own is not None:
            out[measure] = (f"{unit}s", UNIT_SECONDS[own] / UNIT_SECONDS[unit])
    return out


def _ranked_by_share(part: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """ "which weekday has the highest share of flights arriving late": groups ranked by a measure are ranked
    by its share within each group, not by the measure: every group's part is asked (no limit), and the
    derivation orders and cuts them (``share_rank:<direction>:<limit>``)."""
    order, limit = part.get("order") or [], part.get("limit")
    if not part.get("dimensions") or not limit or not order or order[0][0] not in part.get("measures", []):
        return part, []
    unlimited = {k: v for k, v in part.items() if k != "limit"}
    return unlimited, [f"share_rank:{order[0][1]}:{limit}"]


def _whole(part: dict[str, Any], r: Reading) -> dict[str, Any]:
    """A share's whole: the part's query without the restrictions that make it the part."""
    whole = {k: v for k, v in part.items() if k not in ("filters", "segments", "limit")}  # every group's whole
    dropped = [f.cube_filter() for f in r.part]
    filters = [f for f in part.get("filters", []) if f not in dropped]
    segments = [s for s in part.get("segments", []) if s not in r.part_segments]
    if filters:
        whole["filters"] = filters
    if segments:
        whole["segments"] = segments
    return whole


def listing_query(r: Reading, u: Understanding, model: Any, max_rows: int = LISTING_LIMIT) -> dict[str, Any]:
    """The Cube query of a listing reading: its columns as dimensions (the rows' key among them), and the
    measures of its own rows asked as columns, one value per row."""
    assert r.listing is not None
    query: dict[str, Any] = {"dimensions": list(r.columns)}
    if r.row_measures:  # grouped by the rows' key: each row's own value
        query["measures"] = list(r.row_measures)
    if r.filters:
        query["filters"] = [f.cube_filter() for f in r.filters]
    if r.segments:
        query["segments"] = list(r.segments)
    time_dim = r.time_dimension or model.cube_time_dimension(r.listing)
    periods = r.periods(u.time_ranges)
    if periods and time_dim:  # rows of several periods ("in 2009 and 2010"): from the first to the last
        start = min(t.start for t in periods).isoformat()
        end = max(t.end for t in periods).isoformat()
        query["timeDimensions"] = [{"dimension": time_dim, "dateRange": [start, end]}]
    order = [[m, d] for m, d in r.order]
    if r.limit and order:  # "the 5 with the biggest delays": rows without a value are not among them
        query.setdefault("filters", []).append({"member": order[0][0], "operator": "set"})
    key = next((c for c in r.columns if getattr(model.find_member(c), "primary_key", False)), None)
    if key and key not in {m for m, _ in order}:  # ties in key order; newest first: the latest key first
        newest = bool(order) and getattr(model.find_member(order[0][0]), "type", "") == "time" and order[0][1] == "desc"
        order.append([key, "desc" if newest else "asc"])
    if order:
        query["order"] = order
    query["limit"] = min(r.limit or max_rows, max_rows)
    return query

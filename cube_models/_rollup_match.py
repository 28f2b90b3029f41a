"""Which rollup answers a query: Cube 0.33's ``canUsePreAggregationForTransformedQueryFn``, ported.

A query is *leaf-measure additive* when every leaf measure is ``count``/``sum``/``min``/``max``. Such a query
without multiplied measures matches a rollup that holds its leaf measures, every dimension it groups or
filters by (and its segments), and each time dimension at the query's *rollup granularity* or a finer one (the
rollup granularity is the coarsest one both the granularity asked for and the date range's bounds align to,
so a range cut mid-month needs a daily rollup). Otherwise the match must be exact: the same dimensions
(filters only on grouped dimensions, or only single-value ``equals`` filters), the same time granularity,
and the query's measures or their leaves. Rollups are tried cube by cube in the query's order, each cube's
in the order of its file; the first match wins. Known differences from Cube, on purpose: a rollup that allows a
non-strict date range match is used only for ranges of its whole periods (Cube sums the whole periods around a
range cut mid-period, a silent change of the range); rolling-window
measures never match (Cube matches some); ``count_distinct_approx`` is not additive here (it compiles to an
exact ``count(DISTINCT)``, which a sum of rollup rows would overcount); a number measure listed in a rollup
is used only by an exact match (Cube would sum the ratios of a leaf-additive match). One addition: when no
rollup matches by Cube's rules, a second pass takes a distinct count as additive over a rollup whose rows its
key determines (``_rollup_keys``), so "average invoice value by channel in 2024" is summed from a daily rollup
Cube would not use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import time as dt_time

from cube_models._rollup_keys import additive_over
from cube_models.model import Measure, PreAggregation, SemanticModel
from cube_models.query import Filter, FilterGroup

ADDITIVE = ("count", "sum", "min", "max")
# Cube's standardGranularitiesParents, its duplicated 'month' included (it decides minGranularity)
PARENTS: dict[str, tuple[str, ...]] = {
    "year": ("year", "quarter", "month", "month", "day", "hour", "minute", "second"),
    "quarter": ("quarter", "month", "day", "hour", "minute", "second"),
    "month": ("month", "day", "hour", "minute", "second"),
    "week": ("week", "day", "hour", "minute", "second"),
    "day": ("day", "hour", "minute", "second"),
    "hour": ("hour", "minute", "second"),
    "minute": ("minute", "second"),
    "second": ("second",),
}


def min_granularity(a: str | None, b: str | None) -> str | None:
    """The finest granularity both ``a`` and ``b`` roll up from (Cube's minGranularity)."""
    if not a or not b or a == b:
        return a or b
    ra, rb = list(reversed(PARENTS[a])), list(reversed(PARENTS[b]))
    first = [i for i, g in enumerate(ra) if i >= len(rb) or g != rb[i]]
    second = [i for i, g in enumerate(rb) if i >= len(ra) or g != ra[i]]
    last = max(first[0] if first else -1, second[0] if second else -1)
    if last == -1 and len(ra) == len(rb):
        last = len(ra) - 1
    return ra[last - 1] if last > 0 else None


def granularity_for(moment: datetime) -> str:
    """The coarsest granularity ``moment`` starts (Cube's granularityFor: no quarter)."""
    midnight = (moment.hour, moment.minute, moment.second, moment.microsecond) == (0, 0, 0, 0)
    if midnight and moment.month == 1 and moment.day == 1:
        return "year"
    if midnight and moment.day == 1:
        return "month"
    if midnight and moment.isoweekday() == 1:
        return "week"
    if midnight:
        return "day"
    if (moment.minute, moment.second, moment.microsecond) == (0, 0, 0):
        return "hour"
    return "minute" if (moment.second, moment.microsecond) == (0, 0) else "second"


def range_granularity(start: str, end: str) -> str | None:
    """The granularity a resolved date range (``from``, ``to`` as Cube's local timestamps) aligns to."""
    lo = datetime.fromisoformat(start)
    hi = datetime.fromisoformat(end) + timedelta(milliseconds=1)
    return min_granularity(granularity_for(lo), granularity_for(hi))


def _starts(moment: datetime, granularity: str) -> bool:
    """Does ``moment`` start a period of ``granularity`` (quarters included)?"""
    midnight = moment.time() == dt_time(0)
    return {
        "year": midnight and (moment.month, moment.day) == (1, 1),
        "quarter": midnight and moment.day == 1 and moment.month % 3 == 1,
        "month": midnight and moment.day == 1,
        "week": midnight and moment.isoweekday() == 1,
        "day": midnight,
        "hour": (moment.minute, moment.second, moment.microsecond) == (0, 0, 0),
        "minute": (moment.second, moment.microsecond) == (0, 0),
        "second": moment.microsecond == 0,
    }[granularity]


def whole_periods(span: tuple[str, str], granularity: str) -> bool:
    """Is the resolved date range ``span`` a run of whole periods of ``granularity``?"""
    lo = datetime.fromisoformat(span[0])
    hi = datetime.fromisoformat(span[1]) + timedelta(milliseconds=1)
    return _starts(lo, granularity) and _starts(hi, granularity)


@dataclass(frozen=True)
class QueryShape:
    """What matching reads of a query (Cube's transformQueryToCanUseForm)."""

    dimensions: tuple[str, ...]  # grouped + filtered dimensions + segments, sorted
    grouped: tuple[str, ...]  # the query's dimensions
    segments: tuple[str, ...]
    measures: tuple[str, ...]  # query measures + measures of measure filters
    query_measures: tuple[Measure, ...]
    leaves: tuple[Measure, ...]
    time_dimensions: tuple[tuple[str, str | None], ...]  # (dimension, rollup granularity), sorted
    time_dimensions_as_is: tuple[tuple[str, str | None], ...]  # (dimension, granularity asked), sorted
    filters: tuple[Filter | FilterGroup, ...]  # dimension filters, members resolved to cube paths
    multiplied: bool
    rolling: bool
    ranges: tuple[tuple[str, tuple[str, str] | None], ...] = ()  # (dimension, resolved date range or None)


def _single_equals(filters: Sequence[Filter | FilterGroup], base: dict[str, int]) -> set[str] | None:
    """Cube's filterDimensionsSingleValueEqual: the dimensions when every filter is a one-value equals."""
    found = dict(base)

    def walk(items: Sequence[Filter | FilterGroup]) -> bool:
        for f in items:
            if isinstance(f, FilterGroup):
                if f.op != "and" or not walk(f.items):
                    return False
            elif f.operator == "equals":
                found[f.member] = min(found.get(f.member, 2), len(f.values))
            else:
                return False
        return True

    if not walk(filters):
        return None
    return set(found) if all(v == 1 for v in found.values()) else None


def _non_strict(shape: QueryShape, pre: PreAggregation) -> bool:
    """Cube's allowNonStrictDateRangeMatch, taken only when each date range is whole periods of the rollup's
    granularity: Cube would answer a range cut mid-period from the whole periods around it."""
    return pre.allow_non_strict_date_range_match and all(
        span is None or whole_periods(span, pre.granularity or "day") for _, span in shape.ranges
    )


def _time_refs(pre: PreAggregation) -> list[tuple[str, str]]:
    return [(pre.time_dimension, pre.granularity or "day")] if pre.time_dimension else []


def _not_additive(shape: QueryShape, pre: PreAggregation, ref_dims: list[str]) -> bool:
    refs_td = _time_refs(pre)
    query_td = list(shape.time_dimensions_as_is if _non_strict(shape, pre) else shape.time_dimensions)
    if any(g is None for _, g in shape.time_dimensions_as_is) or shape.rolling or query_td != refs_td:
        return False
    additive = all(m.type in ADDITIVE for m in shape.query_measures)
    if not additive and list(shape.time_dimensions_as_is) != refs_td:
        return False
    grouped = set(shape.grouped)
    filter_dims = {p for f in shape.filters for p in _members(f)}
    single = _single_equals(shape.filters, {d: 1 for d in (*shape.grouped, *shape.segments)})
    dims_ok = (single is not None and len(ref_dims) == len(single) and all(d in single for d in ref_dims)) or (
        filter_dims <= grouped and ref_dims == list(shape.dimensions)
    )
    if not dims_ok:
        return False
    return all(m in pre.measures for m in shape.measures) or all(m.path in pre.measures for m in shape.leaves)


def _leaf_additive(shape: QueryShape, pre: PreAggregation, ref_dims: list[str]) -> bool:
    refs_td = _time_refs(pre)
    query_td = shape.time_dimensions_as_is if _non_strict(shape, pre) else shape.time_dimensions
    for dim, granularity in query_td:
        allowed = PARENTS.get(granularity or "", (granularity,))
        if not any((dim, g) in refs_td for g in allowed):
            return False
    return all(m.path in pre.measures for m in shape.leaves) and all(d in ref_dims for d in shape.dimensions)


def _members(f: Filter | FilterGroup) -> list[str]:
    return [p for i in f.items for p in _members(i)] if isinstance(f, FilterGroup) else [f.member]


def can_use(shape: QueryShape, pre: PreAggregation) -> bool:
    """Cube's canUseFn for one rollup."""
    ref_dims = sorted(pre.dimensions) + sorted(pre.segments)
    if shape.rolling:
        return False
    if all(m.type in ADDITIVE for m in shape.leaves) and not shape.multiplied and _leaf_additive(shape, pre, ref_dims):
        return True
    return _not_additive(shape, pre, ref_dims)


def can_use_by_keys(shape: QueryShape, pre: PreAggregation, model: SemanticModel) -> bool:
    """The leaf-additive rule with each distinct count the rollup holds additively taken as additive."""
    if shape.rolling or shape.multiplied:
        return False
    if not all(m.type in ADDITIVE or additive_over(m, pre, model) for m in shape.leaves):
        return False
    return _leaf_additive(shape, pre, sorted(pre.dimensions) + sorted(pre.segments))


def find_rollup(shape: QueryShape, cubes: Sequence[str], model: SemanticModel) -> PreAggregation | None:
    """The first rollup of the query's cubes (in order) that can answer it by Cube's rules, else the first
    that can by its distinct keys."""
    pres = [pre for cube in cubes for pre in model.cubes[cube].pre_aggregations]
    return next((pre for pre in pres if can_use(shape, pre)), None) or next(
        (pre for pre in pres if can_use_by_keys(shape, pre, model)), None
    )

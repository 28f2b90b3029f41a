"""Rollup SQL: the query a rollup table is built from, and a query answered from a built rollup table.

A rollup table has one column per dimension and segment (``orders__status``), one for its time dimension at
its granularity (``orders__order_ts_day``) and one per measure (``orders__count``), named as the compiler
names result columns. A query over it groups those columns again: ``count``/``sum`` (and the exactly matched
non-additive measures, one rollup row per group) are summed, ``min``/``max`` taken again, and number measures
computed from their leaf columns; date ranges, filters and segments apply to the rollup's columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from cube_models._rollup_match import QueryShape, find_rollup, min_granularity, range_granularity
from cube_models.dates import resolve_date_range
from cube_models.model import Measure, PreAggregation, SemanticModel
from cube_models.query import CubeQuery, Filter, FilterGroup, TimeDimension

if TYPE_CHECKING:
    from cube_models._compile.state import CompilerState

ROLLUP_ALIAS = "__rollup"


def alias_of(path: str) -> str:
    return path.replace(".", "__").lower()


def columns_of(pre: PreAggregation) -> dict[str, str]:
    """Member path -> the rollup table's column (the time dimension under its own path)."""
    cols = {p: alias_of(p) for p in (*pre.dimensions, *pre.segments, *pre.measures)}
    if pre.time_dimension:
        cols[pre.time_dimension] = f"{alias_of(pre.time_dimension)}_{pre.granularity}"
    return cols


def build_query(pre: PreAggregation) -> CubeQuery:
    """The Cube query whose rows are the rollup (segments are added as boolean columns by the compiler)."""
    tds = [TimeDimension(pre.time_dimension, pre.granularity)] if pre.time_dimension else []
    return CubeQuery(measures=list(pre.measures), dimensions=list(pre.dimensions), time_dimensions=tds)


def _resolved(f: Filter | FilterGroup, model: SemanticModel) -> Filter | FilterGroup:
    if isinstance(f, FilterGroup):
        return FilterGroup(f.op, tuple(_resolved(i, model) for i in f.items))
    return Filter(model.resolve_path(f.member), f.operator, f.values)


def shape_of(c: CompilerState, leaves: Sequence[Measure], multiplied: bool) -> QueryShape:
    """The query as matching reads it (view members resolved to their cubes' members)."""
    model, q = c.model, c.q
    dim_filters = [_resolved(f, model) for f in q.filters if c._filter_kinds(f) == {False}]
    measure_filter_paths = [
        model.resolve_path(p)
        for f in q.filters
        if c._filter_kinds(f) == {True}
        for p in CubeQuery(filters=[f]).members()
    ]
    grouped = tuple(model.resolve_path(p) for p in q.dimensions)
    segments = tuple(model.resolve_path(s) for s in q.segments)
    filtered = [p for f in dim_filters for p in CubeQuery(filters=[f]).members()]
    tds, as_is, ranges = [], [], []
    for td, dim in c.tds:
        resolved = resolve_date_range(td.date_range, c.today) if td.date_range is not None else None
        span = range_granularity(*resolved) if resolved is not None else None
        tds.append((dim.path, min_granularity(td.granularity, span)))
        as_is.append((dim.path, td.granularity))
        ranges.append((dim.path, resolved))
    measures = tuple(dict.fromkeys([m.path for _, m in c.measures] + measure_filter_paths))
    return QueryShape(
        dimensions=tuple(sorted(set(grouped) | set(filtered) | set(segments))),
        grouped=grouped,
        segments=segments,
        measures=measures,
        query_measures=tuple(m for _, m in c.measures),
        leaves=tuple(leaves),
        time_dimensions=tuple(sorted(tds, key=lambda t: t[0])),
        time_dimensions_as_is=tuple(sorted(as_is, key=lambda t: t[0])),
        filters=tuple(dim_filters),
        multiplied=multiplied,
        rolling=any(m.rolling_window for m in leaves),
        ranges=tuple(ranges),
    )


def query_cubes(c: CompilerState) -> list[str]:
    """The query's cubes in Cube's order (measures, dimensions, segments, time dimensions, filters)."""
    out: list[str] = []
    for path in [
        *c.q.measures,
        *c.q.dimensions,
        *c.q.segments,
        *(t.dimension for t in c.q.time_dimensions),
        *(p for f in c.q.filters for p in CubeQuery(filters=[f]).members()),
    ]:
        member = c.model.find_member(c.model.resolve_path(path))
        if member is not None:
            c._collect_cubes(member, out, set())
    return out


def choose(
    c: CompilerState, leaves: Sequence[Measure], multiplied: bool, tables: Mapping[str, str]
) -> PreAggregation | None:
    """The first matching rollup, if its table is built (``tables``: rollup path -> qualified table)."""
    if not tables or not any(p.path in tables for p in c.model.pre_aggregations()):
        return None
    pre = find_rollup(shape_of(c, leaves, multiplied), query_cubes(c), c.model)
    return pre if pre is not None and pre.path in tables else None


def rendered_measures(c: CompilerState, pre: PreAggregation, leaves: Sequence[Measure]) -> dict[str, exp.Expr]:
    """Measure path -> its aggregate over the rollup's columns: leaves re-aggregated; a measure whose leaves
    the rollup lacks (an exact match on a listed number measure) is summed as stored."""
    cols = columns_of(pre)

    def agg(path: str, kind: str) -> exp.Expr:
        column = exp.column(cols[path], table=ROLLUP_ALIAS, quoted=True)
        if kind.startswith("count"):  # a count over no rows is 0, as the raw query's COUNT gives, not NULL
            return exp.Coalesce(this=exp.Sum(this=column), expressions=[exp.Literal.number(0)])
        return (
            exp.Min(this=column) if kind == "min" else exp.Max(this=column) if kind == "max" else exp.Sum(this=column)
        )

    out = {leaf.path: agg(leaf.path, leaf.type) for leaf in leaves if leaf.path in cols}
    for _, m in c.measures:
        if any(leaf.path not in out for leaf in c.leaves(m)) and m.path in cols:
            out[m.path] = agg(m.path, m.type)
    return out

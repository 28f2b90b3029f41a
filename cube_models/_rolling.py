"""AST pieces of Cube 0.33's rolling-window queries (BaseQuery.overTimeSeriesQuery), for the built-in compiler.

A rolling measure is computed per bucket of a date series: ``series`` has one row per granularity bucket of
the query's date range (``date_from``, ``date_to``); a base subquery (the measure per dimension tuple and
truncated time) is LEFT JOINed to it on the window condition and re-aggregated per bucket.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from cube_models.model import RollingWindow

_ORDER = ("second", "minute", "hour", "day", "month", "quarter", "year")
_STEP = {"quarter": "3 month"}
TIMESTAMP = exp.DataType.build("timestamp")


def step(granularity: str) -> exp.Expr:
    """One bucket of ``granularity`` as a PostgreSQL interval."""
    return exp.Interval(this=exp.Literal.string(_STEP.get(granularity, f"1 {granularity}")))


def _unit(interval: str | None) -> str | None:
    if interval is None or interval == "unbounded":
        return None
    return interval.split()[1].rstrip("s")


def base_granularity(window: RollingWindow, granularity: str) -> str:
    """Granularity of the base subquery: the finest of the query's and the window's (Cube's minGranularity);
    week only nests in itself, so a week mixed with another unit falls back to day (or finer)."""
    units = [u for u in (_unit(window.trailing), _unit(window.leading)) if u] + [granularity]
    if "week" in units and set(units) != {"week"}:
        units = ["day" if u == "week" else u for u in units]
    return min(units, key=_ORDER.index) if "week" not in units else "week"


def _trunc(granularity: str, value: exp.Expr) -> exp.Expr:
    return exp.Anonymous(
        this="date_trunc", expressions=[exp.Literal.string(granularity), exp.Cast(this=value, to=TIMESTAMP.copy())]
    )


def _bucket_end(granularity: str, bucket_start: exp.Expr) -> exp.Expr:
    return exp.Sub(
        this=exp.Add(this=bucket_start, expression=step(granularity)),
        expression=exp.Interval(this=exp.Literal.string("1 millisecond")),
    )


def bounds(granularity: str, start: exp.Expr, end: exp.Expr) -> tuple[exp.Expr, exp.Expr]:
    """(first bucket's date_from, last bucket's date_to) of the series over [start, end]."""
    return _trunc(granularity, start), _bucket_end(granularity, _trunc(granularity, end))


def series(granularity: str, start: exp.Expr, end: exp.Expr) -> exp.Select:
    """``SELECT d AS date_from, d + step - 1ms AS date_to FROM generate_series(trunc(start), end, step) d``."""
    gen = exp.Anonymous(
        this="generate_series",
        expressions=[_trunc(granularity, start), exp.Cast(this=end, to=TIMESTAMP.copy()), step(granularity)],
    )
    source = exp.Table(this=gen, alias=exp.TableAlias(this=exp.to_identifier("d")))
    return exp.select(
        exp.alias_(exp.column("d"), "date_from"), exp.alias_(_bucket_end(granularity, exp.column("d")), "date_to")
    ).from_(source)


def window_condition(
    window: RollingWindow,
    date_from: Callable[[], exp.Expr],
    date_to: Callable[[], exp.Expr],
    field: exp.Expr,
    whole_range: bool = False,
) -> exp.Expr:
    """Cube's rollingWindowDateJoinCondition: ``field`` inside the window of the bucket [date_from, date_to]
    (``whole_range``: of the whole series, the base query's filter). The bounds are built only when used
    (an unused bind parameter has no type in PostgreSQL)."""
    conditions: list[exp.Expr] = []
    if window.trailing != "unbounded":
        start = (date_from if whole_range or window.offset == "start" else date_to)()
        if window.trailing:
            start = exp.Sub(this=start, expression=exp.Interval(this=exp.Literal.string(window.trailing)))
        lower = exp.GTE if window.offset == "start" else exp.GT
        conditions.append(lower(this=field.copy(), expression=start))
    if window.leading != "unbounded":
        end = (date_to if whole_range or window.offset == "end" else date_from)()
        if window.leading:
            end = exp.Add(this=end, expression=exp.Interval(this=exp.Literal.string(window.leading)))
        upper = exp.LTE if window.offset == "end" else exp.LT
        conditions.append(upper(this=field.copy(), expression=end))
    return exp.and_(*conditions) if conditions else exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(1))

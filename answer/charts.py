"""Vega-Lite specs chosen from the answer's shape and the Cube member types (``chart_spec``).

Shapes (``shape_of``):
- ``kpi``: one row of numbers, nothing grouped -> a KPI card per measure: value, and the change and a
  sparkline when the answer carries a trend (``answer.trend``);
- ``compare``: compared periods (a ``period`` column) -> grouped bars, earlier period first; broken down
  by time, one line per period over the position in the period (month 01..12, Q1..Q4);
- ``share``: shares of the total (``<measure>.share``) -> stacked bars of the shares;
- ``series``: a time dimension by granularity -> one coloured line per series (a dimension's values, or
  the measures when several are asked);
- ``bars``: categories -> horizontal bars sorted by the measure; a second dimension stacks additive
  measures (sums, counts) and groups the others (ratios, averages).
Axes and tooltips are titled with the member titles; numbers are formatted by the member's Cube format.
"""

from __future__ import annotations

from typing import Any, Literal

from answer.tables import Column, Parts, cell, parts_of
from answer.trend import Trend
from answer.vocabulary import vocabulary
from router.tables import ResultTable

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
Shape = Literal["kpi", "compare", "share", "series", "bars"]
MAX_BARS = 30
MAX_SERIES = 10
CONCAT_WIDTH = 560  # views inside a concat cannot take the container's width
AXIS_FORMAT = {"percent": ".1~%", "currency": "~s", None: "~s"}
FONT = "system-ui, 'WenQuanYi Zen Hei', 'Noto Sans CJK SC', 'PingFang SC', sans-serif"
CONFIG = {
    "view": {"stroke": None},
    "font": FONT,
    "legend": {"orient": "bottom"},
    "axis": {"labelFontSize": 11, "titleFontSize": 12},
}
POSITION = {"month": slice(5, 7), "quarter": slice(5, 7), "week": slice(5, 8), "day": slice(5, 10)}


def _distinct(table: ResultTable, i: int | None) -> list[Any]:
    return [] if i is None else list(dict.fromkeys(r[i] for r in table.rows))


def shape_of(table: ResultTable, parts: Parts) -> Shape | None:
    if not table.rows or not parts.measures:
        return None
    if parts.period is not None and len(_distinct(table, parts.period)) > 1:
        return "compare"
    if parts.shares and (parts.dims or parts.time is not None):
        return "share"
    if parts.time is not None and len(_distinct(table, parts.time)) > 1:
        return "series"
    if parts.dims or parts.time is not None:
        return "bars"
    return "kpi" if len(table.rows) == 1 else None


def chart_spec(
    table: ResultTable, language: str, title: str = "", *, periods: list[str] | None = None, trend: Trend | None = None
) -> dict[str, Any] | None:
    """The chart of an answer table; ``periods`` orders compared periods earlier first; ``trend`` feeds
    a KPI card's change and sparkline. None when the table has nothing to chart (no measure)."""
    parts = parts_of(table, language)
    shape = shape_of(table, parts)
    if shape is None:
        return None
    if shape == "kpi":
        return _frame(_kpi(table, parts, trend), title, "kpi")
    data = _data(table, parts)
    note = ""
    if shape == "bars" and len(table.rows) > MAX_BARS:
        data, note = _top(data, parts, MAX_BARS), f"top {MAX_BARS} of {len(table.rows)}"
    builder = {"compare": _compare, "share": _share, "series": _series, "bars": _bars}[shape]
    spec = builder(data, parts, periods or [str(p) for p in _distinct(table, parts.period)])
    return _frame({"data": {"values": data}, **spec}, title, shape, note)


def count_card(n: int, noun: str, title: str = "") -> dict[str, Any]:
    """A KPI card of the number of rows a detail answer found ("12 loans")."""
    card = _card(noun[:1].upper() + noun[1:], f"{n:,}", None, None)
    return _frame({"hconcat": [card]}, title, "kpi")


def _frame(spec: dict[str, Any], title: str, shape: str, note: str = "") -> dict[str, Any]:
    heading: dict[str, Any] = {"text": title, "anchor": "start"}
    if note:
        heading["subtitle"] = note
    return {"$schema": SCHEMA, "title": heading, "config": CONFIG, "usermeta": {"shape": shape}, **spec}


# -- data ------------------------------------------------------------------------------------------------


def _f(i: int) -> str:
    return f"c{i}"


def _t(i: int) -> str:
    return f"c{i}_text"


def _data(table: ResultTable, parts: Parts) -> list[dict[str, Any]]:
    """One record per row: ``c<i>`` the chartable value (numbers raw, time and text as shown), ``c<i>_text``
    the cell as the table shows it (tooltips), ``pos`` a time value's position in its period."""
    out = []
    for row in table.rows:
        record: dict[str, Any] = {}
        for i, column in enumerate(parts.columns):
            text = cell(row[i], column)
            number = i in parts.measures or i in parts.shares
            record[_f(i)] = (None if row[i] is None else float(row[i])) if number else text
            record[_t(i)] = text
        if parts.time is not None:
            grain = parts.columns[parts.time].grain or ""
            record["pos"] = record[_f(parts.time)][POSITION[grain]] if grain in POSITION else record[_f(parts.time)]
        out.append(record)
    return out


def _top(data: list[dict[str, Any]], parts: Parts, n: int) -> list[dict[str, Any]]:
    m = _f(parts.measures[0])
    return sorted(data, key=lambda r: r[m] if r[m] is not None else float("-inf"), reverse=True)[:n]


def _series_key(record: dict[str, Any], dims: list[int]) -> str:
    return " / ".join(str(record[_f(d)]) for d in dims)


# -- encodings -------------------------------------------------------------------------------------------


def _quant(parts: Parts, i: int, **extra: Any) -> dict[str, Any]:
    column = parts.columns[i]
    return {
        "field": _f(i),
        "type": "quantitative",
        "title": column.title,
        "axis": {"format": AXIS_FORMAT.get(column.format, "~s")},
        **extra,
    }


def _nominal(parts: Parts, i: int, **extra: Any) -> dict[str, Any]:
    return {"field": _f(i), "type": "nominal", "title": parts.columns[i].title, **extra}


def _ordinal_time(parts: Parts, i: int, n: int) -> dict[str, Any]:
    axis = {"labelOverlap": True, "labelAngle": 0 if n <= 12 else -40}
    return {"field": _f(i), "type": "ordinal", "title": parts.columns[i].title, "sort": "ascending", "axis": axis}


def _tooltip(parts: Parts, extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    order = [i for i in (parts.period, parts.time) if i is not None] + parts.dims + parts.measures + parts.shares
    return [*(extra or []), *({"field": _t(i), "title": parts.columns[i].title} for i in order)]


def _periods_scale(periods: list[str]) -> dict[str, Any]:
    return {"domain": periods, "scheme": "tableau10"}


# -- shapes ----------------------------------------------------------------------------------------------


def _compare(data: list[dict[str, Any]], parts: Parts, periods: list[str]) -> dict[str, Any]:
    p = parts.period
    assert p is not None
    color = {**_nominal(parts, p), "sort": periods, "scale": _periods_scale(periods)}
    by_measure = []
    for m in parts.measures:
        y = _quant(parts, m)
        if parts.time is not None and parts.columns[parts.time].grain in POSITION:  # aligned lines per period
            x = {
                "field": "pos",
                "type": "ordinal",
                "title": parts.columns[parts.time].title,
                "sort": "ascending",
                "axis": {"labelAngle": 0},
            }
            spec: dict[str, Any] = {
                "mark": {"type": "line", "point": True},
                "encoding": {"x": x, "y": y, "color": color},
            }
        elif parts.dims:
            x = {**_nominal(parts, parts.dims[0]), "sort": {"field": _f(m), "op": "sum", "order": "descending"}}
            many = len({r[_f(parts.dims[0])] for r in data}) > 4
            spec = {
                "mark": {"type": "bar"},
                "encoding": {
                    "x": {**x, "axis": {"labelAngle": -35 if many else 0, "labelLimit": 140}},
                    "y": y,
                    "color": color,
                    "xOffset": {"field": _f(p), "sort": periods},
                },
            }
        else:
            spec = {
                "mark": {"type": "bar"},
                "encoding": {
                    "x": {**_nominal(parts, p), "sort": periods, "axis": {"labelAngle": 0}},
                    "y": y,
                    "color": color,
                },
            }
        spec["encoding"]["tooltip"] = _tooltip(parts)
        by_measure.append({"width": "container" if len(parts.measures) == 1 else 260, "height": 260, **spec})
    return by_measure[0] if len(by_measure) == 1 else {"hconcat": by_measure}


def _share(data: list[dict[str, Any]], parts: Parts, periods: list[str]) -> dict[str, Any]:
    """Stacked bars of the shares: one bar of 100% for one dimension, a bar per value of the first of two
    dimensions (its share of the total, split by the second), or a bar per period."""
    s = parts.shares[0]
    share = {**_quant(parts, s), "stack": "zero", "axis": {"format": ".0%"}}  # shares of a whole: whole percents
    order = {"field": _f(s), "type": "quantitative", "sort": "descending"}
    if parts.time is not None:
        color = {"color": _nominal(parts, parts.dims[-1])} if parts.dims else {}
        return {
            "width": "container",
            "height": 260,
            "mark": {"type": "bar"},
            "encoding": {
                "x": _ordinal_time(parts, parts.time, len(data)),
                "y": share,
                "order": order,
                **color,
                "tooltip": _tooltip(parts),
            },
        }
    inner = parts.dims[-1]
    by_share = {"field": _f(s), "op": "sum", "order": "descending"}
    enc: dict[str, Any] = {
        "x": share,
        "color": {**_nominal(parts, inner), "sort": by_share},
        "order": order,
        "tooltip": _tooltip(parts),
    }
    if len(parts.dims) == 1:
        enc["x"] = {**share, "scale": {"domain": [0, 1]}}
        return {"width": "container", "height": 40, "mark": {"type": "bar"}, "encoding": enc}
    outer = parts.dims[0]
    enc["y"] = {**_nominal(parts, outer), "sort": by_share}
    groups = len({r[_f(outer)] for r in data})
    return {"width": "container", "height": max(40, 26 * groups), "mark": {"type": "bar"}, "encoding": enc}


def _series(data: list[dict[str, Any]], parts: Parts, periods: list[str]) -> dict[str, Any]:
    t = parts.time
    assert t is not None
    n = len({r[_f(t)] for r in data})
    mark = {"type": "line", "point": n <= 60, "interpolate": "monotone"}
    if parts.dims:
        return _series_by_dimensions(data, parts, t, n, mark)
    formats = {parts.columns[m].format for m in parts.measures}
    if len(parts.measures) > 1 and len(formats) == 1:  # one axis: fold the measures into coloured series
        return _folded_measures(parts, t, n, mark, formats.pop())
    width = "container" if len(parts.measures) == 1 else CONCAT_WIDTH
    charts = [
        {
            "width": width,
            "height": 260 if len(parts.measures) == 1 else 160,
            "mark": mark,
            "encoding": {"x": _ordinal_time(parts, t, n), "y": _quant(parts, m), "tooltip": _tooltip(parts)},
        }
        for m in parts.measures
    ]
    return charts[0] if len(charts) == 1 else {"vconcat": charts}


def _series_by_dimensions(
    data: list[dict[str, Any]], parts: Parts, t: int, n: int, mark: dict[str, Any]
) -> dict[str, Any]:
    """One coloured line per value of the dimensions (the biggest ``MAX_SERIES`` kept), a chart per measure."""
    for r in data:
        r["series"] = _series_key(r, parts.dims)
    keep = _biggest_series(data, _f(parts.measures[0]))
    data[:] = [r for r in data if r["series"] in keep]
    title = " / ".join(parts.columns[d].title for d in parts.dims)
    color = {"field": "series", "type": "nominal", "title": title, "sort": keep}
    width: int | str = "container" if len(parts.measures) == 1 else CONCAT_WIDTH
    charts = [
        {
            "width": width,
            "height": 260 if len(parts.measures) == 1 else 180,
            "mark": mark,
            "encoding": {
                "x": _ordinal_time(parts, t, n),
                "y": _quant(parts, m),
                "color": color,
                "tooltip": _tooltip(parts),
            },
        }
        for m in parts.measures
    ]
    return charts[0] if len(charts) == 1 else {"vconcat": charts}


def _folded_measures(parts: Parts, t: int, n: int, mark: dict[str, Any], number_format: str | None) -> dict[str, Any]:
    """Measures of one format on one axis, folded into a coloured line each."""
    fields = [_f(m) for m in parts.measures]
    titles = {_f(m): parts.columns[m].title for m in parts.measures}
    return {
        "width": "container",
        "height": 260,
        "transform": [
            {"fold": fields, "as": ["measure", "value"]},
            {"calculate": f"{titles!r}[datum.measure]".replace("'", '"'), "as": "measure_title"},
        ],
        "mark": mark,
        "encoding": {
            "x": _ordinal_time(parts, t, n),
            "y": {
                "field": "value",
                "type": "quantitative",
                "title": None,
                "axis": {"format": AXIS_FORMAT.get(number_format, "~s")},
            },
            "color": {"field": "measure_title", "type": "nominal", "title": None},
            "tooltip": _tooltip(parts),
        },
    }


def _biggest_series(data: list[dict[str, Any]], measure: str) -> list[str]:
    totals: dict[str, float] = {}
    for r in data:
        totals[r["series"]] = totals.get(r["series"], 0.0) + abs(r[measure] or 0.0)
    return sorted(totals, key=lambda k: -totals[k])[:MAX_SERIES]


def _bars(data: list[dict[str, Any]], parts: Parts, periods: list[str]) -> dict[str, Any]:
    dims = parts.dims or ([parts.time] if parts.time is not None else [])
    m = parts.measures[0]
    x = _quant(parts, m)
    if len(dims) == 1:
        y = {**_nominal(parts, dims[0]), "sort": "-x", "axis": {"labelLimit": 220}}
        return {
            "width": "container",
            "height": max(60, 24 * len(data)),
            "mark": {"type": "bar"},
            "encoding": {"y": y, "x": x, "tooltip": _tooltip(parts)},
        }
    for r in data:
        r["group"] = _series_key(r, dims[:-1])
    inner = dims[-1]
    outer_title = " / ".join(parts.columns[d].title for d in dims[:-1])
    y = {
        "field": "group",
        "type": "nominal",
        "title": outer_title,
        "sort": {"field": _f(m), "op": "sum", "order": "descending"},
        "axis": {"labelLimit": 220},
    }
    enc: dict[str, Any] = {"y": y, "x": x, "color": _nominal(parts, inner), "tooltip": _tooltip(parts)}
    groups = len({r["group"] for r in data})
    if vocabulary().additive(parts.columns[m].name):
        enc["x"] = {**x, "stack": "zero"}
        height = max(60, 24 * groups)
    else:
        enc["yOffset"] = {"field": _f(inner)}
        height = max(60, 14 * len(data) + 8 * groups)
    return {"width": "container", "height": height, "mark": {"type": "bar"}, "encoding": enc}


# -- KPI cards -------------------------------------------------------------------------------------------


def _kpi(table: ResultTable, parts: Parts, trend: Trend | None) -> dict[str, Any]:
    row = table.rows[0]
    cards = []
    for i in parts.measures[:4]:
        column = parts.columns[i]
        own = trend if trend is not None and trend.measure == column.name else None
        cards.append(_card(column.title, cell(row[i], column), own, column))
    return {"hconcat": cards, "spacing": 40}


def _text(value: str, size: int, color: str = "#1d2433", weight: str = "normal") -> dict[str, Any]:
    return {
        "width": 240,
        "height": size + 10,
        "data": {"values": [{"text": value}]},
        "mark": {
            "type": "text",
            "align": "left",
            "baseline": "middle",
            "x": 0,
            "fontSize": size,
            "fontWeight": weight,
            "color": color,
        },
        "encoding": {"text": {"field": "text", "type": "nominal"}},
    }


def _change_text(trend: Trend, column: Column) -> dict[str, Any]:
    """ "+3.2% vs 2025-05" (percent measures: "+0.18 pp vs 2024-Q4"), green up, red down."""
    change = trend.change or 0.0
    sign = "+" if change >= 0 else "-"
    if column.format == "percent":
        amount = f"{abs(change) * 100:.2f} pp"
    elif trend.change_pct is not None:
        amount = f"{abs(trend.change_pct) * 100:.1f}%"
    else:
        amount = cell(abs(change), column)
    return _text(f"{sign}{amount} vs {trend.previous}", 13, "#216e39" if change >= 0 else "#b42318")


def _card(name: str, value: str, trend: Trend | None, column: Column | None) -> dict[str, Any]:
    rows = [_text(name, 14, "#6b7385"), _text(value, 32, weight="bold")]
    if trend is not None and trend.change is not None and column is not None:
        rows.append(_change_text(trend, column))
    if trend is not None and len(trend.points) > 1 and column is not None:
        points = [{"period": p, "value": v, "value_text": cell(v, column)} for p, v in trend.points]
        rows.append(
            {
                "width": 240,
                "height": 48,
                "data": {"values": points},
                "mark": {"type": "line", "interpolate": "monotone", "point": {"size": 12}},
                "encoding": {
                    "x": {"field": "period", "type": "ordinal", "axis": None, "sort": "ascending"},
                    "y": {"field": "value", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                    "tooltip": [{"field": "period", "title": trend.grain}, {"field": "value_text", "title": name}],
                },
            }
        )
    return {"vconcat": rows, "spacing": 2}

"""Vega-Lite v5 specs for result tables: a line for a time series, bars for a ranking or breakdown."""

from __future__ import annotations

import re
from typing import Any

from answer.formatting import grain_of, is_number, label
from answer.vocabulary import vocabulary
from router.tables import ResultTable, jsonable

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
_TIME_VALUE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([T ][\d:.]+)?$")
TIME_GRAINS = ("day", "week", "month", "quarter", "year")
TIME_UNITS = {"day": "yearmonthdate", "week": "yearweek", "month": "yearmonth", "quarter": "yearquarter",
              "year": "year"}


def _field(column: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", column)


def time_column(table: ResultTable) -> int | None:
    for i, col in enumerate(table.columns):
        values = [r[i] for r in table.rows if r[i] is not None]
        if col.rsplit(".", 1)[-1] in TIME_GRAINS or (values and all(
                _TIME_VALUE.match(str(jsonable(v))) for v in values) and not all(is_number(v) for v in values)):
            return i
    return None


def chart_spec(table: ResultTable, language: str, title: str = "") -> dict[str, Any] | None:
    """A spec when the table is a series (time column + number) or a ranking (text column + number)."""
    if len(table.rows) < 2 or len(table.columns) < 2:
        return None
    numeric = [i for i in range(len(table.columns)) if all(is_number(r[i]) for r in table.rows if r[i] is not None)
               and any(r[i] is not None for r in table.rows)]
    t = time_column(table)
    measure = next((i for i in numeric if i != t), None)
    if measure is None:
        return None
    if t is not None:
        x_index, mark, x_type = t, "line", "temporal"
    else:
        text_cols = [i for i in range(len(table.columns)) if i not in numeric]
        if len(text_cols) != 1 or len(table.rows) > 50:
            return None
        x_index, mark, x_type = text_cols[0], "bar", "nominal"
    x, y = table.columns[x_index], table.columns[measure]
    values = [{_field(x): jsonable(r[x_index]), _field(y): jsonable(r[measure])} for r in table.rows]
    x_enc: dict[str, Any] = {"field": _field(x), "type": x_type, "title": label(x, language)}
    if mark == "bar":
        x_enc["sort"] = "-y"
    elif (grain := grain_of(x)) is not None:
        x_enc["timeUnit"] = TIME_UNITS[grain]
    y_enc: dict[str, Any] = {"field": _field(y), "type": "quantitative", "title": label(y, language)}
    if fmt := vocabulary().member_format(y):
        y_enc["axis"] = {"format": ".2%" if fmt == "percent" else ",.2f"}
    return {
        "$schema": SCHEMA, "title": title, "mark": {"type": mark, "point": mark == "line", "tooltip": True},
        "data": {"values": values},
        "encoding": {"x": x_enc, "y": y_enc},
    }

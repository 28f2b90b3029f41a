"""Compared periods named by their dates: "last month" is shown as "2011-11, last month", "去年同期" over a
part of a year as "2010-01-01 至 2010-12-23（去年同期）", so a reader sees which dates each row covers. A label
that already names its period ("2024", "Q1 2025", "2024年") is kept as it is."""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Any

from fourengine.terms import has_cjk

_NAMES_A_YEAR = re.compile(r"\d{4}")


def with_dates(label: str, query: dict[str, Any]) -> str:
    """``label`` with the dates of ``query``'s date range before it, unless it names them already."""
    span = _date_range(query)
    if not label or span is None or _NAMES_A_YEAR.search(label):
        return label
    zh = has_cjk(label)
    name = _period_name(*span, zh=zh)
    return f"{name}（{label}）" if zh else f"{name}, {label}"


def _date_range(query: dict[str, Any]) -> tuple[date, date] | None:
    dims = query.get("timeDimensions") or []
    span = dims[0].get("dateRange") if dims else None
    if not isinstance(span, list | tuple) or len(span) != 2:
        return None
    try:
        return date.fromisoformat(str(span[0])[:10]), date.fromisoformat(str(span[1])[:10])
    except ValueError:
        return None


def _period_name(start: date, end: date, *, zh: bool) -> str:
    """ "2011" for a whole year, "2011-11" for a whole month, "Q3 2011" / "2011年3季度" for a whole quarter,
    else the first and last day."""
    month_end = date(end.year, end.month, calendar.monthrange(end.year, end.month)[1])
    if start.day == 1 and end == month_end:
        months = (end.year - start.year) * 12 + end.month - start.month + 1
        if months == 12 and start.month == 1:
            return str(start.year)
        if months == 1:
            return f"{start.year}-{start.month:02d}"
        if months == 3 and start.month % 3 == 1:
            quarter = (start.month + 2) // 3
            return f"{start.year}年{quarter}季度" if zh else f"Q{quarter} {start.year}"
    return f"{start} 至 {end}" if zh else f"{start} to {end}"

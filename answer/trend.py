"""The trend behind a single number, for its KPI card: the same Cube query by the period's own granularity
over the periods leading up to it (``trend_query``), and the sparkline points and change of its rows
(``trend_of``).

"late fees in Oxford this month" (June) becomes monthly late fees in Oxford from July of the year before to
June; the card shows the sparkline and the change from May to June. The change is left out when the asked
period is not over yet (a month to date against a whole month says nothing). A number over all time gets
a monthly sparkline of its measure's time dimension and no change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from answer.formatting import fmt_period

WINDOW = {"day": 14, "week": 12, "month": 12, "quarter": 8, "year": 5}
ALL_TIME_GRAIN = "month"


@dataclass(frozen=True)
class Trend:
    measure: str
    grain: str
    points: list[tuple[str, float]]  # (period as the table shows it, value), oldest first
    change_pct: float | None = None  # the last period against the one before, relative
    change: float | None = None  # the same, absolute (percentage points for percent measures)
    previous: str | None = None  # the period the change is measured from


@dataclass(frozen=True)
class TrendQuery:
    query: dict[str, Any]
    measure: str
    grain: str
    whole: bool  # the asked period is complete, so its change from the previous one means something
    asked: str | None = None  # the asked period as the table shows it ("2025-06")


def _month_start(d: date, months_back: int) -> date:
    total = d.year * 12 + d.month - 1 - months_back
    return date(total // 12, total % 12 + 1, 1)


def _unit_of(start: date, end: date) -> tuple[str, date] | None:
    """The calendar unit the range [start, end] lies in (start at its beginning), with the unit's last day."""
    if start == end:
        return "day", end
    if start.weekday() == 0 and end <= start + timedelta(days=6):
        return "week", start + timedelta(days=6)
    if start.day != 1:
        return None
    for unit, months in (("month", 1), ("quarter", 3), ("year", 12)):
        if (unit == "quarter" and start.month % 3 != 1) or (unit == "year" and start.month != 1):
            continue
        last = _month_start(start, -months) - timedelta(days=1)
        if end <= last:
            return unit, last
    return None


def _window_start(start: date, unit: str) -> date:
    back = WINDOW[unit] - 1
    if unit == "day":
        return start - timedelta(days=back)
    if unit == "week":
        return start - timedelta(weeks=back)
    return _month_start(start, back * {"month": 1, "quarter": 3, "year": 12}[unit])


def trend_query(cube_query: dict[str, Any] | None, time_dimension_of: Callable[[str], str | None]) -> TrendQuery | None:
    """The query of the trend behind a single-number answer, None when it has none (grouped, ranked or
    already a series, or a date range that is not one calendar period)."""
    if not cube_query or cube_query.get("dimensions") or cube_query.get("limit"):
        return None
    measures = cube_query.get("measures") or []
    times = cube_query.get("timeDimensions") or []
    if len(measures) != 1 or len(times) > 1 or any(t.get("granularity") for t in times):
        return None
    base = {k: v for k, v in cube_query.items() if k not in ("timeDimensions", "order", "limit", "offset")}
    if not times or not times[0].get("dateRange"):
        dimension = times[0]["dimension"] if times else time_dimension_of(measures[0])
        if dimension is None:
            return None
        td = {"dimension": dimension, "granularity": ALL_TIME_GRAIN}
        return TrendQuery(
            {**base, "timeDimensions": [td], "order": [[dimension, "asc"]]}, measures[0], ALL_TIME_GRAIN, whole=False
        )
    span = times[0]["dateRange"]
    if not isinstance(span, list) or len(span) != 2:
        return None
    try:
        start, end = date.fromisoformat(str(span[0])[:10]), date.fromisoformat(str(span[1])[:10])
    except ValueError:
        return None
    unit = _unit_of(start, end)
    if unit is None:
        return None
    grain, last = unit
    td = {
        "dimension": times[0]["dimension"],
        "granularity": grain,
        "dateRange": [_window_start(start, grain).isoformat(), end.isoformat()],
    }
    return TrendQuery(
        {**base, "timeDimensions": [td], "order": [[td["dimension"], "asc"]]},
        measures[0],
        grain,
        whole=end == last,
        asked=fmt_period(start.isoformat(), grain, "en"),
    )


def trend_of(query: TrendQuery, rows: list[dict[str, Any]]) -> Trend | None:
    """Sparkline points and change from the rows of ``query`` (None with fewer than two periods)."""
    key = f"{query.query['timeDimensions'][0]['dimension']}.{query.grain}"
    points = []
    for row in rows:
        value = row.get(query.measure)
        if row.get(key) is None or value is None:
            continue
        try:
            points.append((fmt_period(str(row[key]), query.grain, "en"), float(value)))
        except (TypeError, ValueError):
            continue
    points.sort()
    if len(points) < 2:
        return None
    (before, previous), (_, current) = points[-2], points[-1]
    asked = query.whole and points[-1][0] == query.asked
    if not asked:
        return Trend(query.measure, query.grain, points)
    pct = (current - previous) / previous if previous else None
    return Trend(query.measure, query.grain, points, pct, current - previous, before)

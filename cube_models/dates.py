"""Cube date ranges -> ``(from, to)`` local timestamps ``YYYY-MM-DDTHH:MM:SS.mmm``, like Cube's API.

Absolute ranges (``["2024-01-01", "2024-03-31"]``, one date, ISO datetimes) and Cube's relative
strings ("today", "yesterday", "this quarter", "last 7 days", "last year", "next month",
"from 2024-01-01 to 2024-03-31") resolved against a given ``today`` (UTC), as Cube's dateParser does.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from cube_models.errors import QueryError

_UNITS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
_THIS_LAST = re.compile(r"(this|last|next)\s+(second|minute|hour|day|week|month|quarter|year)s?\b")
_LAST_N = re.compile(r"(last|next)\s+(\d+)\s+(second|minute|hour|day|week|month|quarter|year)s?\b")
_FROM_TO = re.compile(r"^from (.*) to (.*)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?Z?$")
FMT_LEN = 23


def fmt(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _add(moment: datetime, n: int, unit: str) -> datetime:
    if unit in ("month", "quarter", "year"):
        months = n * {"month": 1, "quarter": 3, "year": 12}[unit]
        total = moment.year * 12 + moment.month - 1 + months
        year, month = divmod(total, 12)
        month += 1
        last_day = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
        return moment.replace(year=year, month=month, day=min(moment.day, last_day))
    return moment + timedelta(**{f"{unit}s": n})


def _start_of(moment: datetime, unit: str) -> datetime:
    if unit == "second":
        return moment.replace(microsecond=0)
    if unit == "minute":
        return moment.replace(second=0, microsecond=0)
    if unit == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return day
    if unit == "week":  # ISO week, Monday first (Cube uses isoWeek)
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    if unit == "quarter":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    return day.replace(month=1, day=1)


def _end_of(moment: datetime, unit: str) -> datetime:
    step = {"week": (7, "day")}.get(unit)
    start = _start_of(moment, unit)
    nxt = start + timedelta(days=7) if step else _add(start, 1, unit)
    return nxt - timedelta(milliseconds=1)


def _now(today: date | datetime | None) -> datetime:
    if isinstance(today, datetime):
        return today.replace(tzinfo=None)
    if isinstance(today, date):
        return datetime(today.year, today.month, today.day, 12, 0, 0)
    return datetime.now(UTC).replace(tzinfo=None)  # Cube resolves relative ranges in UTC


def _point(text: str, now: datetime) -> datetime:
    text = text.strip()
    if text in ("today", "now"):
        return now
    if text == "yesterday":
        return now - timedelta(days=1)
    if text == "tomorrow":
        return now + timedelta(days=1)
    if _DATE.match(text) or _DATETIME.match(text):
        try:
            return datetime.fromisoformat(text.replace("Z", "").replace(" ", "T"))
        except ValueError as exc:
            raise QueryError(f"can't parse date: '{text}'") from exc
    raise QueryError(f"can't parse date: '{text}'")


def parse_relative(text: str, today: date | datetime | None = None) -> tuple[str, str]:
    """A relative date range string -> (from, to) local timestamps."""
    now = _now(today)
    s = text.strip().lower()
    if m := _THIS_LAST.search(s):
        shift = {"this": 0, "last": -1, "next": 1}[m.group(1)]
        moment = _add(now, shift, m.group(2)) if m.group(2) not in ("week",) else now + timedelta(weeks=shift)
        return fmt(_start_of(moment, m.group(2))), fmt(_end_of(moment, m.group(2)))
    if m := _LAST_N.search(s):
        n, unit = int(m.group(2)), m.group(3)
        if m.group(1) == "last":
            start, end = _shift(now, -n, unit), _shift(now, -1, unit)
        else:
            start, end = _shift(now, 1, unit), _shift(now, n, unit)
        return fmt(_start_of(start, unit)), fmt(_end_of(end, unit))
    if "today" in s or "yesterday" in s or "tomorrow" in s:
        word = next(w for w in ("today", "yesterday", "tomorrow") if w in s)
        moment = _point(word, now)
        return fmt(_start_of(moment, "day")), fmt(_end_of(moment, "day"))
    exact = next((g for g in ("second", "minute", "hour") if g in s), "day")
    if m := _FROM_TO.match(s):
        start, end = _point(m.group(1), now), _point(m.group(2), now)
        return fmt(_start_of(start, exact)), fmt(_end_of(end, exact))
    moment = _point(s, now)
    return fmt(_start_of(moment, exact)), fmt(_end_of(moment, exact))


def _shift(moment: datetime, n: int, unit: str) -> datetime:
    return moment + timedelta(weeks=n) if unit == "week" else _add(moment, n, unit)


def _bound(value: str, is_end: bool) -> str:
    value = value.strip()
    if _DATE.match(value):
        _point(value, datetime(2000, 1, 1))
        return f"{value}T23:59:59.999" if is_end else f"{value}T00:00:00.000"
    if _DATETIME.match(value):
        return fmt(_point(value, datetime(2000, 1, 1)))
    raise QueryError(f"can't parse date: '{value}' (use YYYY-MM-DD or an ISO datetime)")


def resolve_date_range(
    value: str | tuple[str, ...] | list[str], today: date | datetime | None = None
) -> tuple[str, str]:
    """A query ``dateRange`` -> (from, to) as Cube normalises it."""
    if isinstance(value, str):
        start, end = parse_relative(value, today)
    else:
        items = list(value)
        if len(items) == 1:
            items = [items[0], items[0]]
        if len(items) != 2:
            raise QueryError("dateRange must have one or two dates")
        start, end = _bound(items[0], False), _bound(items[1], True)
    if start > end:
        raise QueryError(f"dateRange starts after it ends: {start} > {end}")
    return start, end


def filter_bound(value: str, is_end: bool) -> str:
    """A filter date value (inDateRange, beforeDate...) -> local timestamp, as Cube's BaseFilter formats it."""
    return _bound(value, is_end)

"""Calendar arithmetic for time expressions: period bounds, shifting, Chinese and English numerals."""

from __future__ import annotations

import calendar
from datetime import date, timedelta

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
EN_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "fifty": 50,
    "hundred": 100,
    "a": 1,
    "an": 1,
}
MONTHS = {
    name: i
    for i, names in enumerate(
        [
            (),
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}


def parse_number(text: str) -> int | None:
    """'12', '十二', '二十', '两', 'seven' -> int; None when it is not a number."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in EN_NUMBERS:
        return EN_NUMBERS[text]
    if not text or any(c not in CN_DIGITS and c not in "十百" for c in text):
        return None
    if "百" in text:
        head, _, tail = text.partition("百")
        rest = parse_number(tail) if tail else 0
        return (CN_DIGITS.get(head, 1) if head else 1) * 100 + (rest or 0)
    if "十" in text:
        head, _, tail = text.partition("十")
        return (CN_DIGITS[head] if head else 1) * 10 + (CN_DIGITS[tail] if tail else 0)
    value = 0
    for c in text:
        value = value * 10 + CN_DIGITS[c]
    return value


def month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole months, clamped to the target month's length."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def quarter_of(day: date) -> int:
    return (day.month - 1) // 3 + 1


def quarter_bounds(year: int, quarter: int) -> tuple[date, date]:
    first = 3 * (quarter - 1) + 1
    return date(year, first, 1), month_end(year, first + 2)


def week_start(day: date) -> date:
    """Monday of the ISO week of ``day``."""
    return day - timedelta(days=day.weekday())


def is_month_end(day: date) -> bool:
    return day == month_end(day.year, day.month)


def shift_range(start: date, end: date, months: int) -> tuple[date, date]:
    """Both bounds moved by ``months``; an end on a month's last day stays on a month's last day."""
    new_end = add_months(end, months)
    if is_month_end(end):
        new_end = month_end(new_end.year, new_end.month)
    return add_months(start, months), new_end


def previous_period(start: date, end: date, grain: str | None) -> tuple[date, date]:
    """The period before [start, end]: one grain back for calendar periods, same length for others."""
    months = {"month": 1, "quarter": 3, "year": 12}.get(grain or "")
    if months and start.day == 1:
        return shift_range(start, end, -months)
    if grain == "week" and start.weekday() == 0:
        return start - timedelta(days=7), end - timedelta(days=7)
    length = (end - start).days + 1
    return start - timedelta(days=length), start - timedelta(days=1)


def period_end(start: date, grain: str) -> date:
    """The last day of the ``grain`` period beginning on ``start`` (a day, an ISO week, a month, a quarter, a year)."""
    months = {"month": 1, "quarter": 3, "year": 12}.get(grain)
    if months:
        return add_months(start, months) - timedelta(days=1)
    return start + timedelta(days=6 if grain == "week" else 0)

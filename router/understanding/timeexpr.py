"""Time expressions in English and Chinese resolved against a configurable "today".

Rules (documented choices):
- Absolute: "2024年3月", "March 2024", "2024-03", "Q1 2024", "2024年第一季度", "H1 2024", "2024年上半年",
  "in 2024", "2024-03-15", "2024年3月15日"; a month/quarter without a year is the most recent one not
  after today ("3月" on 2025-06-30 -> 2025-03; "9月" -> 2024-09).
- Current periods end today (to date): "this month"/"本月" = 1st of the month .. today; same for
  week (Monday start), quarter and year; "YTD"/"年初至今" = Jan 1 .. today.
- Previous periods are complete: "last month"/"上个月", "last quarter"/"上季度", "last year"/"去年", "前年".
- Rolling windows include today: "last 7 days"/"最近7天" = today-6 .. today (weeks likewise in days);
  "last 3 months"/"近三个月" = 1st of the month two months back .. today (calendar-aligned; quarters
  likewise; "last N years"/"the past year" = the last 12*N calendar months).
- A month/quarter without a year takes the year of the nearest other month/quarter/day that names one
  ("March vs April 2024", "2024年3月和4月"); otherwise the most recent one.
- "between X and Y", "from X to Y", "X到Y", "X至Y" merge into one range (Y inherits X's year when it
  has none); "since X"/"X以来"/"X至今" run to today. Not when the question asks for a change between two
  periods of the same grain ("turnover growth from 2023 to 2024", "2023到2024年营业额增长"): those stay two
  ranges, compared by ``comparisons``.
- "same period last year"/"the same month last year"/"去年同期"/"上年同期"/"去年同月" is a marker (no range):
  comparisons shift the primary range.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

from router.understanding._calendar import (
    MONTHS,
    add_months,
    month_end,
    parse_number,
    quarter_bounds,
    quarter_of,
    week_start,
)
from router.understanding.types import Granularity, TimeRange

Bounds = tuple[date, date]
GRAIN_ORDER: list[Granularity] = ["day", "week", "month", "quarter", "year"]
YOY_MARKER = "yoy"

_MONTH_NAMES = "|".join(sorted((m for m in MONTHS if m != "may"), key=len, reverse=True))
_ALL_MONTHS = _MONTH_NAMES + "|may"
_CN_NUM = "[一二三四五六七八九十两百]+"
_NUM = rf"(?:\d+|{_CN_NUM}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
_CN_MONTH = r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_QUARTER_ZH = r"(?:第\s*)?([一二三四1-4])\s*季度"
_QUARTER_ZH_NC = r"(?:第\s*)?[一二三四1-4]\s*季度"


@dataclass
class _Spec:
    bounds: Bounds | None
    grain: Granularity | None
    explicit_year: bool = True
    rebase: Callable[[int], Bounds] | None = None  # the same period in another year
    marker: str | None = None
    inherited: bool = False  # its year came from a neighbour ("Q1 or Q2 of 2013"): the label says it


@dataclass
class _Atom:
    start: int
    end: int
    spec: _Spec


@dataclass
class TimeParse:
    """Resolved ranges in order of mention, markers found, and the character spans they used."""

    ranges: list[TimeRange] = field(default_factory=list)
    markers: set[str] = field(default_factory=set)
    spans: list[tuple[int, int]] = field(default_factory=list)


def _recent_year(today: date, month: int) -> int:
    """The year of the latest ``month`` begun before today ("in Jan" on 2014-01-01 is January 2013: the one
    beginning today has no whole day behind it yet)."""
    return today.year if date(today.year, month, 1) < today else today.year - 1


def _month(year: int, month: int) -> Bounds:
    return date(year, month, 1), month_end(year, month)


def _half(year: int, half: int) -> Bounds:
    return (date(year, 1, 1), date(year, 6, 30)) if half == 1 else (date(year, 7, 1), date(year, 12, 31))


def _year(year: int) -> Bounds:
    return date(year, 1, 1), date(year, 12, 31)


def _decade(first: int) -> _Spec:
    return _Spec((date(first, 1, 1), date(first + 9, 12, 31)), "year")


def _decade_zh(century: str | None, said: str, today: date) -> _Spec:
    """ "1990年代", "90年代" (the latest such decade), "20世纪90年代" (the 20th century's: 1990)."""
    if len(said) == 4:
        return _decade(int(said))
    if century:
        return _decade((int(century) - 1) * 100 + int(said))
    return _decade(_two_digit_year(int(said), today))


def _day(year: int, month: int, day: int) -> Bounds:
    value = date(year, month, day)
    return value, value


def _month_spec(year: int | None, month: int, today: date) -> _Spec | None:
    if not 1 <= month <= 12:
        return None
    if year is None:
        return _Spec(_month(_recent_year(today, month), month), "month", False, lambda y: _month(y, month))
    return _Spec(_month(year, month), "month")


def _two_digit_year(yy: int, today: date) -> int:
    """ "97" on 1998-08-02 is 1997, "24" on 2025-06-30 is 2024: the year ending in ``yy`` no more than 20
    years after today, the latest such."""
    year = today.year - today.year % 100 + yy
    return year - 100 if year > today.year + 20 else year


def _quarter_spec(year: int | None, quarter: int, today: date) -> _Spec:
    if year is None:
        year = today.year if quarter_bounds(today.year, quarter)[0] < today else today.year - 1
        return _Spec(quarter_bounds(year, quarter), "quarter", False, lambda y: quarter_bounds(y, quarter))
    return _Spec(quarter_bounds(year, quarter), "quarter")


def _month_day(first: int, second: int) -> tuple[int, int]:
    return (second, first) if first > 12 else (first, second)


def _day_spec(year: int | None, month: int, day: int, today: date) -> _Spec | None:
    try:
        if year is None:
            year = today.year if (month, day) <= (today.month, today.day) else today.year - 1
            return _Spec(_day(year, month, day), "day", False, lambda y: _day(y, month, day))
        return _Spec(_day(year, month, day), "day")
    except ValueError:
        return None


def _relative_year(word: str, today: date) -> int:
    word = word.lower()
    if word in {"去年", "上年", "上一年", "last", "previous"}:
        return today.year - 1
    if word in {"前年", "before last"}:
        return today.year - 2
    return today.year


# "this year" is the calendar year; these say "to date" of it
_YEAR_TO_DATE = frozenset(
    {
        "今年以来",
        "年初至今",
        "年初到现在",
        "今年至今",
        "年初以来",
        "year to date",
        "year-to-date",
        "ytd",
        "so far this year",
    }
)


def _relative_said(phrase: str, table: dict[str, tuple[str, int]], today: date) -> _Spec:
    unit, offset = table[phrase]
    whole = _relative(unit, offset, today)
    if unit == "year" and offset == 0 and phrase not in _YEAR_TO_DATE:
        return replace(whole, bounds=(date(today.year, 1, 1), date(today.year, 12, 31)))
    return whole


def _relative(unit: str, offset: int, today: date) -> _Spec:
    """This (offset 0, to date) or previous (offset -1, complete) day/week/month/quarter/year."""
    if unit == "day":
        day = today + timedelta(days=offset)
        return _Spec((day, day), "day")
    if unit == "week":
        start = week_start(today) + timedelta(days=7 * offset)
        return _Spec((start, today if offset == 0 else start + timedelta(days=6)), "week")
    if unit == "month":
        first = add_months(today.replace(day=1), offset)
        return _Spec((first, today if offset == 0 else month_end(first.year, first.month)), "month")
    if unit == "quarter":
        index = today.year * 4 + quarter_of(today) - 1 + offset
        start, end = quarter_bounds(index // 4, index % 4 + 1)
        return _Spec((start, today if offset == 0 else end), "quarter")
    year = today.year + offset
    return _Spec((date(year, 1, 1), today if offset == 0 else date(year, 12, 31)), "year")


def _rolling(count: int | None, unit: str, today: date) -> _Spec | None:
    if not count or count > 3650:
        return None
    if unit == "day":
        return _Spec((today - timedelta(days=count - 1), today), "day")
    if unit == "week":
        return _Spec((today - timedelta(days=7 * count - 1), today), "week")
    if unit == "month":
        return _Spec((add_months(today.replace(day=1), -(count - 1)), today), "month")
    if unit == "quarter":
        start, _ = quarter_bounds(today.year, quarter_of(today))
        return _Spec((add_months(start, -3 * (count - 1)), today), "quarter")
    return _Spec((add_months(today.replace(day=1), -(12 * count - 1)), today), "year")


_UNIT_ZH = {
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "月": "month",
    "季度": "quarter",
    "季": "quarter",
    "年": "year",
}
_REL_ZH = {
    "今天": ("day", 0),
    "今日": ("day", 0),
    "昨天": ("day", -1),
    "昨日": ("day", -1),
    "本周": ("week", 0),
    "这周": ("week", 0),
    "这个星期": ("week", 0),
    "本星期": ("week", 0),
    "上周": ("week", -1),
    "上个星期": ("week", -1),
    "上星期": ("week", -1),
    "上一周": ("week", -1),
    "本月": ("month", 0),
    "这个月": ("month", 0),
    "当月": ("month", 0),
    "本月份": ("month", 0),
    "上个月": ("month", -1),
    "上月": ("month", -1),
    "上一个月": ("month", -1),
    "上一月": ("month", -1),
    "本季度": ("quarter", 0),
    "这个季度": ("quarter", 0),
    "本季": ("quarter", 0),
    "当季": ("quarter", 0),
    "上季度": ("quarter", -1),
    "上个季度": ("quarter", -1),
    "上一季度": ("quarter", -1),
    "上一个季度": ("quarter", -1),
    "上季": ("quarter", -1),
    "今年": ("year", 0),
    "本年": ("year", 0),
    "今年以来": ("year", 0),
    "年初至今": ("year", 0),
    "年初到现在": ("year", 0),
    "今年至今": ("year", 0),
    "年初以来": ("year", 0),
    "本年度": ("year", 0),
    "去年": ("year", -1),
    "上一年": ("year", -1),
    "上年": ("year", -1),
    "前年": ("year", -2),
    "本月至今": ("month", 0),
    "月初至今": ("month", 0),
}
_REL_EN = {
    "today": ("day", 0),
    "yesterday": ("day", -1),
    "this week": ("week", 0),
    "current week": ("week", 0),
    "week to date": ("week", 0),
    "wtd": ("week", 0),
    "last week": ("week", -1),
    "previous week": ("week", -1),
    "this month": ("month", 0),
    "current month": ("month", 0),
    "month to date": ("month", 0),
    "month-to-date": ("month", 0),
    "mtd": ("month", 0),
    "last month": ("month", -1),
    "previous month": ("month", -1),
    "this quarter": ("quarter", 0),
    "current quarter": ("quarter", 0),
    "quarter to date": ("quarter", 0),
    "quarter-to-date": ("quarter", 0),
    "qtd": ("quarter", 0),
    "last quarter": ("quarter", -1),
    "previous quarter": ("quarter", -1),
    "this year": ("year", 0),
    "current year": ("year", 0),
    "year to date": ("year", 0),
    "year-to-date": ("year", 0),
    "ytd": ("year", 0),
    "so far this year": ("year", 0),
    "last year": ("year", -1),
    "previous year": ("year", -1),
    "the year before last": ("year", -2),
}


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _sub_period(year: int, part: str, today: date, explicit: bool) -> _Spec | None:
    """A quarter/month/half named after a (relative) year: '去年3月', 'Q1 last year', '2024年上半年'."""
    part = part.strip().lower()
    if m := re.fullmatch(rf"{_QUARTER_ZH}|q([1-4])", part):
        quarter = parse_number(m.group(1) or m.group(2)) or 0
        return _Spec(quarter_bounds(year, quarter), "quarter", explicit, lambda y: quarter_bounds(y, quarter))
    if m := re.fullmatch(r"h([12])|(上|下)半年|(first|second|1st|2nd) half(?: of)?", part):
        half = 1 if (m.group(1) == "1" or m.group(2) == "上" or (m.group(3) or "").startswith(("f", "1"))) else 2
        return _Spec(_half(year, half), "quarter", explicit, lambda y: _half(y, half))
    if m := re.fullmatch(rf"({_CN_MONTH})\s*月份?", part):
        month = parse_number(m.group(1)) or 0
    else:
        month = MONTHS.get(part.rstrip("."), 0)
    if not month:
        return None
    return _Spec(_month(year, month), "month", explicit, lambda y: _month(y, month))


def _relative_sub(year: int, part: str, today: date) -> _Spec | None:
    """ "Q4 last year", "去年3月": the sub-period of a relative year, labelled with its year."""
    spec = _sub_period(year, part, today, True)
    return None if spec is None else replace(spec, inherited=True)


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], "_Spec | None"]]
RawRule = tuple[str, Callable[[re.Match[str], date], "_Spec | None"]]  # a rule before its pattern is compiled


def _rules() -> list[Rule]:
    """The rule table, compiled, in the order the rules are tried: days, periods of a given year, relative
    years and years, then periods relative to today."""
    flags = re.IGNORECASE | re.ASCII
    rules = [*_day_rules(), *_dated_period_rules(), *_year_rules(), *_recent_rules()]
    return [(re.compile(pattern, flags), handler) for pattern, handler in rules]


# days named by their holiday (a fixed date of the calendar; without a year, the latest one by today); only
# names that cannot be a title of something ("Christmas" alone may be an album)
_HOLIDAYS = {
    "christmas day": (12, 25),
    "christmas eve": (12, 24),
    "new year's day": (1, 1),
    "new year's eve": (12, 31),
    "valentine's day": (2, 14),
    "圣诞节": (12, 25),
    "平安夜": (12, 24),
    "元旦": (1, 1),
    "情人节": (2, 14),
}
_HOLIDAY = "|".join(re.escape(h).replace("'", "['’]?") for h in sorted(_HOLIDAYS, key=len, reverse=True))
_HOLIDAY_DAYS = {name.replace("'", ""): day for name, day in _HOLIDAYS.items()}  # by the name without apostrophe


def _holiday(said: str) -> tuple[int, int]:
    return _HOLIDAY_DAYS[re.sub(r"['’]", "", said.lower())]


def _days_spec(year: int | None, month: int, first: int, last: int, today: date) -> _Spec | None:
    """ "June 1-7, 1998": days of one month (the most recent such month without a year)."""
    start = _day_spec(year, month, first, today)
    if start is None or start.bounds is None or not first <= last:
        return None
    y = start.bounds[0].year
    try:
        bounds = (start.bounds[0], date(y, month, last))
    except ValueError:
        return None
    return _Spec(bounds, "day", year is not None, lambda yy: (date(yy, month, first), date(yy, month, last)))


_WEEK_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}


def _week_of(ordinal: str, period: Bounds) -> _Spec | None:
    """ "the first week of June 1998": days 1-7 of the period (the last week: its last seven days)."""
    n = _WEEK_ORDINALS[ordinal.lower()]
    start = period[1] - timedelta(days=6) if n < 0 else period[0] + timedelta(days=7 * (n - 1))
    end = min(start + timedelta(days=6), period[1])
    return _Spec((start, end), "day") if start <= period[1] else None


def _day_range_rules() -> list[RawRule]:
    """Days of one month ("June 1-7, 1998", "1-7 June 1998") and the Nth week of a month or year."""
    ordinal = "|".join(_WEEK_ORDINALS)
    return [
        (
            rf"\b({_ALL_MONTHS})\.?\s+(\d{{1,2}})\s*(?:-|–|to|through|thru)\s*(\d{{1,2}})\b(?:,?\s+(\d{{4}})\b)?",
            lambda m, t: _days_spec(int(m[4]) if m[4] else None, MONTHS[m[1].lower()], int(m[2]), int(m[3]), t),
        ),
        (
            rf"\b(\d{{1,2}})\s*(?:-|–|to)\s*(\d{{1,2}})\s+({_ALL_MONTHS})\b\.?(?:,?\s+(\d{{4}})\b)?",
            lambda m, t: _days_spec(int(m[4]) if m[4] else None, MONTHS[m[3].lower()], int(m[1]), int(m[2]), t),
        ),
        (
            rf"\b(?:the\s+)?({ordinal})\s+week\s+of\s+({_ALL_MONTHS})\.?,?\s+(\d{{4}})\b",
            lambda m, t: _week_of(m[1], _month(int(m[3]), MONTHS[m[2].lower()])),
        ),
        (
            rf"\b(?:the\s+)?({ordinal})\s+week\s+of\s+(\d{{4}})\b",
            lambda m, t: _week_of(m[1], _year(int(m[2]))),
        ),
    ]


def _day_rules() -> list[RawRule]:
    """Full dates, days named by their holiday, and days without their year."""
    return [
        *_day_range_rules(),
        (
            rf"(?:(\d{{4}})\s*年\s*的?)?({_HOLIDAY})(?:,?\s+(?:of\s+)?(\d{{4}})\b)?",
            lambda m, t: _day_spec(int(m[1] or m[3]) if (m[1] or m[3]) else None, *_holiday(m[2]), t),
        ),
        # full dates
        (
            r"(?<!\d)(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]",
            lambda m, t: _day_spec(int(m[1]), int(m[2]), int(m[3]), t),
        ),
        (
            r"(?<![\d-])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?![\d])",
            lambda m, t: _day_spec(int(m[1]), int(m[2]), int(m[3]), t),
        ),
        (  # "3/8/2013": month first (US), unless the first number cannot be a month ("25/12/2013")
            r"(?<![\d/.-])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])",
            lambda m, t: _day_spec(int(m[3]), *_month_day(int(m[1]), int(m[2])), t),
        ),
        (
            rf"\b({_ALL_MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b",
            lambda m, t: _day_spec(int(m[3]), MONTHS[m[1].lower()], int(m[2]), t),
        ),
        (
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_ALL_MONTHS})\.?,?\s+(\d{{4}})\b",
            lambda m, t: _day_spec(int(m[3]), MONTHS[m[2].lower()], int(m[1]), t),
        ),
        (r"(?<![\d年])(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", lambda m, t: _day_spec(None, int(m[1]), int(m[2]), t)),
        # a day without its year ("from June 23 to June 29, 2025": the year of the nearest one that has it)
        (
            rf"\b({_ALL_MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d{{4}})(?!\s*(?:st|nd|rd|th))",
            lambda m, t: _day_spec(None, MONTHS[m[1].lower()], int(m[2]), t),
        ),
    ]


def _dated_period_rules() -> list[RawRule]:
    """Months, quarters and halves of a given year."""
    return [
        # months
        (
            rf"(?<!\d)(\d{{4}})\s*年\s*({_CN_MONTH})\s*月份?",
            lambda m, t: _month_spec(int(m[1]), parse_number(m[2]) or 0, t),
        ),
        (r"(?<![\d-])(\d{4})-(\d{1,2})(?![\d-])", lambda m, t: _month_spec(int(m[1]), int(m[2]), t)),
        (
            rf"\b({_ALL_MONTHS})\.?,?\s+(?:of\s+)?(\d{{4}})\b",
            lambda m, t: _month_spec(int(m[2]), MONTHS[m[1].lower()], t),
        ),
        (rf"\b(\d{{4}})\s+({_ALL_MONTHS})\b", lambda m, t: _month_spec(int(m[1]), MONTHS[m[2].lower()], t)),
        # quarters and halves with a year
        (rf"(?<!\d)(\d{{4}})\s*年?\s*{_QUARTER_ZH}", lambda m, t: _quarter_spec(int(m[1]), parse_number(m[2]) or 1, t)),
        (r"(?<!\d)(\d{4})\s*年?\s*Q([1-4])\b", lambda m, t: _quarter_spec(int(m[1]), int(m[2]), t)),
        (r"\bQ([1-4])\s*(?:of\s+|,\s*|')?(\d{4})\b", lambda m, t: _quarter_spec(int(m[2]), int(m[1]), t)),
        (  # "Q1 97", "Q3 '24": a year in two digits, the century that puts it nearest before today
            r"\bQ([1-4])\s*['’]?(\d{2})\b(?![.,:/%]?\d|\s*%|\s+(?:percent|days|rows))",
            lambda m, t: _quarter_spec(_two_digit_year(int(m[2]), t), int(m[1]), t),
        ),
        (r"(?<!\d)(\d{4})\s*年?\s*([上下])半年", lambda m, t: _sub_period(int(m[1]), m[2] + "半年", t, True)),
        (r"(?<!\d)(\d{4})\s*H([12])\b", lambda m, t: _sub_period(int(m[1]), "h" + m[2], t, True)),
        (r"\bH([12])\s*(?:of\s+)?(\d{4})\b", lambda m, t: _sub_period(int(m[2]), "h" + m[1], t, True)),
        (
            r"\b(first|second|1st|2nd)\s+half\s+(?:of\s+)?(\d{4})\b",
            lambda m, t: _sub_period(int(m[2]), m[1] + " half", t, True),
        ),
    ]


def _year_rules() -> list[RawRule]:
    """Sub-periods of relative years ("去年3月", "Q4 last year"), then years."""
    rel_year_zh = r"(今年|去年|前年|本年|上一?年)"
    zh_sub = rf"({_QUARTER_ZH_NC}|[Qq][1-4]|{_CN_MONTH}\s*月份?|[上下]半年)"
    en_sub = rf"(q[1-4]|h[12]|{_ALL_MONTHS}|(?:first|second|1st|2nd) half(?: of)?)"
    return [
        # sub-periods of relative years
        (rf"{rel_year_zh}\s*的?\s*{zh_sub}", lambda m, t: _relative_sub(_relative_year(m[1], t), m[2], t)),
        (
            rf"\b{en_sub}\s+(?:of\s+)?(this|last|previous)\s+year\b",
            lambda m, t: _relative_sub(_relative_year(m[2], t), m[1], t),
        ),
        (
            rf"\b(this|last|previous)\s+year'?s\s+{en_sub}\b",
            lambda m, t: _relative_sub(_relative_year(m[1], t), m[2], t),
        ),
        # "this June", "this Q3": that period of the current year
        (rf"\bthis\s+({_ALL_MONTHS})\b", lambda m, t: _month_spec(t.year, MONTHS[m[1].lower()], t)),
        (r"\bthis\s+q([1-4])\b", lambda m, t: _quarter_spec(t.year, int(m[1]), t)),
        # decades: "the 1990s", "the '90s", "1990年代", "90年代", "20世纪90年代"
        # (not a name that begins with one: "the 90's Music playlist")
        (r"\b(?:the\s+)?((?:1[5-9]|20)\d0)['’]?s\b(?!\s+(?-i:[A-Z]))", lambda m, t: _decade(int(m[1]))),
        (r"\bthe\s+['’]?([0-9]0)['’]?s\b(?!\s+(?-i:[A-Z]))", lambda m, t: _decade(_two_digit_year(int(m[1]), t))),
        (r"(?:(1[5-9]|20)世纪)?((?:1[5-9]|20)?\d0)年代", lambda m, t: _decade_zh(m[1], m[2], t)),
        # years
        (r"(?<!\d)(\d{4})\s*年度?", lambda m, t: _Spec(_year(int(m[1])), "year")),
        (
            # "in 2013." ends a sentence; "2013.5" no year; "2015-2020" two years (a range, merged below)
            r"(?<![\d/.])(?:(?<!-)|(?<=(?:19|20)\d\d-))((?:19|20)\d{2})(?![\d/]|-(?!(?:19|20)\d\d(?!\d))|\.\d)",
            lambda m, t: None if _is_amount(m) else _Spec(_year(int(m[1])), "year"),
        ),
    ]


def _recent_rules() -> list[RawRule]:
    """Periods relative to today: bare months, quarters and halves (the most recent), the same period last
    year, rolling windows and named relative periods."""
    return [
        # bare months/quarters/halves (most recent)
        (
            rf"(?<![\d年个第近前后])({_CN_MONTH})\s*月份?(?![\d日号])",
            lambda m, t: _month_spec(None, parse_number(m[1]) or 0, t),
        ),
        (rf"\b({_MONTH_NAMES})\b", lambda m, t: _month_spec(None, MONTHS[m[1].lower()], t)),
        (r"\b(?:in|for|during|since|of|until)\s+(may)\b", lambda m, t: _month_spec(None, 5, t)),
        (rf"(?<![\d年上本这])(?<!上个){_QUARTER_ZH}", lambda m, t: _quarter_spec(None, parse_number(m[1]) or 1, t)),
        (r"\bQ([1-4])\b", lambda m, t: _quarter_spec(None, int(m[1]), t)),
        (r"(?<![\d年])([上下])半年", lambda m, t: _half_recent(m[1] == "上", t)),
        # same period last year (marker)
        (
            r"去年同期|上年同期|去年同月|去年同季度|同期|same (?:period|time|day|week|month|quarter) (?:of )?last year|"
            r"same (?:period|day|week|month|quarter) a year (?:ago|earlier)",
            lambda m, t: _Spec(None, None, marker=YOY_MARKER),
        ),
        # rolling windows
        (
            rf"(?:最近|近|过去|前|最后)\s*({_NUM})\s*(天|日|周|个?星期|个?礼拜|个?月|个?季度|年)",
            lambda m, t: _rolling(parse_number(m[1]), _UNIT_ZH[m[2].lstrip("个")], t),
        ),
        (
            rf"\b(?:the\s+)?(?:last|past|previous|recent|trailing|rolling)\s+({_NUM})\s+(day|week|month|quarter|year)s?\b",
            lambda m, t: _rolling(parse_number(m[1]), m[2].lower(), t),
        ),
        (r"\b(?:the\s+)?past\s+(day|week|month|quarter|year)\b", lambda m, t: _rolling(1, m[1].lower(), t)),
        # relative periods
        (_alternation(_REL_ZH), lambda m, t: _relative_said(m[0], _REL_ZH, t)),
        (rf"\b(?:{_alternation(_REL_EN)})\b", lambda m, t: _relative_said(m[0].lower(), _REL_EN, t)),
    ]


_AMOUNT_BEFORE = re.compile(
    r"(?:more|greater|higher|larger|bigger|less|fewer|lower|smaller)\s+than\s*$|(?:over|above|under|below|exceeding|"
    r"exceeds?|at\s+least|at\s+most|min(?:imum)?|max(?:imum)?|up\s+to|>=?|<=?|=|[$€£¥￥]|rmb|usd|cny|eur)\s*$|"
    r"(?:超过|大于|高于|多于|少于|小于|低于|不足|至少|不少于|不超过|达到|满)\s*$",
    re.IGNORECASE,
)
_AMOUNT_AFTER = re.compile(
    r"^(?:\+|\s*(?:元|块|美元|欧元|dollars?|euros?|yuan|rmb|usd|cny|eur|bucks|以上|以下|多|or\s+(?:more|less|above|"
    r"below|over|under)|and\s+(?:above|up|over|below|under)|units?|items?|pieces?|件|个|笔|单|次|%))",
    re.IGNORECASE,
)


def _is_amount(m: re.Match[str]) -> bool:
    """A year-like number next to comparison, currency or unit words is an amount ("claims over 2000",
    "2000元以上"), not a year."""
    return bool(_AMOUNT_BEFORE.search(m.string[: m.start(1)]) or _AMOUNT_AFTER.search(m.string[m.end(1) :]))


def _half_recent(first: bool, today: date) -> _Spec:
    year = today.year if first or today.month >= 7 else today.year - 1
    return _Spec(_half(year, 1 if first else 2), "quarter", False, lambda y: _half(y, 1 if first else 2))


_RULES = _rules()
_RANGE_JOIN = re.compile(r"^\s*(?:to|through|thru|until|till|-|–|—|~|到|至|and|和|与)\s*$", re.IGNORECASE | re.ASCII)
_BETWEEN_BEFORE = re.compile(r"(?:between|介于)\s*$", re.IGNORECASE | re.ASCII)
_AND_WORDS = {"and", "和", "与"}
CHANGE = re.compile(
    r"\b(?:growth|grow|grew|grown|change[ds]?|increase[ds]?|decrease[ds]?|decline[ds]?|"
    r"drop(?:ped)?|rise|rose|fell|fall)\b|增长|增幅|增速|变化|涨幅|跌幅|下降|下滑|上升|涨了?|跌了?",
    re.IGNORECASE | re.ASCII,
)
_SINCE_BEFORE = re.compile(
    r"\b(?:since|starting|from)\s+(?:the\s+)?(?:start|beginning)\s+of\s+$|"
    r"\b(?:since|starting)\s*$|自\s*$",
    re.IGNORECASE | re.ASCII,
)
# "2013年11月起": from then on; "起飞" (take off), "起来", "起草" are other words
_SINCE_AFTER = re.compile(
    r"^\s*(?:以来|至今|到现在|到今天|起至今|开始|起(?![飞来草降])|onwards?|on(?=\s*(?:[,.?!;，。？]|$))|"
    r"to date|until now|so far)"
)
# open-ended periods: "before 2024", "until June", "after March", "2012 or later", "2024年以前"
EARLIEST = date(1000, 1, 1)  # open before a date: every date a warehouse may hold (the databank starts in 1871)
_OPEN_BEFORE = re.compile(
    r"\b(?:(before|prior to|earlier than)|(until|till|up until|no later than)|"
    r"(after|later than))\s*(?:the\s+)?$",
    re.IGNORECASE | re.ASCII,
)
_OPEN_AFTER = re.compile(
    r"^\s*(?:(以前|之前|前的)|(or earlier|or before|and earlier|及以前)|"
    r"(or later|or after|and later|or newer|and after|以后|之后|及以后))",
    re.IGNORECASE,
)


def _atoms(text: str, today: date) -> list[_Atom]:
    found: list[_Atom] = []
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            spec = handler(m, today)
            if spec is not None:
                found.append(_Atom(m.start(), m.end(), spec))
    # longest match wins; earlier rules win ties (sort is stable)
    found.sort(key=lambda a: a.end - a.start, reverse=True)
    chosen: list[_Atom] = []
    for atom in found:
        if all(atom.end <= c.start or atom.start >= c.end for c in chosen):
            chosen.append(atom)
    return sorted(chosen, key=lambda a: a.start)


_YEAR_WORDS = re.compile(r"^(?:this|last|previous|next)\s+year$|^(?:今年|去年|前年|本年|上一?年)$", re.IGNORECASE)
_GAP_WORDS = re.compile(
    r"^(?:\s*\b(?!vs\b|versus\b|compared\b|than\b|and\b|or\b|against\b)[a-z]+\b)"
    r"{1,3}\s*$",
    re.IGNORECASE,
)


def _anchored(atoms: list[_Atom], text: str) -> list[_Atom]:
    """ "Q4 sales this year": a year-less quarter/month/half a few words before "this/last year" is in that
    year; the year's words only date it (a marker, not a range of its own)."""
    for atom, nxt in itertools.pairwise(atoms):
        spec, year = atom.spec, nxt.spec
        if spec.explicit_year or spec.rebase is None or year.bounds is None or year.marker:
            continue
        if not _YEAR_WORDS.match(text[nxt.start : nxt.end].strip()) or not _GAP_WORDS.match(text[atom.end : nxt.start]):
            continue
        atom.spec = _Spec(spec.rebase(year.bounds[0].year), spec.grain, True, inherited=True)
        nxt.spec = _Spec(None, None, marker="year-of-period")
    return atoms


def _with_years(atoms: list[_Atom]) -> list[_Atom]:
    """Year-less months/quarters take the year of the nearest atom naming one ("March vs April 2024")."""
    dated = [a for a in atoms if a.spec.bounds is not None and a.spec.explicit_year and a.spec.grain != "year"]
    for atom in atoms:
        spec = atom.spec
        if spec.explicit_year or spec.rebase is None or not dated:
            continue
        nearest = min(dated, key=lambda a: abs(a.start - atom.start))
        assert nearest.spec.bounds is not None
        atom.spec = _Spec(spec.rebase(nearest.spec.bounds[0].year), spec.grain, True, inherited=True)
    return atoms


def _finer(a: Granularity | None, b: Granularity | None) -> Granularity | None:
    ranks = [GRAIN_ORDER.index(g) for g in (a, b) if g]
    return GRAIN_ORDER[min(ranks)] if ranks else None


def _match_end(m: re.Match[str] | None) -> int:
    return m.end() if m else 0


def extract_time(text: str, today: date) -> TimeParse:
    """All time expressions of ``text`` (normalised) as inclusive ranges, plus markers."""
    atoms = _with_years(_anchored(_atoms(text, today), text))
    result = TimeParse()
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        spec = atom.spec
        result.spans.append((atom.start, atom.end))
        if spec.marker:
            result.markers.add(spec.marker)
            i += 1
            continue
        assert spec.bounds is not None
        start, end = spec.bounds
        span_end, grain = atom.end, spec.grain
        nxt = atoms[i + 1] if i + 1 < len(atoms) else None
        joined = _joined_end(text, atom, nxt) if nxt is not None else None
        if joined is not None and nxt is not None:
            end, span_end, grain = joined, nxt.end, _finer(grain, nxt.spec.grain)
            result.spans.append((nxt.start, nxt.end))
            i += 1
        compared = nxt is not None and joined is None and CHANGE.search(text) is not None
        phrase = text[atom.start : span_end]
        since = _SINCE_BEFORE.search(text[: atom.start]) if joined is None and not compared else None
        until_now = _SINCE_AFTER.match(text[span_end:]) if joined is None and not compared else None
        if since or until_now:
            end = max(end, today) if start <= today else end
            # the label says the range runs to today: "since 2024", "2024年以来"
            phrase = text[since.start() : span_end] if since else text[atom.start : span_end + _match_end(until_now)]
        elif joined is None and not compared and (opened := _open_ended(text, atom.start, span_end, start, end, today)):
            start, end, phrase = opened
            at = text.find(phrase, max(0, atom.start - len(phrase)))
            result.spans.append((at, at + len(phrase)))
        label = _labelled(phrase, start, grain) if spec.inherited and not re.search(r"\d{4}", phrase) else phrase
        if not _restated(text, atom, result.ranges, (start, end)):
            result.ranges.append(TimeRange(start, end, label, grain, phrase))
        i += 1
    return result


def _restated(text: str, atom: _Atom, ranges: list[TimeRange], bounds: Bounds) -> bool:
    """ "the first week of June 1998 (June 1-7)": a period in parentheses that is the one just said restates it."""
    before = text[: atom.start].rstrip()
    return bool(ranges) and before.endswith(("(", "（")) and (ranges[-1].start, ranges[-1].end) == bounds


def _open_ended(
    text: str, at: int, span_end: int, start: date, end: date, today: date
) -> tuple[date, date, str] | None:
    """(start, end, phrase) of a period said open on one side: "before 2024" ends the day before it,
    "until June" at its end, "after March" starts the day after it, "2012 or later" runs from it to today."""
    before = _OPEN_BEFORE.search(text[:at])
    after = _OPEN_AFTER.match(text[span_end:])
    if before:
        phrase = text[before.start() : span_end]
        if before.group(1):
            return EARLIEST, start - timedelta(days=1), phrase
        if before.group(2):
            return EARLIEST, end, phrase
        return end + timedelta(days=1), max(today, end + timedelta(days=1)), phrase
    if after:
        phrase = text[at : span_end + after.end()]
        if after.group(1):
            return EARLIEST, start - timedelta(days=1), phrase
        if after.group(2):
            return EARLIEST, end, phrase
        return start, max(today, end), phrase
    return None


def _labelled(phrase: str, start: date, grain: Granularity | None) -> str:
    """A period whose year the phrase does not say, labelled with it: "Q4 2011", "March 2010", "Q4 last
    year" -> "Q4 2010"."""
    chinese = bool(re.search(r"[\u3400-\u9fff]", phrase))
    if grain == "quarter" and start.month in (1, 4, 7, 10) and re.search(r"(?i)q[1-4]|第?[一二三四1-4]季度", phrase):
        return f"{start.year}年第{quarter_of(start)}季度" if chinese else f"Q{quarter_of(start)} {start.year}"
    if grain == "month":
        return f"{start.year}年{start.month}月" if chinese else f"{start.strftime('%B')} {start.year}"
    if re.search(r"(?i)\b(?:this|last|previous|next)\s+year|今年|去年|前年|本年|上一?年", phrase):
        return phrase  # "今年上半年" says its year
    return f"{start.year}年{phrase}" if chinese else f"{phrase} {start.year}"


def _joined_end(text: str, first: _Atom, second: _Atom) -> date | None:
    """The end date when ``first`` and ``second`` form one range ("X to Y", "between X and Y")."""
    between = text[first.end : second.start]
    if second.spec.bounds is None or first.spec.bounds is None or not _RANGE_JOIN.match(between):
        return None
    if between.strip().lower() in _AND_WORDS and not (
        _BETWEEN_BEFORE.search(text[: first.start]) or text[second.end :].lstrip().startswith("之间")
    ):
        return None
    if first.spec.grain == second.spec.grain and CHANGE.search(text):
        return None  # "growth from 2023 to 2024": two periods to compare, not one span
    other = second.spec
    bounds = other.bounds if other.explicit_year or other.rebase is None else other.rebase(first.spec.bounds[0].year)
    assert bounds is not None
    return bounds[1] if bounds[1] >= first.spec.bounds[0] else None

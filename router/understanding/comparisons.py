"""Comparisons: year over year ("同比", "YoY", "去年同期", "vs last year", "比去年"), period over period
("环比", "MoM", "the quarter before"),
explicit ranges ("2024 vs 2023", "3月和4月对比"; any question naming two separate ranges) and members
("compare 德国 and 法国": a comparison word with fewer than two ranges).

With YoY/PoP and no time range in the question the current period is assumed: this year to date for
YoY, this month to date for PoP (documented choice).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from router.understanding._calendar import previous_period, shift_range
from router.understanding.timeexpr import CHANGE
from router.understanding.types import Comparison, Granularity, TimeRange

_YOY = re.compile(
    r"\b(?:vs\.?|versus|compared (?:to|with)|than|over|from|against) last year\b|"
    r"比去年|较去年|与去年相比|和去年相比|跟去年比|同比|year[\s-]+over[\s-]+year|\byoy\b|\by/y\b|"
    r"vs\.? (?:the )?same (?:period|day|week|month|quarter)|"
    r"compared (?:to|with) (?:the )?same (?:period|day|week|month|quarter)|去年同期|上年同期|去年同月",
    re.IGNORECASE | re.ASCII,
)
# words that compare like periods: the current one is cut at today ("this year vs last year" compares the two
# calendar years as said)
_SAME_PERIOD = re.compile(r"同比|同期|同月|same|year[\s-]+over[\s-]+year|\byoy\b|\by/y\b", re.IGNORECASE)
_POP = re.compile(
    r"环比|period[\s-]+over[\s-]+period|month[\s-]+over[\s-]+month|quarter[\s-]+over[\s-]+quarter|"
    r"week[\s-]+over[\s-]+week|\bmom\b|\bqoq\b|\bwow\b|previous period|prior period|上期|上一期|"
    r"\b(?:the )?(?:day|week|month|quarter|year) before\b(?! last)|"
    r"\bprior (?:day|week|month|quarter|year)\b",
    re.IGNORECASE | re.ASCII,
)
_VERSUS = re.compile(
    r"\bvs\.?\b|\bversus\b|\bcompar(?:e|ed|ing|ison)\b|\bagainst\b|"
    r"对比|比较|相比|相较|比一比|与.{1,12}比|和.{1,12}比",
    re.IGNORECASE | re.ASCII,
)


_LABELS = {
    "en": {"yoy": "same period last year", "pop": "previous period", "year": "year to date", "month": "month to date"},
    "zh": {"yoy": "去年同期", "pop": "上期", "year": "今年至今", "month": "本月至今"},
}
# "month over month this year": a monthly series, not this year against the year before
_POP_GRAIN = re.compile(
    r"\b(day|week|month|quarter)[\s-]+over[\s-]+\1\b|\b(mom|wow|qoq)\b|(环比)", re.IGNORECASE | re.ASCII
)
_GRAIN_OF: dict[str, Granularity] = {
    "day": "day",
    "week": "week",
    "month": "month",
    "quarter": "quarter",
    "mom": "month",
    "wow": "week",
    "qoq": "quarter",
}


def pop_series_grain(text: str, ranges: list[TimeRange]) -> Granularity | None:
    """The grain of a period-over-period question over a longer range ("month over month this year" ->
    month): the question wants that series; None when the range is one period of the grain."""
    m = _POP_GRAIN.search(text)
    if m is None or not ranges or m.group(3):
        return None
    grain = _GRAIN_OF[(m.group(1) or m.group(2)).lower()]
    days = (ranges[0].end - ranges[0].start).days + 1
    longest = {"day": 1, "week": 7, "month": 31, "quarter": 92}[grain]
    return grain if days > longest else None


def extract_comparison(
    text: str, ranges: list[TimeRange], markers: set[str], today: date, language: str = "en"
) -> Comparison | None:
    """The comparison asked for, with its ranges (current period first; labels in the question's language)."""
    labels = _LABELS.get(language, _LABELS["en"])
    if (m := _YOY.search(text)) or "yoy" in markers:
        # "turnover growth vs last year": "last year" names the comparison, not the current period
        own = [r for r in ranges if not (m and r.phrase and r.phrase.lower() in m.group(0).lower())]
        current = own[0] if own else _default(today, "year", labels)
        if _SAME_PERIOD.search(m.group(0) if m else "yoy") and current.start <= today < current.end:
            current = replace(current, end=today)  # "今年营收同比": this year to date against the same days
        start, end = shift_range(current.start, current.end, -12)
        label = labels["yoy"]
        return Comparison(
            "yoy",
            (current, TimeRange(start, end, label, current.granularity)),
            m.group(0) if m else "same period last year",
        )
    if (m := _POP.search(text)) and not pop_series_grain(text, ranges):
        current = ranges[0] if ranges else _default(today, "month", labels)
        start, end = previous_period(current.start, current.end, current.granularity)
        return Comparison("pop", (current, TimeRange(start, end, labels["pop"], current.granularity)), m.group(0))
    m = _VERSUS.search(text)
    if len({(r.start, r.end) for r in ranges}) >= 2:  # "this year ... this year" names one period, compares none
        if not m and (change := CHANGE.search(text)):
            # "growth from 2023 to 2024": the later period is the current one
            return Comparison("versus", tuple(sorted(ranges, key=lambda r: r.start, reverse=True)), change.group(0))
        return Comparison("versus", tuple(ranges), m.group(0) if m else "")
    if m:
        return Comparison("members", tuple(ranges), m.group(0))
    return None


def _default(today: date, grain: str, labels: dict[str, str]) -> TimeRange:
    if grain == "year":
        return TimeRange(date(today.year, 1, 1), today, labels["year"], "year")
    return TimeRange(today.replace(day=1), today, labels["month"], "month")

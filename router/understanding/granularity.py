"""Time granularity asked for: "by month", "按月", "每周", "daily", "the busiest day", "最忙的一天".

"which day of the week", "by month of the year" name a cycle (a day-of-week or month-of-year column the
model may have), not a grain.

"trend"/"趋势" without a grain means month (day when the range is shorter than two months).
"""

from __future__ import annotations

import re

from router.understanding.types import Granularity, TimeRange

_GRAIN_PATTERNS: list[tuple[Granularity, str]] = [
    (
        "day",
        r"\b(?:by|per|each|every)\s+day\b(?!\s+of\b)|\bdaily\b|\bday by day\b|\bday-over-day\b|"
        r"\bwhich (?:day|date)\b(?!\s+of\b)|哪一?天|哪个日子|"
        r"按天|按日(?!期)|每天|每日(?!期)|逐日|日度|分天|每一天",
    ),
    (
        "week",
        r"\b(?:by|per|each|every)\s+week\b|\bweekly\b|\bweek by week\b|"
        r"\bwhich week\b|哪一?周|哪个星期|"
        r"按周|每周|逐周|周度|分周|每个星期|每星期",
    ),
    (
        "month",
        r"\b(?:by|per|each|every)\s+month\b(?!\s+of\b)|\bmonthly\b|\bmonth by month\b|"
        r"\bwhich month\b(?!\s+of\b)|哪个月|哪一个?月|"
        r"按月份?|每月|逐月|月度|分月|每个月|各月份?|月份分布",
    ),
    (
        "quarter",
        r"\b(?:by|per|each|every)\s+quarter\b|\bquarterly\b|"
        r"\bwhich quarter\b|哪个季度|哪一季度?|"
        r"按季度?|每季度?|逐季|季度分布|分季度|各季度|每个季度",
    ),
    (
        "year",
        r"\b(?:by|per|each|every)\s+year\b|\byearly\b|\bannual(?:ly)?\b|\byear by year\b|"
        r"\bwhich year\b|哪一?年|"
        r"按年份?|按年度|每年|逐年|年度分布|分年|各年份?|各年度",
    ),
]
# "the single worst day of 2013", "our best month ever", "最忙的一天": a superlative of one period ranks periods
_BEST = r"(?:best|worst|busiest|quietest|slowest|highest|lowest|biggest|strongest|weakest|peak|record)"
_CYCLE = r"(?!\s+of\s+(?:the\s+)?(?:week|month|year)\b)"
_SUPERLATIVE_GRAIN: dict[Granularity, str] = {
    "day": rf"\b{_BEST}\s+(?:single\s+)?(?:day|date)\b{_CYCLE}|最\S{{1,4}}的(?:一天|那天|日子)",
    "week": rf"\b{_BEST}\s+(?:single\s+)?week\b|最\S{{1,4}}的(?:一周|那周)",
    "month": rf"\b{_BEST}\s+(?:single\s+)?month\b{_CYCLE}|最\S{{1,4}}的(?:月份|一个月|那个月)",
    "quarter": rf"\b{_BEST}\s+(?:single\s+)?quarter\b|最\S{{1,4}}的季度",
    "year": rf"\b{_BEST}\s+(?:single\s+)?year\b|最\S{{1,4}}的(?:年份|一年)",
}
# "which 5 days had the most ...", "the 3 busiest months", "top 10 dates": N periods ranked
_N = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten)"
_WORD: dict[Granularity, str] = {
    "day": "(?:day|date)",
    "week": "week",
    "month": "month",
    "quarter": "quarter",
    "year": "year",
}
_RANKED_GRAINS: dict[Granularity, str] = {
    grain: rf"\b(?:which|what|the|top)\s+{_N}\s+(?:{_BEST}\s+)?{word}s\b{_CYCLE}" for grain, word in _WORD.items()
}
_COMPILED = [
    (grain, re.compile(f"{pattern}|{_SUPERLATIVE_GRAIN[grain]}|{_RANKED_GRAINS[grain]}", re.IGNORECASE | re.ASCII))
    for grain, pattern in _GRAIN_PATTERNS
]
_TREND = re.compile(
    r"\btrends?\b|\bover time\b|\btime series\b|\btrajectory\b|"
    r"趋势|走势|变化情况|变化趋势",
    re.IGNORECASE | re.ASCII,
)
SHORT_RANGE_DAYS = 62


def extract_granularity(text: str, primary: TimeRange | None) -> tuple[Granularity | None, list[tuple[int, int]]]:
    """The granularity asked for and the spans of the words that asked for it."""
    for grain, pattern in _COMPILED:
        if found := [m.span() for m in pattern.finditer(text)]:  # "每年...？按年份列出": every span said
            return grain, found
    if m := _TREND.search(text):
        short = primary is not None and (primary.end - primary.start).days < SHORT_RANGE_DAYS
        return ("day" if short else "month"), [m.span()]
    return None, []

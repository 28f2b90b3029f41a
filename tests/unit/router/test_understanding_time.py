"""Time expressions in English and Chinese, resolved against a fixed today (2025-06-30, a Monday)."""

from __future__ import annotations

from datetime import date

import pytest

from router.understanding import understand
from router.understanding.language import normalize
from router.understanding.timeexpr import YOY_MARKER, extract_time

TODAY = date(2025, 6, 30)

CASES = [
    ("GMV last quarter", "2025-01-01", "2025-03-31", "quarter"),
    ("GMV this month", "2025-06-01", "2025-06-30", "month"),
    ("2024年3月华东GMV", "2024-03-01", "2024-03-31", "month"),
    ("本月订单量", "2025-06-01", "2025-06-30", "month"),
    ("上个月的退款率", "2025-05-01", "2025-05-31", "month"),
    ("上月GMV", "2025-05-01", "2025-05-31", "month"),
    ("去年销售额", "2024-01-01", "2024-12-31", "year"),
    ("今年销售额", "2025-01-01", "2025-12-31", "year"),  # the calendar year
    ("今年以来销售额", "2025-01-01", "2025-06-30", "year"),  # ... to date
    ("前年GMV", "2023-01-01", "2023-12-31", "year"),
    ("YTD revenue", "2025-01-01", "2025-06-30", "year"),
    ("year to date revenue", "2025-01-01", "2025-06-30", "year"),
    ("orders in the last 7 days", "2025-06-24", "2025-06-30", "day"),
    ("最近30天订单", "2025-06-01", "2025-06-30", "day"),
    ("近三个月GMV", "2025-04-01", "2025-06-30", "month"),
    ("last 12 months GMV", "2024-07-01", "2025-06-30", "month"),
    ("最近两周", "2025-06-17", "2025-06-30", "week"),
    ("GMV in Q1 2024", "2024-01-01", "2024-03-31", "quarter"),
    ("2024 Q4 GMV", "2024-10-01", "2024-12-31", "quarter"),
    ("2024年第一季度GMV", "2024-01-01", "2024-03-31", "quarter"),
    ("2024年Q2订单", "2024-04-01", "2024-06-30", "quarter"),
    ("去年第四季度", "2024-10-01", "2024-12-31", "quarter"),
    ("Q1 last year", "2024-01-01", "2024-03-31", "quarter"),
    ("一季度GMV", "2025-01-01", "2025-03-31", "quarter"),
    ("Q3 GMV", "2024-07-01", "2024-09-30", "quarter"),
    ("GMV in 2024", "2024-01-01", "2024-12-31", "year"),
    ("2023年的订单量", "2023-01-01", "2023-12-31", "year"),
    ("March 2024 GMV", "2024-03-01", "2024-03-31", "month"),
    ("GMV in Mar 2024", "2024-03-01", "2024-03-31", "month"),
    ("GMV for 2024-03", "2024-03-01", "2024-03-31", "month"),
    ("3月GMV", "2025-03-01", "2025-03-31", "month"),
    ("9月的GMV", "2024-09-01", "2024-09-30", "month"),
    ("三月份订单", "2025-03-01", "2025-03-31", "month"),
    ("去年3月", "2024-03-01", "2024-03-31", "month"),
    ("GMV in May", "2025-05-01", "2025-05-31", "month"),
    ("between 2024-01-01 and 2024-03-31", "2024-01-01", "2024-03-31", "day"),
    ("from Jan 2024 to March 2024", "2024-01-01", "2024-03-31", "month"),
    ("2024年1月到3月", "2024-01-01", "2024-03-31", "month"),
    ("2024年1月至2024年6月", "2024-01-01", "2024-06-30", "month"),
    ("since March 2025", "2025-03-01", "2025-06-30", "month"),
    ("2025年3月以来", "2025-03-01", "2025-06-30", "month"),
    ("2025年3月起飞的航班", "2025-03-01", "2025-03-31", "month"),
    ("cancelled on 3/8/2025", "2025-03-08", "2025-03-08", "day"),
    ("orders on 25/3/2025", "2025-03-25", "2025-03-25", "day"),
    ("2024年上半年", "2024-01-01", "2024-06-30", "quarter"),
    ("H2 2024", "2024-07-01", "2024-12-31", "quarter"),
    ("yesterday", "2025-06-29", "2025-06-29", "day"),
    ("今天", "2025-06-30", "2025-06-30", "day"),
    ("上周", "2025-06-23", "2025-06-29", "week"),
    ("this week", "2025-06-30", "2025-06-30", "week"),
    ("March 15, 2024", "2024-03-15", "2024-03-15", "day"),
    ("2024年3月15日", "2024-03-15", "2024-03-15", "day"),
    ("２０２４年３月", "2024-03-01", "2024-03-31", "month"),  # full-width digits
    ("win pct each season 2015-2020", "2015-01-01", "2020-12-31", "year"),  # two years joined by a dash
    ("wins 2015–2020", "2015-01-01", "2020-12-31", "year"),
    ("orders 2013-05", "2013-05-01", "2013-05-31", "month"),  # a year and a month, not two years
]


@pytest.mark.parametrize(("text", "start", "end", "grain"), CASES)
def test_time_expressions(text: str, start: str, end: str, grain: str) -> None:
    ranges = extract_time(normalize(text), TODAY).ranges
    assert len(ranges) == 1, ranges
    assert (ranges[0].start.isoformat(), ranges[0].end.isoformat(), ranges[0].granularity) == (start, end, grain)


def test_today_is_configurable() -> None:
    ranges = extract_time("last month", date(2024, 1, 15)).ranges
    assert (ranges[0].start, ranges[0].end) == (date(2023, 12, 1), date(2023, 12, 31))
    ranges = extract_time("3月", date(2024, 2, 10)).ranges
    assert ranges[0].start == date(2023, 3, 1)


@pytest.mark.parametrize(
    "text", ["May I see the GMV?", "前10名产品", "top 5 products", "GMV by region", "show order 12345"]
)
def test_no_false_time_expressions(text: str) -> None:
    assert extract_time(normalize(text), TODAY).ranges == []


def test_two_periods_and_year_inheritance() -> None:
    ranges = extract_time("GMV March vs April 2024", TODAY).ranges
    assert [(r.start, r.end) for r in ranges] == [
        (date(2024, 3, 1), date(2024, 3, 31)),
        (date(2024, 4, 1), date(2024, 4, 30)),
    ]
    ranges = extract_time("2024 vs 2023", TODAY).ranges
    assert [r.start.year for r in ranges] == [2024, 2023]


def test_same_period_last_year_is_a_marker_not_a_range() -> None:
    parsed = extract_time("今年GMV和去年同期相比", TODAY)
    assert YOY_MARKER in parsed.markers  # the range is the calendar year: the comparison cuts it
    assert [(r.start, r.end) for r in parsed.ranges] == [(date(2025, 1, 1), date(2025, 12, 31))]


def test_understanding_carries_ranges_and_labels() -> None:
    u = understand("What was GMV in East China in March 2024?", TODAY)
    assert u.time_range is not None and u.time_range.date_range() == ["2024-03-01", "2024-03-31"]
    assert u.time_range.label == "March 2024"


@pytest.mark.parametrize("question", ["GMV growth from 2023 to 2024", "2023到2024年GMV增长了多少"])
def test_a_change_between_two_periods_compares_them(question: str) -> None:
    u = understand(question, TODAY)
    assert u.comparison is not None and u.comparison.kind == "versus"
    current, before = u.comparison.ranges
    assert (current.start, current.end) == (date(2024, 1, 1), date(2024, 12, 31))  # the later one is current
    assert (before.start, before.end) == (date(2023, 1, 1), date(2023, 12, 31))  # not "since 2023"


def test_a_span_without_a_change_word_stays_one_range() -> None:
    u = understand("GMV from 2023 to 2024", TODAY)
    assert [(r.start, r.end) for r in u.time_ranges] == [(date(2023, 1, 1), date(2024, 12, 31))]
    assert u.comparison is None


@pytest.mark.parametrize(
    ("question", "label"), [("since 2024 GMV by channel", "since 2024"), ("2024年以来各渠道GMV", "2024年以来")]
)
def test_a_range_running_to_today_says_so(question: str, label: str) -> None:
    tr = understand(question, TODAY).time_range
    assert tr is not None and (tr.start, tr.end, tr.label) == (date(2024, 1, 1), TODAY, label)


@pytest.mark.parametrize("question", ["GMV this month vs the same month last year", "本月GMV和去年同月对比"])
def test_the_same_month_last_year_is_a_yoy_comparison(question: str) -> None:
    u = understand(question, TODAY)
    assert u.comparison is not None and u.comparison.kind == "yoy"
    current, before = u.comparison.ranges
    assert (before.start, before.end) == (date(2024, 6, 1), date(2024, 6, 30))
    assert (current.start, current.end) == (date(2025, 6, 1), TODAY)


def test_month_over_month_over_a_longer_range_is_a_monthly_series() -> None:
    series = understand("how did GMV change month over month this year?", TODAY)
    assert series.granularity == "month" and series.comparison is None
    single = understand("GMV this month month over month", TODAY)
    assert single.comparison is not None and single.comparison.kind == "pop"
    assert [r.label for r in single.comparison.ranges][1] == "previous period"


def test_the_compared_year_is_labelled_as_such() -> None:
    u = understand("What's our refund rate this year compared to last year?", TODAY)
    assert u.comparison is not None and [r.label for r in u.comparison.ranges] == ["this year", "same period last year"]


@pytest.mark.parametrize(
    "question",
    [
        "refunds over 2000 in May 2025",
        "payments above $2000 in May 2025",
        "2000元以上的支付记录 2025年5月",
        "orders with more than 2000 units in May 2025",
    ],
)
def test_a_year_like_number_next_to_comparison_currency_or_unit_words_is_an_amount(question: str) -> None:
    ranges = extract_time(normalize(question), TODAY).ranges
    assert [(r.start, r.end) for r in ranges] == [(date(2025, 5, 1), date(2025, 5, 31))]


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("orders placed before 2024", "1000-01-01", "2023-12-31"),
        ("orders until June 2024", "1000-01-01", "2024-06-30"),
        ("orders after March 2024", "2024-04-01", "2025-06-30"),
        ("planes built in 2012 or later", "2012-01-01", "2025-06-30"),
        ("2024年以前的订单", "1000-01-01", "2023-12-31"),
        ("2024年以后的订单", "2024-01-01", "2025-06-30"),
    ],
)
def test_a_period_open_on_one_side(question: str, start: str, end: str) -> None:
    """ "before 2024" is not the year 2024: the period runs from the earliest day or to today."""
    (found,) = understand(question, TODAY).time_ranges
    assert (found.start.isoformat(), found.end.isoformat()) == (start, end)


def test_a_holiday_is_its_day_of_the_year_said_or_the_latest_one() -> None:
    from router.understanding.timeexpr import extract_time

    said = extract_time("flights on Christmas Day 2012", date(2014, 1, 1)).ranges[0]
    latest = extract_time("orders on New Year's Eve", date(2014, 6, 1)).ranges[0]
    zh = extract_time("2013年圣诞节的航班", date(2014, 1, 1)).ranges[0]
    assert (said.start, said.end) == (date(2012, 12, 25), date(2012, 12, 25))
    assert latest.start == date(2013, 12, 31) and zh.start == date(2013, 12, 25)
    assert not extract_time("the Christmas album", date(2014, 1, 1)).ranges  # alone it may be a title


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("lines shipped June 1-7, 1998", "1998-06-01", "1998-06-07"),
        ("lines shipped 1-7 June 1998", "1998-06-01", "1998-06-07"),
        ("the first week of June 1998", "1998-06-01", "1998-06-07"),
        ("the second week of March 2024", "2024-03-08", "2024-03-14"),
        ("the last week of 2013", "2013-12-25", "2013-12-31"),
    ],
)
def test_days_of_a_month_and_the_nth_week_of_a_period(text: str, start: str, end: str) -> None:
    ranges = extract_time(text, date(2025, 6, 30)).ranges
    assert [(str(r.start), str(r.end)) for r in ranges] == [(start, end)]


def test_a_period_restated_in_parentheses_is_one_period() -> None:
    ranges = extract_time("in the first week of June 1998 (June 1-7)", date(2025, 6, 30)).ranges
    assert len(ranges) == 1


def test_a_quarter_with_a_two_digit_year_is_the_latest_such_year_no_later_than_twenty_years_ahead() -> None:
    found = [(t.start, t.end) for t in extract_time("AOV Q1 97 vs Q1 96", date(1998, 8, 2)).ranges]
    assert found == [(date(1997, 1, 1), date(1997, 3, 31)), (date(1996, 1, 1), date(1996, 3, 31))]
    assert [t.start for t in extract_time("revenue in Q3 '24", TODAY).ranges] == [date(2024, 7, 1)]


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("home runs in the 1990s", "1990-01-01", "1999-12-31"),
        ("hits in the '90s", "1990-01-01", "1999-12-31"),
        ("20世纪90年代的本垒打", "1990-01-01", "1999-12-31"),
        ("stolen bases from the 1900s through the 2010s", "1900-01-01", "2019-12-31"),
        ("home runs from the 1950s on?", "1950-01-01", "2021-01-01"),
    ],
)
def test_decades_and_from_then_on(text: str, start: str, end: str) -> None:
    ranges = extract_time(text, date(2021, 1, 1)).ranges
    assert [(r.start.isoformat(), r.end.isoformat()) for r in ranges] == [(start, end)]


def test_a_name_that_begins_with_a_decade_is_no_period() -> None:
    assert extract_time("artists on the 90's Music playlist", TODAY).ranges == []

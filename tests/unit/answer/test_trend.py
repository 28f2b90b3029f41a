"""The trend behind a single number: the same query by the period's granularity over the periods before it."""

from __future__ import annotations

import pytest

from answer.trend import trend_of, trend_query

GMV_EAST = {
    "measures": ["order_items.gmv"],
    "filters": [{"member": "regions.region_code", "operator": "equals", "values": ["east"]}],
}


def ranged(start: str, end: str) -> dict:
    return {**GMV_EAST, "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": [start, end]}]}


def no_time(measure: str) -> str | None:
    return "orders.order_ts" if measure == "order_items.gmv" else None


@pytest.mark.parametrize(
    ("start", "end", "grain", "window", "whole"),
    [
        ("2025-06-01", "2025-06-30", "month", ["2024-07-01", "2025-06-30"], True),
        ("2025-06-01", "2025-06-15", "month", ["2024-07-01", "2025-06-15"], False),  # month to date
        ("2025-01-01", "2025-03-31", "quarter", ["2023-04-01", "2025-03-31"], True),
        ("2024-01-01", "2024-12-31", "year", ["2020-01-01", "2024-12-31"], True),
        ("2025-01-01", "2025-06-30", "year", ["2021-01-01", "2025-06-30"], False),  # this year so far
        ("2025-06-23", "2025-06-29", "week", ["2025-04-07", "2025-06-29"], True),
        ("2025-06-29", "2025-06-29", "day", ["2025-06-16", "2025-06-29"], True),
    ],
)
def test_the_period_sets_grain_and_window(start: str, end: str, grain: str, window: list[str], whole: bool) -> None:
    query = trend_query(ranged(start, end), no_time)
    assert query is not None and query.grain == grain and query.whole is whole
    [td] = query.query["timeDimensions"]
    assert td == {"dimension": "orders.order_ts", "granularity": grain, "dateRange": window}
    assert query.query["filters"] == GMV_EAST["filters"]  # the same slice of the data


def test_no_trend_for_groups_series_rankings_or_odd_ranges() -> None:
    assert trend_query({**ranged("2025-06-01", "2025-06-30"), "dimensions": ["orders.channel"]}, no_time) is None
    series = {
        "measures": ["order_items.gmv"],
        "timeDimensions": [{"dimension": "orders.order_ts", "granularity": "month"}],
    }
    assert trend_query(series, no_time) is None
    assert trend_query(ranged("2025-06-03", "2025-06-20"), no_time) is None  # not one calendar period
    assert trend_query({"measures": ["regions.count"]}, no_time) is None  # no time dimension at all


def test_all_time_numbers_get_a_monthly_sparkline_without_change() -> None:
    query = trend_query({"measures": ["order_items.gmv"]}, no_time)
    assert query is not None and query.grain == "month" and not query.whole
    rows = [
        {"orders.order_ts.month": "2025-05-01T00:00:00.000", "order_items.gmv": "10"},
        {"orders.order_ts.month": "2025-06-01T00:00:00.000", "order_items.gmv": "12"},
    ]
    trend = trend_of(query, rows)
    assert trend is not None and trend.points == [("2025-05", 10.0), ("2025-06", 12.0)] and trend.change is None


def test_change_is_from_the_previous_period_to_the_asked_one() -> None:
    query = trend_query(ranged("2025-06-01", "2025-06-30"), no_time)
    rows = [
        {"orders.order_ts.month": f"2025-0{m}-01T00:00:00.000", "order_items.gmv": v}
        for m, v in ((4, "90"), (5, "100"), (6, "80"))
    ]
    trend = trend_of(query, rows)
    assert trend.previous == "2025-05" and trend.change == -20.0 and trend.change_pct == pytest.approx(-0.2)
    missing = trend_of(query, rows[:2])  # no row for June: the last point is not the asked period
    assert missing is not None and missing.change is None

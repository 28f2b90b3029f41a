"""Compared periods each need data: a period without rows is said, not compared (router.aggregate.execute);
they are shown with their dates (router.aggregate.period_names)."""

from __future__ import annotations

import pytest

from cube_models.backends.base import LoadResult
from router.aggregate.execute import _each_period_has_data
from router.aggregate.period_names import with_dates
from router.aggregate.types import CubeQueryDraft, OutOfModelError

QUERY = {"measures": ["flights.on_time_rate"], "dimensions": ["airlines.name"]}


def _draft(comparison: str = "versus") -> CubeQueryDraft:
    return CubeQueryDraft([QUERY, QUERY], labels=["2012", "2013"], comparison=comparison)


def _load(rows: list[dict[str, object]]) -> LoadResult:
    return LoadResult(rows=rows, sql="", backend="cube")


def test_a_compared_period_without_rows_is_refused_naming_it() -> None:
    with pytest.raises(OutOfModelError, match="no data for 2012"):
        _each_period_has_data(_draft(), [_load([]), _load([{"airlines.name": "A", "flights.on_time_rate": 0.8}])])
    with pytest.raises(OutOfModelError, match="no data for 2012"):  # one row, its measure empty (a sum of nothing)
        _each_period_has_data(_draft(), [_load([{"flights.on_time_rate": None}]), _load([{"flights.on_time_rate": 1}])])


def test_periods_with_data_or_compared_members_pass() -> None:
    zero = [_load([{"flights.on_time_rate": 0}]), _load([{"flights.on_time_rate": 0.5}])]  # a zero is data
    _each_period_has_data(_draft(), zero)
    _each_period_has_data(_draft("members"), [_load([]), _load([{"flights.on_time_rate": 0.5}])])
    _each_period_has_data(_draft(), [_load([]), _load([])])  # neither has rows: the answer says no rows


def test_two_compared_queries_that_are_the_same_are_refused() -> None:
    from router.aggregate.execute import _periods_differ

    june = {
        "measures": ["orders.count"],
        "timeDimensions": [{"dimension": "o.ts", "dateRange": ["2024-06-01", "2024-06-30"]}],
    }
    with pytest.raises(OutOfModelError, match="same"):
        _periods_differ(CubeQueryDraft([june, dict(june)], labels=["June 2024", "June 2024"], comparison="versus"))
    later = {**june, "timeDimensions": [{"dimension": "o.ts", "dateRange": ["2025-06-01", "2025-06-30"]}]}
    _periods_differ(CubeQueryDraft([later, june], labels=["this June", "June 2024"], comparison="versus"))


def test_this_and_a_month_is_that_month_of_the_current_year() -> None:
    from datetime import date

    from router.understanding.timeexpr import extract_time

    found = extract_time("orders this June vs June last year", date(2025, 6, 30)).ranges
    assert [r.start for r in found] == [date(2025, 6, 1), date(2024, 6, 1)]


@pytest.mark.parametrize(
    ("label", "span", "shown"),
    [
        ("last month", ["2011-11-01", "2011-11-30"], "2011-11, last month"),
        ("same period last year", ["2010-01-01", "2010-12-23"], "2010-01-01 to 2010-12-23, same period last year"),
        ("last quarter", ["2011-07-01", "2011-09-30"], "Q3 2011, last quarter"),
        ("去年", ["2010-01-01", "2010-12-31"], "2010（去年）"),
        ("上季度", ["2011-07-01", "2011-09-30"], "2011年3季度（上季度）"),
        ("Q3 2010", ["2010-07-01", "2010-09-30"], "Q3 2010"),  # it names its dates already
        ("last month", None, "last month"),  # no dates to name
    ],
)
def test_a_compared_period_is_shown_with_its_dates(label: str, span: list[str] | None, shown: str) -> None:
    query = {"measures": ["m"], "timeDimensions": [{"dimension": "t", "dateRange": span}] if span else []}
    assert with_dates(label, query) == shown

"""CubeQuery parsing (shape errors are QueryError) and Cube's relative date ranges."""

from __future__ import annotations

from datetime import date

import pytest

from cube_models.dates import resolve_date_range
from cube_models.errors import QueryError
from cube_models.query import CubeQuery, Filter, FilterGroup

TODAY = date(2025, 6, 30)


def test_parse_full_query_round_trip() -> None:
    raw = {
        "measures": ["orders.count"],
        "dimensions": ["orders.status", "orders.order_ts.month"],
        "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": "last month"}],
        "filters": [
            {
                "or": [
                    {"member": "orders.channel", "operator": "equals", "values": ["web", 3]},
                    {"dimension": "orders.status", "operator": "set"},
                ]
            }
        ],
        "segments": ["orders.completed"],
        "order": {"orders.count": "desc"},
        "limit": 5,
        "offset": 2,
        "total": True,
    }
    q = CubeQuery.parse(raw)
    assert q.dimensions == ["orders.status"]
    assert [(t.dimension, t.granularity) for t in q.time_dimensions] == [
        ("orders.order_ts", None),
        ("orders.order_ts", "month"),
    ]
    group = q.filters[0]
    assert isinstance(group, FilterGroup) and group.op == "or"
    assert group.items[0] == Filter("orders.channel", "equals", ("web", "3"))
    assert q.order == [("orders.count", "desc")] and q.limit == 5 and q.offset == 2 and q.total
    again = CubeQuery.parse(q.to_dict())
    assert again.to_dict() == q.to_dict()
    assert set(q.members()) >= {"orders.count", "orders.channel", "orders.order_ts", "orders.completed"}


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("{not json", "not valid JSON"),
        ("[1]", "JSON object"),
        ({"measures": "orders.count"}, "must be a list"),
        ({"measures": ["orders"]}, "not a member name"),
        ({"measures": ["orders.count; drop"]}, "not a member name"),
        (
            {"measures": ["a.b"], "filters": [{"member": "a.c", "operator": "like", "values": ["x"]}]},
            "unknown operator",
        ),
        ({"measures": ["a.b"], "filters": [{"member": "a.c", "operator": "equals"}]}, "needs values"),
        ({"measures": ["a.b"], "filters": [{"member": "a.c", "operator": "equals", "values": [{"x": 1}]}]}, "value"),
        ({"measures": ["a.b"], "timeDimensions": [{"dimension": "a.t", "granularity": "decade"}]}, "granularity"),
        ({"measures": ["a.b"], "limit": 0}, "limit"),
        ({"measures": ["a.b"], "limit": "10"}, "limit"),
        ({"measures": ["a.b"], "order": {"a.b": "up"}}, "asc"),
        ({"measures": ["a.b"], "bogus": 1}, "unknown query key"),
        ({}, "should contain"),
        ({"measures": ["a.b"], "ungrouped": True}, "ungrouped"),
    ],
)
def test_malformed_queries(raw, expected: str) -> None:
    with pytest.raises(QueryError, match=expected):
        CubeQuery.parse(raw)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("today", ("2025-06-30T00:00:00.000", "2025-06-30T23:59:59.999")),
        ("yesterday", ("2025-06-29T00:00:00.000", "2025-06-29T23:59:59.999")),
        ("last 7 days", ("2025-06-23T00:00:00.000", "2025-06-29T23:59:59.999")),
        ("this quarter", ("2025-04-01T00:00:00.000", "2025-06-30T23:59:59.999")),
        ("last quarter", ("2025-01-01T00:00:00.000", "2025-03-31T23:59:59.999")),
        ("last month", ("2025-05-01T00:00:00.000", "2025-05-31T23:59:59.999")),
        ("this year", ("2025-01-01T00:00:00.000", "2025-12-31T23:59:59.999")),
        ("last year", ("2024-01-01T00:00:00.000", "2024-12-31T23:59:59.999")),
        ("this week", ("2025-06-30T00:00:00.000", "2025-07-06T23:59:59.999")),
        ("last 3 months", ("2025-03-01T00:00:00.000", "2025-05-31T23:59:59.999")),
        ("from 2024-01-01 to 2024-03-31", ("2024-01-01T00:00:00.000", "2024-03-31T23:59:59.999")),
        ("Last Year", ("2024-01-01T00:00:00.000", "2024-12-31T23:59:59.999")),
    ],
)
def test_relative_ranges(text: str, expected: tuple[str, str]) -> None:
    assert resolve_date_range(text, TODAY) == expected


def test_absolute_ranges() -> None:
    assert resolve_date_range(["2024-02-01", "2024-02-29"]) == ("2024-02-01T00:00:00.000", "2024-02-29T23:59:59.999")
    assert resolve_date_range(["2024-02-01"]) == ("2024-02-01T00:00:00.000", "2024-02-01T23:59:59.999")
    assert resolve_date_range(["2024-02-01T10:00:00", "2024-02-01T11:00:00.5"]) == (
        "2024-02-01T10:00:00.000",
        "2024-02-01T11:00:00.500",
    )


@pytest.mark.parametrize(
    "bad",
    [
        "last fortnight",
        ["2024-13-01", "2024-12-31"],
        ["2024-02-01", "2024-01-01"],
        ["yesterday-ish", "2024-01-01"],
        "from x to y",
    ],
)
def test_unparsable_ranges(bad) -> None:
    with pytest.raises(QueryError):
        resolve_date_range(bad, TODAY)

"""Limits reached by an answer's parts, counted instead of silent (router.cuts, router.detail.counts)."""

from __future__ import annotations

from typing import Any

import pytest

from cube_models.errors import QueryError
from router.aggregate.types import AggregateResult
from router.cuts import Cut, PathCounter, find_cuts
from router.detail import DetailResult
from router.detail.counts import limit_of_sql, unlimited
from router.sqlguard.execute import QueryExecutionError


class FakeCounter:
    """Counts of a warehouse with ``cube_total`` rows behind Cube queries and ``sql_total`` behind SQL."""

    def __init__(self, cube_total: int | None = 12, sql_total: int | None = 30) -> None:
        self.cube_total, self.sql_total = cube_total, sql_total
        self.cube_queries: list[dict[str, Any]] = []

    def cube(self, query: dict[str, Any]) -> int | None:
        self.cube_queries.append(query)
        return self.cube_total

    def sql(self, sql: str, params: dict[str, Any]) -> int | None:
        return self.sql_total


def aggregate(n: int, limit: int | None = None) -> AggregateResult:
    query: dict[str, Any] = {"measures": ["orders.count"], "dimensions": ["customers.name"]}
    if limit:
        query["limit"] = limit
    return AggregateResult(cube_query=query, rows=[{"customers.name": str(i)} for i in range(n)], sql="", backend="t")


def sql_detail(n: int, limit: int) -> DetailResult:
    return DetailResult(
        plan={"kind": "rows", "limit": limit},
        columns=["id"],
        rows=[[i] for i in range(n)],
        sql=f"SELECT r.id FROM warehouse.r AS r ORDER BY r.id LIMIT {limit}",
        params={},
        tables=["r"],
        entities=[],
    )


def test_an_aggregate_at_its_default_limit_is_counted_with_cubes_total() -> None:
    counter = FakeCounter(cube_total=12)
    cuts = find_cuts("aggregate", aggregate(10), None, counter, default_limit=10, covered=20)
    assert cuts == [Cut("aggregate", 10, 12, 10)]
    assert counter.cube_queries[0]["total"] is True and counter.cube_queries[0]["limit"] == 1


def test_a_limit_the_question_asked_for_or_not_reached_is_no_cut() -> None:
    counter = FakeCounter()
    assert find_cuts("aggregate", aggregate(5, limit=5), None, counter, default_limit=10, covered=20) == []
    assert find_cuts("aggregate", aggregate(9), None, counter, default_limit=10, covered=20) == []
    assert find_cuts("detail", None, sql_detail(99, 100), counter, default_limit=10, covered=20) == []
    assert counter.cube_queries == []


def test_a_limit_reached_by_exactly_the_rows_there_are_is_no_cut() -> None:
    assert find_cuts("detail", None, sql_detail(30, 30), FakeCounter(sql_total=30), default_limit=10, covered=20) == []


def test_detail_sql_and_listing_cuts_and_the_entities_of_a_mixed_answer() -> None:
    counter = FakeCounter(cube_total=700, sql_total=5872)
    assert find_cuts("detail", None, sql_detail(100, 100), counter, default_limit=10, covered=20) == [
        Cut("detail", 100, 5872, 100)
    ]
    listing = DetailResult(
        plan={"kind": "listing", "cube_query": {"dimensions": ["r.id"], "limit": 50}},
        columns=["r.id"],
        rows=[[i] for i in range(50)],
        sql="",
        params={},
        tables=["r"],
        entities=[],
    )
    assert find_cuts("detail", None, listing, counter, default_limit=10, covered=20) == [Cut("detail", 50, 700, 50)]
    mixed = find_cuts("mixed", aggregate(35, limit=35), sql_detail(100, 100), counter, default_limit=10, covered=20)
    assert mixed == [Cut("detail", 100, 5872, 100), Cut("entities", 20, 35, 20)]


def test_a_count_that_fails_states_the_cut_with_an_unknown_total() -> None:
    def refuse(query: dict[str, Any]) -> Any:
        raise QueryError("no")

    def timeout(sql: str, params: dict[str, Any]) -> int:
        raise QueryExecutionError("warehouse query failed: canceling statement due to statement timeout")

    counter = PathCounter(load=refuse, count_sql=timeout)
    assert find_cuts("aggregate", aggregate(10), None, counter, default_limit=10, covered=20) == [
        Cut("aggregate", 10, None, 10)
    ]
    assert find_cuts("detail", None, sql_detail(5, 5), counter, default_limit=10, covered=20) == [
        Cut("detail", 5, None, 5)
    ]


@pytest.mark.parametrize(
    ("sql", "limit"),
    [
        ("SELECT DISTINCT a, b FROM warehouse.t WHERE a IN (%(p0)s) ORDER BY b DESC NULLS LAST LIMIT 5000", 5000),
        ("SELECT a FROM warehouse.t OFFSET 3", 0),
    ],
)
def test_unlimited_drops_limit_offset_and_order_but_keeps_filters(sql: str, limit: int) -> None:
    assert limit_of_sql(sql) == limit
    out = unlimited(sql)
    assert "LIMIT" not in out and "OFFSET" not in out and "ORDER" not in out
    assert out.startswith("SELECT") and ("%(p0)s" in out) == ("%(p0)s" in sql)


def test_a_detail_total_already_counted_is_not_counted_again() -> None:
    class Refusing(FakeCounter):
        def sql(self, sql: str, params: dict[str, Any]) -> int | None:
            raise AssertionError("counted twice")

    detail = sql_detail(100, 100)
    detail.total = 640
    assert find_cuts("mixed", aggregate(3, limit=3), detail, Refusing(), default_limit=10, covered=20) == [
        Cut("detail", 100, 640, 100)
    ]

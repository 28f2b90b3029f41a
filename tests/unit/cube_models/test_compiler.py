"""Built-in compiler: SQL shape (parsed back with sqlglot), Cube's semantics, bind parameters, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from cube_models.compiler import compile_query
from cube_models.errors import QueryError
from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from tests.unit.cube_models.helpers import base_doc, write_model

MODEL = load_model(REPO_ROOT / "demo" / "model")


def _tree(sql: str) -> exp.Expression:
    return sqlglot.parse_one(sql, read="postgres")


def test_simple_query_columns_and_default_order() -> None:
    c = compile_query({"measures": ["orders.count"], "dimensions": ["orders.status"]}, MODEL)
    tree = _tree(c.sql)
    assert [col.key for col in c.columns] == ["orders.status", "orders.count"]
    order = tree.args["order"].expressions[0]
    assert order.this.name == "2" and order.args.get("desc")  # first measure desc (Cube's default)
    assert tree.args["limit"].expression.name == "10000"
    assert not c.params


def test_time_dimension_default_order_and_extra_key() -> None:
    c = compile_query(
        {
            "measures": ["orders.count"],
            "timeDimensions": [{"dimension": "orders.order_ts", "granularity": "month", "dateRange": "last month"}],
        },
        MODEL,
        today=__import__("datetime").date(2025, 6, 30),
    )
    assert c.columns[0].key == "orders.order_ts.month" and c.columns[0].extra_key == "orders.order_ts"
    assert c.params == ["2025-05-01T00:00:00.000Z", "2025-05-31T23:59:59.999Z"]
    assert "DATE_TRUNC('month'" in c.sql and "AT TIME ZONE 'UTC'" in c.sql
    order = _tree(c.sql).args["order"].expressions[0]
    assert order.this.name == "1" and not order.args.get("desc")


def test_filter_values_are_bind_parameters_never_sql_text() -> None:
    evil = "'; drop table warehouse.fact_order; --"
    c = compile_query(
        {
            "measures": ["orders.count"],
            "filters": [
                {"member": "orders.status", "operator": "equals", "values": [evil]},
                {"member": "orders.channel", "operator": "contains", "values": ["50%_off"]},
            ],
        },
        MODEL,
    )
    assert evil in c.params and "drop table" not in c.sql.lower()
    assert "50\\%\\_off" in c.params  # wildcards escaped like Cube
    assert len(list(_tree(c.sql).find_all(exp.Parameter))) == 2
    assert len(sqlglot.parse(c.sql, read="postgres")) == 1


def test_joins_follow_directed_graph() -> None:
    c = compile_query({"measures": ["order_items.gmv"], "dimensions": ["customers.segment"]}, MODEL)
    tree = _tree(c.sql)
    joined = [j.this.alias_or_name for j in tree.args["joins"]]
    assert c.join_root == "order_items" and joined == ["orders", "customers"]
    assert all(j.args.get("side") == "LEFT" for j in tree.args["joins"])


def test_no_join_path_is_a_clear_error() -> None:
    with pytest.raises(QueryError, match="join path"):
        compile_query({"measures": ["products.count"], "dimensions": ["regions.name_en"]}, MODEL)


def test_ambiguous_join_path_is_an_error(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0]["joins"].append({"name": "c", "relationship": "many_to_one", "sql": "{CUBE}.c_id = {c}.id"})
    doc["cubes"][1]["joins"] = [{"name": "d", "relationship": "many_to_one", "sql": "{CUBE}.d_id = {d}.id"}]
    doc["cubes"] += [
        {
            "name": "c",
            "sql_table": "s.c",
            "joins": [{"name": "d", "relationship": "many_to_one", "sql": "{CUBE}.d_id = {d}.id"}],
            "dimensions": [{"name": "id", "sql": "id", "type": "number", "primary_key": True}],
        },
        {
            "name": "d",
            "sql_table": "s.d",
            "dimensions": [
                {"name": "id", "sql": "id", "type": "number", "primary_key": True},
                {"name": "name", "sql": "name", "type": "string"},
            ],
        },
    ]
    model = load_model(write_model(tmp_path / "m", doc))
    with pytest.raises(QueryError, match="ambiguous join path"):
        compile_query({"measures": ["a.count"], "dimensions": ["d.name"]}, model)


def test_fan_out_uses_keys_subquery_for_multiplied_measures() -> None:
    c = compile_query({"measures": ["payments.total_amount"], "dimensions": ["products.category"]}, MODEL)
    tree = _tree(c.sql)
    distinct_selects = [s for s in tree.find_all(exp.Select) if s.args.get("distinct")]
    assert distinct_selects, "multiplied sum must aggregate over distinct primary keys"
    assert any(col.alias == "payments__payment_id" for s in distinct_selects for col in s.selects)


def test_count_distinct_is_not_treated_as_multiplied() -> None:
    c = compile_query({"measures": ["orders.count", "order_items.gmv"], "dimensions": ["orders.channel"]}, MODEL)
    assert not any(s.args.get("distinct") for s in _tree(c.sql).find_all(exp.Select))


def test_count_without_sql_on_multiplied_cube_counts_distinct_keys() -> None:
    c = compile_query({"measures": ["customers.count"], "dimensions": ["orders.status"]}, MODEL)
    assert 'COUNT(DISTINCT "customers".customer_id)' in c.sql


def test_number_measure_inlines_its_leaves() -> None:
    c = compile_query({"measures": ["order_items.aov"]}, MODEL)
    assert "NULLIF" in c.sql and "COUNT(DISTINCT CASE WHEN" in c.sql and "SUM(CASE WHEN" in c.sql


def test_measure_filter_goes_to_having_and_segment_to_where() -> None:
    c = compile_query(
        {
            "measures": ["orders.count"],
            "dimensions": ["orders.channel"],
            "segments": ["orders.online"],
            "filters": [{"member": "orders.count", "operator": "gt", "values": ["10"]}],
        },
        MODEL,
    )
    tree = _tree(c.sql)
    assert tree.args.get("having") is not None and "IN ('web', 'app')" in tree.args["where"].sql()
    assert c.params == ["10"]


def test_limit_default_cap_offset_total() -> None:
    c = compile_query(
        {"measures": ["orders.count"], "dimensions": ["orders.channel"], "limit": 2, "offset": 1, "total": True},
        MODEL,
        row_cap=100,
    )
    tree = _tree(c.sql)
    assert tree.args["limit"].expression.name == "2" and tree.args["offset"].expression.name == "1"
    total = _tree(c.total_sql)
    assert total.args.get("limit") is None and "total_count" in c.total_sql
    inner = total.find(exp.Subquery).this
    assert inner.args.get("limit") is None and inner.args.get("offset") is None
    with pytest.raises(QueryError, match="row cap"):
        compile_query({"measures": ["orders.count"], "limit": 101}, MODEL, row_cap=100)
    capped = compile_query({"measures": ["orders.count"]}, MODEL, default_limit=10_000, row_cap=100)
    assert _tree(capped.sql).args["limit"].expression.name == "100"


@pytest.mark.parametrize(
    "query,expected",
    [
        ({"measures": ["orders.nope"]}, "unknown member 'orders.nope'"),
        ({"measures": ["orders.status"]}, "is a dimension"),
        ({"dimensions": ["orders.count"]}, "is a measure"),
        (
            {"measures": ["orders.count"], "timeDimensions": [{"dimension": "orders.status", "granularity": "day"}]},
            "not a time dimension",
        ),
        (
            {
                "measures": ["orders.count"],
                "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": "soonish"}],
            },
            "can't parse date",
        ),
        ({"measures": ["orders.count"], "segments": ["orders.status"]}, "is a dimension"),
        (
            {
                "measures": ["orders.count"],
                "filters": [
                    {
                        "or": [
                            {"member": "orders.count", "operator": "gt", "values": ["1"]},
                            {"member": "orders.status", "operator": "equals", "values": ["x"]},
                        ]
                    }
                ],
            },
            "mix measures and dimensions",
        ),
    ],
)
def test_query_errors(query: dict, expected: str) -> None:
    with pytest.raises(QueryError, match=expected):
        compile_query(query, MODEL)


def test_operators_render(tmp_path: Path) -> None:
    ops = [
        ("equals", ["a", None]),
        ("notEquals", ["a"]),
        ("notEquals", ["a", "b"]),
        ("contains", ["a"]),
        ("notContains", ["a"]),
        ("startsWith", ["a"]),
        ("endsWith", ["a"]),
        ("notStartsWith", ["a"]),
        ("gt", ["1"]),
        ("gte", ["1"]),
        ("lt", ["1"]),
        ("lte", ["1"]),
        ("set", []),
        ("notSet", []),
    ]
    for op, values in ops:
        filt = {"member": "orders.channel", "operator": op}
        if values:
            filt["values"] = values
        c = compile_query({"measures": ["orders.count"], "filters": [filt]}, MODEL)
        assert _tree(c.sql).args["where"] is not None, op
    dates = [
        ("inDateRange", ["2024-01-01", "2024-01-31"]),
        ("notInDateRange", ["2024-01-01", "2024-01-31"]),
        ("beforeDate", ["2024-01-01"]),
        ("afterDate", ["2024-01-01"]),
        ("beforeOrOnDate", ["2024-01-01"]),
        ("afterOrOnDate", ["2024-01-01"]),
    ]
    for op, values in dates:
        c = compile_query(
            {
                "measures": ["orders.count"],
                "filters": [{"member": "orders.order_ts", "operator": op, "values": values}],
            },
            MODEL,
        )
        assert c.params[0] == "2024-01-01T00:00:00.000Z", op
        assert "TIMESTAMPTZ" in c.sql


def test_view_members_compile_to_cube_members(tmp_path: Path) -> None:
    doc = base_doc()
    doc["views"] = [
        {
            "name": "v",
            "cubes": [
                {"join_path": "a", "includes": [{"name": "total", "alias": "amount"}]},
                {"join_path": "a.b", "includes": ["label"]},
            ],
        }
    ]
    model = load_model(write_model(tmp_path / "m", doc))
    c = compile_query({"measures": ["v.amount"], "dimensions": ["v.label"]}, model)
    assert [col.key for col in c.columns] == ["v.label", "v.amount"]
    assert 'SUM("a".amount)' in c.sql and "LEFT JOIN s.b" in c.sql


def test_subquery_columns_in_member_sql_stay_unqualified(tmp_path: Path) -> None:
    """Only the outermost scope of member SQL gets the cube alias: a subquery's columns are its own tables'
    (qualifying them with the outer alias turned `id IN (SELECT a_id ... WHERE amount > 100)` into always true)."""
    doc = base_doc()
    cube_a = doc["cubes"][0]
    cube_a["measures"] += [
        {
            "name": "big_refunded",
            "type": "count",
            "filters": [{"sql": "{CUBE}.id IN (SELECT a_id FROM s.refund WHERE amount > 100)"}],
        },
        {
            "name": "refunded_amount",
            "type": "sum",
            "sql": "CASE WHEN EXISTS (SELECT 1 FROM s.refund r WHERE r.a_id = {CUBE}.id AND reason = 'x') "
            "THEN amount END",
        },
    ]
    cube_a["dimensions"].append(
        {"name": "above_avg", "type": "boolean", "sql": "amount > (SELECT avg(price) FROM s.p WHERE flag)"}
    )
    cube_a["segments"] = [{"name": "big", "sql": "id IN (SELECT a_id FROM s.refund WHERE refund_amount > 100)"}]
    model = load_model(write_model(tmp_path / "m", doc))
    c = compile_query(
        {"measures": ["a.big_refunded", "a.refunded_amount"], "dimensions": ["a.above_avg"], "segments": ["a.big"]},
        model,
    )
    tree = _tree(c.sql)
    inner = {col.sql() for sub in tree.find_all(exp.Select) if sub is not tree for col in sub.find_all(exp.Column)}
    assert inner == {"a_id", "amount", "r.a_id", '"a"."id"', "reason", "price", "flag", "refund_amount"}
    outer = {col.sql() for col in tree.find_all(exp.Column)} - inner
    assert {'"a".id', '"a".amount'} <= outer  # bare columns of the outermost scope still get the cube alias


def _rolling_model(tmp_path: Path):
    doc = base_doc()
    doc["cubes"][0]["measures"] += [
        {"name": "total_7d", "type": "sum", "sql": "amount", "rolling_window": {"trailing": "7 day"}},
        {"name": "count_all", "type": "count", "rolling_window": {"trailing": "unbounded"}},
    ]
    doc["cubes"][0]["joins"] = []  # b -> a only: a's measures are multiplied when b is joined
    doc["cubes"][1]["joins"] = [{"name": "a", "relationship": "one_to_many", "sql": "{CUBE}.id = {a}.b_id"}]
    doc["cubes"][1]["dimensions"].append({"name": "ts", "sql": "ts", "type": "time"})
    doc["cubes"][1]["measures"].append({"name": "count_7d", "type": "count", "rolling_window": {"trailing": "7 day"}})
    return load_model(write_model(tmp_path / "m", doc))


def test_rolling_window_joins_a_date_series(tmp_path: Path) -> None:
    td = {"dimension": "a.ts", "granularity": "month", "dateRange": ["2024-01-01", "2024-03-31"]}
    c = compile_query({"measures": ["a.total_7d", "a.count_all"], "timeDimensions": [td]}, _rolling_model(tmp_path))
    tree = _tree(c.sql)
    assert c.params == ["2024-01-01T00:00:00.000Z", "2024-03-31T23:59:59.999Z"]
    assert c.sql.count("GENERATE_SERIES(") == 2  # one date series per rolling measure
    assert {j.this.alias for j in tree.find_all(exp.Join) if j.args.get("side") == "LEFT"} == {"base"}
    assert "base.ts > series.date_to - INTERVAL '7 day' AND base.ts <= series.date_to" in c.sql
    assert "base.ts <= series.date_to" in c.sql  # unbounded: no lower bound
    assert [col.key for col in c.columns] == ["a.ts.month", "a.total_7d", "a.count_all"]


@pytest.mark.parametrize(
    "query,expected",
    [
        (
            {
                "measures": ["a.total_7d", "a.total"],
                "timeDimensions": [
                    {"dimension": "a.ts", "granularity": "day", "dateRange": ["2024-01-01", "2024-01-31"]}
                ],
            },
            "with other measures",
        ),
        ({"measures": ["a.total_7d"], "timeDimensions": [{"dimension": "a.ts", "granularity": "day"}]}, "dateRange"),
        ({"measures": ["a.total_7d"]}, "exactly one time dimension with a dateRange"),
        (
            {
                "measures": ["b.count_7d"],
                "dimensions": ["a.id"],
                "timeDimensions": [
                    {"dimension": "b.ts", "granularity": "day", "dateRange": ["2024-01-01", "2024-01-31"]}
                ],
            },
            "multiplied",
        ),
    ],
)
def test_rolling_window_unsupported_shapes_are_refused(tmp_path: Path, query: dict, expected: str) -> None:
    with pytest.raises(QueryError, match=expected):
        compile_query(query, _rolling_model(tmp_path))

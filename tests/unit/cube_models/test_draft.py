"""Drafted Cube models: titles, keys, joins (declared, guessed, no cycles), measures; they load and compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.compiler import compile_query
from cube_models.draft import Column, ForeignKey, TableInfo, common_prefix, draft_cubes, title_of, write_cubes
from cube_models.model import load_model

INT, NUM, TEXT, DATE = "integer", "numeric", "text", "date"
TABLES = [
    TableInfo("sales", "region", (Column("r_regionkey", INT), Column("r_name", TEXT)), ("r_regionkey",)),
    TableInfo(
        "sales",
        "customer",
        (Column("c_custkey", INT), Column("c_name", TEXT), Column("c_regionkey", INT), Column("c_acctbal", NUM)),
        ("c_custkey",),
    ),
    TableInfo(
        "sales",
        "orders",
        (
            Column("o_orderkey", INT),
            Column("o_custkey", INT),
            Column("o_orderdate", DATE),
            Column("o_totalprice", NUM),
            Column("o_isrush", "boolean"),
        ),
        ("o_orderkey",),
        (ForeignKey(("o_custkey",), "customer", ("c_custkey",)),),
    ),
    TableInfo(
        "sales",
        "lineitem",
        (
            Column("l_orderkey", INT),
            Column("l_linenumber", INT),
            Column("l_quantity", NUM),
            Column("l_shipdate", "timestamp without time zone"),
        ),
        ("l_orderkey", "l_linenumber"),
        (ForeignKey(("l_orderkey",), "orders", ("o_orderkey",)),),
    ),
]


@pytest.mark.parametrize(
    ("name", "prefix", "title"),
    [
        ("o_orderdate", "o_", "Order date"),
        ("unit_price", "", "Unit price"),
        ("c_custkey", "c_", "Cust key"),
        ("o_totalprice", "o_", "Total price"),
        ("signup_date", "", "Signup date"),
        ("status", "", "Status"),
        ("l_discount", "l_", "Discount"),
        ("is_valid", "", "Is valid"),
        ("l_shipdate", "l_", "Ship date"),
    ],
)
def test_titles_from_names(name: str, prefix: str, title: str) -> None:
    assert title_of(name, prefix) == title


def test_common_prefix_only_when_every_column_shares_it() -> None:
    assert common_prefix(["o_orderkey", "o_custkey"]) == "o_"
    assert common_prefix(["order_id", "customer_id"]) == ""
    assert common_prefix(["o_orderkey", "status"]) == ""


def _cubes() -> dict[str, dict]:
    return {c["name"]: c for c in draft_cubes(TABLES)}


def test_joins_from_foreign_keys_and_guessed_from_names() -> None:
    cubes = _cubes()
    orders = {j["name"]: j for j in cubes["orders"]["joins"]}
    assert orders["customer"] == {
        "name": "customer",
        "relationship": "many_to_one",
        "sql": "{CUBE}.o_custkey = {customer}.c_custkey",
    }
    assert orders["lineitem"]["relationship"] == "one_to_many"
    guessed = {j["name"]: j for j in cubes["customer"]["joins"]}["region"]
    assert guessed["relationship"] == "many_to_one" and guessed["meta"] == {"guessed": True}
    assert guessed["sql"] == "{CUBE}.c_regionkey = {region}.r_regionkey"


def test_keys_and_measures() -> None:
    cubes = _cubes()
    line_dims = {d["name"]: d for d in cubes["lineitem"]["dimensions"]}
    assert line_dims["row_key"]["primary_key"] and "||" in line_dims["row_key"]["sql"]
    assert line_dims["l_shipdate"]["type"] == "time"
    order_dims = {d["name"]: d for d in cubes["orders"]["dimensions"]}
    assert order_dims["o_orderkey"]["primary_key"] and order_dims["o_isrush"]["type"] == "boolean"
    measures = {m["name"]: m for m in cubes["orders"]["measures"]}
    assert {
        "count",
        "o_totalprice_sum",
        "o_totalprice_avg",
        "o_totalprice_min",
        "o_totalprice_max",
        "o_custkey_distinct",
    } == set(measures)
    assert measures["o_totalprice_sum"]["title"] == "Total total price"
    assert measures["o_custkey_distinct"] == {
        "name": "o_custkey_distinct",
        "title": "Distinct customer",
        "sql": "o_custkey",
        "type": "countDistinct",
    }
    assert not any(m["name"].startswith("c_regionkey_s") for m in cubes["customer"]["measures"])


def test_back_edges_never_close_a_cycle(tmp_path: Path) -> None:
    triangle = [
        TableInfo("s", "a", (Column("a_id", INT),), ("a_id",)),
        TableInfo(
            "s", "b", (Column("b_id", INT), Column("a_id", INT)), ("b_id",), (ForeignKey(("a_id",), "a", ("a_id",)),)
        ),
        TableInfo(
            "s",
            "c",
            (Column("c_id", INT), Column("a_id", INT), Column("b_id", INT)),
            ("c_id",),
            (ForeignKey(("a_id",), "a", ("a_id",)), ForeignKey(("b_id",), "b", ("b_id",))),
        ),
    ]
    cubes = draft_cubes(triangle)
    assert sum(len(c.get("joins", [])) for c in cubes) == 4  # 3 many_to_one, 1 back edge: the others close one
    write_cubes(cubes, tmp_path)
    assert set(load_model(tmp_path).cubes) == {"a", "b", "c"}  # the loader rejects directed cycles


def test_drafted_models_load_and_compile(tmp_path: Path) -> None:
    write_cubes(draft_cubes(TABLES), tmp_path)
    model = load_model(tmp_path)
    assert set(model.cubes) == {"region", "customer", "orders", "lineitem"}
    compiled = compile_query(
        {"measures": ["orders.o_totalprice_sum", "lineitem.l_quantity_sum"], "dimensions": ["region.r_name"]}, model
    )
    assert "sales.orders" in compiled.sql and "sales.region" in compiled.sql

"""Rollup matching without a database: Cube's granularity arithmetic, the rules on the demo model, and the
model errors of pre-aggregations cubesage cannot build."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from cube_models._rollup_match import min_granularity, range_granularity, whole_periods
from cube_models.compiler import compile_query, compile_rollup
from cube_models.errors import ModelError
from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT

MODEL = load_model(REPO_ROOT / "demo" / "model")
EVERY = {p.path: f"cubesage_rollups.{p.name}" for p in MODEL.pre_aggregations()}
TD = "orders.order_ts"


def _rollup(query: dict) -> str | None:
    return compile_query(query, MODEL, date(2025, 6, 30), rollups=EVERY).rollup


def test_granularity_arithmetic_is_cubes() -> None:
    assert min_granularity("month", "day") == "day"
    assert min_granularity("week", "month") == "day"
    assert min_granularity("year", "quarter") == "month"  # Cube's hierarchy lists 'month' twice under year
    assert range_granularity("2024-01-01T00:00:00.000", "2024-12-31T23:59:59.999") == "year"
    assert range_granularity("2024-04-01T00:00:00.000", "2024-06-30T23:59:59.999") == "month"
    assert range_granularity("2024-03-05T00:00:00.000", "2024-03-31T23:59:59.999") == "day"
    assert range_granularity("2024-03-05T10:00:00.000", "2024-03-05T10:59:59.999") == "hour"


def test_rules_on_the_demo_rollups() -> None:
    year = {"dimension": TD, "dateRange": ["2024-01-01", "2024-12-31"]}
    assert (
        _rollup({"measures": ["order_items.gmv"], "dimensions": ["regions.name_en"], "timeDimensions": [year]})
        == "order_items.sales_by_region_day"
    )
    assert (
        _rollup(
            {
                "measures": ["order_items.gmv"],
                "dimensions": ["products.category", "regions.name_zh"],
                "timeDimensions": [year],
            }
        )
        == "order_items.sales_by_category_region_day"
    )
    mid_month = {"dimension": TD, "dateRange": ["2024-03-15", "2024-04-10"]}
    assert (
        _rollup(
            {"measures": ["order_items.gmv"], "dimensions": ["products.product_name"], "timeDimensions": [mid_month]}
        )
        is None
    )
    # a ratio over a distinct count, no granularity: Cube matches none; each order is one row of the daily rollup
    assert _rollup({"measures": ["order_items.aov"], "timeDimensions": [year]}) == "order_items.sales_by_region_day"
    assert (
        _rollup({"measures": ["order_items.aov"], "dimensions": ["products.category"], "timeDimensions": [year]})
        is None
    )  # an order's lines fall in several categories
    assert (
        _rollup({"measures": ["order_items.aov"], "timeDimensions": [{**year, "granularity": "year"}]})
        == "order_items.kpis_by_year"
    )  # the exact match of a KPI's trend series
    monthly = {**year, "granularity": "month"}
    assert _rollup({"measures": ["orders.count"], "timeDimensions": [monthly]}) == "orders.kpis_by_month"
    assert (
        _rollup({"measures": ["orders.count"], "dimensions": ["orders.channel"], "timeDimensions": [monthly]})
        == "orders.orders_by_region_day"
    )  # by its key, the order
    assert (
        _rollup(
            {"measures": ["orders.active_customers"], "dimensions": ["orders.channel"], "timeDimensions": [monthly]}
        )
        is None
    )  # a customer orders on several days
    assert _rollup({"measures": ["orders.refund_rate"], "timeDimensions": [year]}) == "orders.orders_by_region_day"
    assert _rollup({"measures": ["orders.completed_count"], "dimensions": ["products.category"]}) is None


def test_a_non_strict_rollup_answers_ranges_of_its_whole_periods_only() -> None:
    assert whole_periods(("2023-07-01T00:00:00.000", "2025-06-30T23:59:59.999"), "quarter")
    assert not whole_periods(("2024-02-01T00:00:00.000", "2024-12-31T23:59:59.999"), "quarter")
    assert not whole_periods(("2024-01-01T00:00:00.000", "2024-11-30T23:59:59.999"), "quarter")

    def quarterly(start: str, end: str) -> dict:
        return {
            "measures": ["orders.active_customers"],
            "timeDimensions": [{"dimension": TD, "granularity": "quarter", "dateRange": [start, end]}],
        }

    assert _rollup(quarterly("2023-07-01", "2025-06-30")) == "orders.kpis_by_quarter"
    assert _rollup(quarterly("2024-02-15", "2024-12-31")) is None  # its first quarter would count whole


def test_query_over_a_rollup_reads_only_its_columns() -> None:
    compiled = compile_query(
        {
            "measures": ["orders.refund_rate"],
            "dimensions": ["orders.status"],
            "timeDimensions": [{"dimension": TD, "granularity": "month", "dateRange": ["2024-01-01", "2024-12-31"]}],
        },
        MODEL,
        rollups=EVERY,
    )
    assert "warehouse." not in compiled.sql and 'SUM("__rollup"."orders__refunded_count")' in compiled.sql
    assert "DATE_TRUNC('month'" in compiled.sql and "GROUP BY" in compiled.sql
    built = compile_rollup(MODEL.cubes["orders"].pre_aggregations[0], MODEL)
    assert "LIMIT" not in built and "orders__order_ts_day" in built and "warehouse.fact_order" in built


def _model_with(tmp_path: Path, pre: str) -> None:
    (tmp_path / "m.yml").write_text(
        "cubes:\n  - name: t\n    sql_table: s.t\n    dimensions:\n"
        "      - {name: id, sql: id, type: number, primary_key: true}\n"
        "      - {name: at, sql: at, type: time}\n    measures:\n      - {name: n, type: count}\n"
        f"    pre_aggregations:\n      - {pre}\n"
    )
    load_model(tmp_path)


@pytest.mark.parametrize(
    ("pre", "message"),
    [
        ("{name: p, type: original_sql}", "not supported"),
        ("{name: p, measures: [CUBE.n], build_range_start: {sql: 'SELECT 1'}}", "build_range_start"),
        ("{name: p, measures: [CUBE.missing]}", "is not a measure"),
        ("{name: p, measures: [CUBE.n], time_dimension: CUBE.at}", "go together"),
        ("{name: p, measures: [CUBE.n], time_dimension: CUBE.id, granularity: day}", "not a time dimension"),
        ("{name: p, measures: [CUBE.n], colour: red}", "unknown keys"),
    ],
)
def test_pre_aggregations_cubesage_cannot_build_are_model_errors(tmp_path: Path, pre: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        _model_with(tmp_path, pre)


def test_storage_options_are_accepted(tmp_path: Path) -> None:
    _model_with(
        tmp_path,
        "{name: p, measures: [CUBE.n], time_dimension: CUBE.at, granularity: day, "
        "external: false, partition_granularity: month, refresh_key: {every: 1 hour}}",
    )

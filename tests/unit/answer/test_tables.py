"""The answer table as shown: titles from the model, time by granularity, numbers by format, CSV."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from answer.tables import describe, to_csv, view
from answer.vocabulary import build
from router.tables import ResultTable


@pytest.mark.parametrize(
    ("column", "value", "shown"),
    [
        ("orders.order_ts.month", "2024-01-01T00:00:00.000", "2024-01"),
        ("orders.order_ts.quarter", "2024-01-01T00:00:00.000", "2024-Q1"),
        ("orders.order_ts.week", "2024-01-29T00:00:00.000", "2024-W05"),
        ("orders.order_ts.week", "2024-12-30T00:00:00.000", "2025-W01"),  # ISO week of the next year
        ("orders.order_ts.day", "2024-01-15T00:00:00.000", "2024-01-15"),
        ("orders.order_ts.year", "2024-01-01T00:00:00.000", "2024"),
        ("order_ts", "2024-01-15 08:30:00", "2024-01-15 08:30:00"),  # a detail timestamp keeps its time
    ],
)
def test_time_values_by_granularity(column: str, value: str, shown: str) -> None:
    out = view(ResultTable([column], [[value]]), "en")
    assert out["display"] == [[shown]] and out["kinds"] == ["time"]
    assert out["rows"] == [[value]]  # the raw value stays for clients and the regression comparator


def test_numbers_by_their_cube_format_and_keys_without_separators() -> None:
    table = ResultTable(
        [
            "customers.customer_id",
            "order_items.gmv",
            "orders.refund_rate",
            "orders.count",
            "order_items.gmv.share",
            "order_id",
        ],
        [[1234567, 2325981.6, 0.066364, 48880, 0.259, 8579]],
    )
    out = view(table, "en")
    assert out["display"] == [["1234567", "2,325,981.60", "6.64%", "48,880", "25.90%", "8579"]]
    assert out["formats"] == ["id", "currency", "percent", None, "percent", "id"]
    assert out["kinds"] == ["number"] * 6


def test_titles_come_from_the_model_and_glossary_in_both_languages() -> None:
    table = ResultTable(["regions.name_en", "orders.order_ts.month", "order_items.aov", "products.category"], [])
    assert [c.title for c in describe(table, "en")] == ["Region", "Order date (month)", "AOV", "Category"]
    assert [c.title for c in describe(table, "zh")] == ["地区", "下单时间（月）", "客单价", "品类"]


def test_row_count_and_cut_rows_are_stated() -> None:
    out = view(ResultTable(["orders.channel", "orders.count"], [["web", 1], ["app", 2]]), "en", truncated=True)
    assert out["row_count"] == 2 and out["truncated"] is True


def test_csv_has_titles_times_as_shown_and_raw_numbers() -> None:
    table = ResultTable(
        ["orders.order_ts.month", "regions.name_en", "order_items.gmv"],
        [["2024-01-01T00:00:00.000", "East, China", 1261051.24], ["2024-02-01T00:00:00.000", None, 5.0]],
    )
    rows = list(csv.reader(io.StringIO(to_csv(view(table, "en")))))
    assert rows == [
        ["Order date (month)", "Region", "GMV"],
        ["2024-01", "East, China", "1261051.24"],
        ["2024-02", "", "5.0"],
    ]


def test_a_number_dimension_holding_years_is_shown_as_written(tmp_path: Path) -> None:
    (tmp_path / "m.yml").write_text(
        """
cubes:
  - name: seasons
    sql_table: s.seasons
    dimensions:
      - {name: season_key, sql: k, type: string, primary_key: true}
      - {name: year_id, sql: y, type: number, title: Season year}
      - {name: at_bats, sql: ab, type: number, title: At-bats}
""",
        encoding="utf-8",
    )
    vocab = build(tmp_path, None)
    assert vocab.years == frozenset({"seasons.year_id"})  # not the at-bats: 1,234 keeps its separator


def test_the_text_names_a_group_by_its_key_as_written() -> None:
    from answer.synthesizer import show_value

    assert show_value("customers.customer_id", 1234567, "en") == "1234567"  # a key, not 1,234,567
    assert show_value("orders.count", 1234567, "en") == "1,234,567"

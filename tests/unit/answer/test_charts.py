"""Vega-Lite specs by result shape: KPI cards, lines per series, grouped bars of compared periods, stacked
shares, sorted bars; titles and number formats come from the demo model's members."""

from __future__ import annotations

from typing import Any

import pytest

from answer.charts import MAX_BARS, SCHEMA, chart_spec, count_card
from answer.trend import Trend
from router.tables import ResultTable

MONTHS = [f"2024-{m:02d}-01T00:00:00.000" for m in range(1, 4)]


def values(spec: dict[str, Any], field: str) -> list[Any]:
    return [r[field] for r in spec["data"]["values"]]


def texts(card: dict[str, Any]) -> list[str]:
    return [row["data"]["values"][0]["text"] for row in card["vconcat"] if row["mark"]["type"] == "text"]


def test_single_number_is_a_kpi_card_with_the_value_as_the_table_shows_it() -> None:
    spec = chart_spec(ResultTable(["order_items.gmv"], [[2325981.6]]), "en", "GMV this month")
    assert spec["$schema"] == SCHEMA and spec["usermeta"]["shape"] == "kpi"
    [card] = spec["hconcat"]
    assert texts(card) == ["GMV", "2,325,981.60"]  # currency: 2 decimals
    assert all(row["mark"]["type"] == "text" for row in card["vconcat"])  # no trend: no sparkline, no change


def test_kpi_card_with_a_trend_has_the_change_and_a_sparkline() -> None:
    trend = Trend(
        "orders.refund_rate",
        "quarter",
        [("2024-Q4", 0.0632), ("2025-Q1", 0.065)],
        change_pct=0.0285,
        change=0.0018,
        previous="2024-Q4",
    )
    spec = chart_spec(ResultTable(["orders.refund_rate"], [[0.065]]), "en", trend=trend)
    [card] = spec["hconcat"]
    assert texts(card) == ["Refund rate", "6.50%", "+0.18 pp vs 2024-Q4"]  # a rate changes in points
    line = card["vconcat"][-1]
    assert line["mark"]["type"] == "line" and [p["period"] for p in line["data"]["values"]] == ["2024-Q4", "2025-Q1"]
    assert line["encoding"]["x"]["axis"] is None and line["encoding"]["y"]["scale"] == {"zero": False}
    down = Trend("order_items.gmv", "month", [("2025-05", 200.0), ("2025-06", 150.0)], -0.25, -50.0, "2025-05")
    card = chart_spec(ResultTable(["order_items.gmv"], [[150.0]]), "en", trend=down)["hconcat"][0]
    change = card["vconcat"][2]
    assert change["data"]["values"][0]["text"] == "-25.0% vs 2025-05" and change["mark"]["color"] == "#b42318"


def test_several_numbers_are_one_card_each() -> None:
    spec = chart_spec(ResultTable(["order_items.gmv", "orders.count"], [[81025800.61, 48880]]), "zh")
    assert [texts(c) for c in spec["hconcat"]] == [["GMV", "81,025,800.61"], ["订单量", "48,880"]]


def test_time_by_dimension_is_one_coloured_line_per_series() -> None:
    rows = [
        [region, month, value] for month in MONTHS for region, value in (("East China", 10.0), ("South China", 5.0))
    ]
    spec = chart_spec(ResultTable(["regions.name_en", "orders.order_ts.month", "order_items.gmv"], rows), "en")
    assert spec["usermeta"]["shape"] == "series" and spec["mark"]["type"] == "line"
    enc = spec["encoding"]
    assert enc["color"]["field"] == "series" and enc["color"]["sort"] == ["East China", "South China"]
    assert enc["color"]["title"] == "Region"
    assert enc["x"]["type"] == "ordinal" and enc["x"]["title"] == "Order date (month)"
    assert sorted(set(values(spec, enc["x"]["field"]))) == ["2024-01", "2024-02", "2024-03"]
    assert enc["y"]["title"] == "GMV" and enc["y"]["axis"]["format"] == "~s"
    assert {t["title"] for t in enc["tooltip"]} == {"Region", "Order date (month)", "GMV"}


@pytest.mark.parametrize(
    ("grain", "start", "labels"),
    [
        ("quarter", "2024-01-01", ["2024-Q1", "2024-Q2"]),
        ("week", "2024-01-29", ["2024-W05", "2024-W06"]),
        ("day", "2024-01-15", ["2024-01-15", "2024-01-16"]),
        ("year", "2023-01-01", ["2023", "2024"]),
    ],
)
def test_time_axis_labels_follow_the_granularity(grain: str, start: str, labels: list[str]) -> None:
    second = {"quarter": "2024-04-01", "week": "2024-02-05", "day": "2024-01-16", "year": "2024-01-01"}[grain]
    table = ResultTable([f"orders.order_ts.{grain}", "orders.count"], [[f"{start}T00:00:00.000", 1], [second, 2]])
    spec = chart_spec(table, "en")
    assert values(spec, spec["encoding"]["x"]["field"]) == labels


def test_several_measures_of_one_format_share_an_axis_others_get_their_own() -> None:
    folded = chart_spec(
        ResultTable(["orders.order_ts.month", "orders.count", "orders.refunded_count"], [[m, 10, 1] for m in MONTHS]),
        "en",
    )
    assert folded["transform"][0]["fold"] == ["c1", "c2"]
    assert folded["encoding"]["color"]["field"] == "measure_title"
    split = chart_spec(
        ResultTable(
            ["orders.order_ts.month", "order_items.gmv", "orders.refund_rate"], [[m, 10.0, 0.1] for m in MONTHS]
        ),
        "en",
    )
    assert [c["encoding"]["y"]["title"] for c in split["vconcat"]] == ["GMV", "Refund rate"]
    assert split["vconcat"][1]["encoding"]["y"]["axis"]["format"] == ".1~%"


def test_categories_are_sorted_horizontal_bars_with_the_cube_format() -> None:
    spec = chart_spec(
        ResultTable(["orders.channel", "orders.refund_rate"], [["web", 0.066], ["store", 0.065], ["app", 0.067]]), "en"
    )
    assert spec["usermeta"]["shape"] == "bars" and spec["mark"]["type"] == "bar"
    assert spec["encoding"]["y"]["sort"] == "-x" and spec["encoding"]["y"]["title"] == "Channel"
    assert spec["encoding"]["x"]["axis"]["format"] == ".1~%"


def test_many_categories_keep_the_largest_and_say_so() -> None:
    rows = [[f"product {i}", float(i)] for i in range(MAX_BARS + 20)]
    spec = chart_spec(ResultTable(["products.product_name", "order_items.gmv"], rows), "en")
    assert len(spec["data"]["values"]) == MAX_BARS and min(values(spec, "c1")) == 20.0
    assert spec["title"]["subtitle"] == f"top {MAX_BARS} of {MAX_BARS + 20}"


def test_second_dimension_stacks_sums_and_groups_ratios() -> None:
    rows = [["East", "web", 3.0], ["East", "app", 2.0], ["North", "web", 1.0]]
    stacked = chart_spec(ResultTable(["regions.name_en", "orders.channel", "order_items.gmv"], rows), "en")
    assert stacked["encoding"]["x"]["stack"] == "zero" and "yOffset" not in stacked["encoding"]
    assert stacked["encoding"]["color"]["title"] == "Channel"
    grouped = chart_spec(ResultTable(["regions.name_en", "orders.channel", "order_items.aov"], rows), "en")
    assert "stack" not in grouped["encoding"]["x"] and grouped["encoding"]["yOffset"] == {"field": "c1"}


def test_compared_periods_are_grouped_bars_earlier_first() -> None:
    rows = [
        ["2024", "East China", 21.0],
        ["2024", "North China", 14.0],
        ["2023", "East China", 7.0],
        ["2023", "North China", 5.0],
    ]
    spec = chart_spec(
        ResultTable(["period", "regions.name_en", "order_items.gmv"], rows), "en", periods=["2023", "2024"]
    )
    enc = spec["encoding"]
    assert spec["usermeta"]["shape"] == "compare" and spec["mark"]["type"] == "bar"
    assert enc["xOffset"]["sort"] == ["2023", "2024"] and enc["color"]["scale"]["domain"] == ["2023", "2024"]
    assert enc["x"]["title"] == "Region" and enc["x"]["sort"]["order"] == "descending"
    plain = chart_spec(
        ResultTable(["period", "order_items.gmv"], [["2024", 81.0], ["2023", 27.0]]), "en", periods=["2023", "2024"]
    )
    assert plain["encoding"]["x"]["sort"] == ["2023", "2024"] and "xOffset" not in plain["encoding"]


def test_compared_periods_by_month_align_on_the_month() -> None:
    rows = [
        ["2024", "2024-01-01T00:00:00.000", 4.0],
        ["2024", "2024-02-01T00:00:00.000", 5.0],
        ["2023", "2023-01-01T00:00:00.000", 1.0],
        ["2023", "2023-02-01T00:00:00.000", 2.0],
    ]
    spec = chart_spec(
        ResultTable(["period", "orders.order_ts.month", "order_items.gmv"], rows), "en", periods=["2023", "2024"]
    )
    assert spec["mark"]["type"] == "line" and spec["encoding"]["x"]["field"] == "pos"
    assert values(spec, "pos") == ["01", "02", "01", "02"]


def test_shares_are_stacked_bars_of_the_whole() -> None:
    one = chart_spec(
        ResultTable(
            ["regions.name_en", "order_items.gmv", "order_items.gmv.share"], [["East", 60.0, 0.6], ["North", 40.0, 0.4]]
        ),
        "en",
    )
    assert one["usermeta"]["shape"] == "share"
    assert one["encoding"]["x"]["stack"] == "zero" and one["encoding"]["x"]["scale"] == {"domain": [0, 1]}
    assert one["encoding"]["x"]["title"] == "Share of GMV" and one["encoding"]["x"]["axis"]["format"] == ".0%"
    two = chart_spec(
        ResultTable(
            ["regions.name_en", "orders.channel", "order_items.gmv", "order_items.gmv.share"],
            [["East", "web", 30.0, 0.3], ["East", "app", 30.0, 0.3], ["North", "web", 40.0, 0.4]],
        ),
        "en",
    )
    assert two["encoding"]["y"]["title"] == "Region" and two["encoding"]["color"]["title"] == "Channel"


def test_nothing_to_chart_without_a_measure_and_count_cards_for_rows() -> None:
    assert chart_spec(ResultTable(["order_id", "status"], [[1, "refunded"], [2, "refunded"]]), "en") is None
    assert chart_spec(ResultTable(["order_items.gmv"], []), "en") is None
    card = count_card(12, "refunds", "list the refunds")
    assert texts(card["hconcat"][0]) == ["Refunds", "12"] and card["usermeta"]["shape"] == "kpi"


def test_key_columns_label_bars_instead_of_being_charted() -> None:
    spec = chart_spec(ResultTable(["customers.customer_id", "orders.count"], [[1001, 5], [1002, 3]]), "en")
    assert spec["usermeta"]["shape"] == "bars" and values(spec, "c0") == ["1001", "1002"]


def test_missing_values_are_gaps_not_errors() -> None:
    spec = chart_spec(
        ResultTable(
            ["orders.order_ts.month", "orders.refund_rate"], [[MONTHS[0], 0.06], [MONTHS[1], None], [MONTHS[2], 0.07]]
        ),
        "en",
    )
    assert values(spec, "c1") == [0.06, None, 0.07]
    bars = chart_spec(ResultTable(["orders.channel", "order_items.aov"], [["web", None], ["app", 5.0]]), "en")
    assert bars["usermeta"]["shape"] == "bars" and values(bars, "c1") == [None, 5.0]

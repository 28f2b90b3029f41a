"""Every chart shape rendered in Chromium with the vendored Vega-Lite: marks drawn, no console errors or
warnings, a screenshot of each (kept in the test's tmp dir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from answer.charts import chart_spec, count_card
from answer.trend import Trend
from router.tables import ResultTable
from tests.infra.browser import STATIC

pytestmark = pytest.mark.e2e
MONTHS = [f"2024-{m:02d}-01T00:00:00.000" for m in range(1, 13)]
TREND = Trend(
    "order_items.gmv",
    "month",
    [(f"2025-{m:02d}", 100.0 + m * 7 % 5) for m in range(1, 7)],
    change_pct=0.04,
    change=4.0,
    previous="2025-05",
)
SPECS: dict[str, dict[str, Any] | None] = {
    "kpi": chart_spec(ResultTable(["order_items.gmv"], [[2325981.61]]), "zh", "华东地区本月GMV", trend=TREND),
    "kpi-several": chart_spec(ResultTable(["order_items.gmv", "orders.refund_rate"], [[81.0, 0.066]]), "en"),
    "count": count_card(12, "refunds", "refunds above 1000 last month"),
    "series-by-region": chart_spec(
        ResultTable(
            ["regions.name_en", "orders.order_ts.month", "order_items.gmv"],
            [
                [r, m, 1000.0 * (i + 1) + (200 if r == "East China" else 0)]
                for i, m in enumerate(MONTHS)
                for r in ("East China", "South China")
            ],
        ),
        "en",
        "GMV by month in 2024 for East China vs South China",
    ),
    "series-measures": chart_spec(
        ResultTable(
            ["orders.order_ts.quarter", "order_items.gmv", "orders.refund_rate"],
            [[m, 10.0 + i, 0.06 + i / 100] for i, m in enumerate(MONTHS[::3])],
        ),
        "en",
    ),
    "compare": chart_spec(
        ResultTable(
            ["period", "regions.name_zh", "order_items.gmv"],
            [["2024", "华东", 21.0], ["2024", "华北", 14.0], ["2023", "华东", 7.0], ["2023", "华北", 5.0]],
        ),
        "zh",
        "各地区GMV 2024 vs 2023",
        periods=["2023", "2024"],
    ),
    "compare-by-month": chart_spec(
        ResultTable(
            ["period", "orders.order_ts.month", "order_items.gmv"],
            [[m[:4], m, 5.0 + i] for i, m in enumerate(MONTHS)]
            + [["2023", "2023" + m[4:], 2.0 + i] for i, m in enumerate(MONTHS)],
        ),
        "en",
        periods=["2023", "2024"],
    ),
    "share": chart_spec(
        ResultTable(
            ["regions.name_en", "order_items.gmv", "order_items.gmv.share"],
            [["East China", 60.0, 0.6], ["North China", 30.0, 0.3], ["Overseas", 10.0, 0.1]],
        ),
        "en",
        "share of GMV by region",
    ),
    "bars": chart_spec(
        ResultTable(["products.product_name", "order_items.gmv"], [[f"product {i}", 100.0 - i] for i in range(40)]),
        "en",
        "top products",
    ),
    "bars-stacked": chart_spec(
        ResultTable(
            ["regions.name_en", "orders.channel", "order_items.gmv"],
            [["East", "web", 3.0], ["East", "app", 2.0], ["North", "web", 1.0]],
        ),
        "en",
    ),
    "bars-grouped": chart_spec(
        ResultTable(
            ["regions.name_en", "orders.channel", "order_items.aov"],
            [["East", "web", 3.0], ["East", "app", 2.0], ["North", "web", 1.0]],
        ),
        "en",
    ),
}


def test_every_shape_renders_without_errors(watched: Any, tmp_path: Path) -> None:
    seen = watched()
    page = seen.page
    page.set_content("<!doctype html><html><body><div id='chart' style='width: 720px'></div></body></html>")
    for name in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"):
        page.add_script_tag(path=str(STATIC / "vendor" / name))
    for name, spec in SPECS.items():
        assert spec is not None, name
        page.evaluate(
            "async (spec) => { const el = document.getElementById('chart'); el.innerHTML = '';"
            " await vegaEmbed(el, spec, {actions: false, renderer: 'svg'}); }",
            spec,
        )
        marks = page.locator(
            "#chart svg .mark-rect path, #chart svg .mark-line path, #chart svg .mark-text text,"
            " #chart svg .mark-symbol path"
        ).count()
        assert marks > 0, f"{name}: nothing drawn"
        box = page.locator("#chart svg").first.bounding_box()
        assert box["width"] > 100 and box["height"] > 40, (name, box)
        shot = tmp_path / f"{name}.png"
        page.locator("#chart").screenshot(path=str(shot))
        assert shot.stat().st_size > 2000, name
    assert seen.problems == [], seen.problems

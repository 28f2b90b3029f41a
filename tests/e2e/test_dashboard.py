"""The dashboard in Chromium: a question pinned as a tile keeps the Cube query /v1/nl2cube returned and is
refreshed through /v1/cube/load without parsing the question again; tiles pinned from the chat page show
there too and survive a reload."""

from __future__ import annotations

from typing import Any

import pytest

from tests.live_api import LiveApi

pytestmark = pytest.mark.e2e


def pin(page: Any, question: str) -> Any:
    n = page.locator("[data-testid=tile]").count()
    page.fill("[data-testid=pin-question]", question)
    page.click("[data-testid=pin-send]")
    tile = page.locator("[data-testid=tile]").nth(n)
    tile.locator("[data-testid=tile-status]:has-text('refreshed')").wait_for(timeout=60_000)
    return tile


def test_pinned_questions_become_tiles_that_refresh_from_their_cube_query(chat_api: LiveApi, watched: Any) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    calls: list[str] = []
    page.on("request", lambda r: calls.append(r.url.split("/v1/", 1)[1]) if "/v1/" in r.url else None)
    page.goto(chat_api.url + "/dashboard")
    assert page.locator("#empty-board").is_visible()
    line = pin(page, "GMV by month in 2024")
    kpi = pin(page, "华东地区本月GMV")
    compare = pin(page, "GMV by region 2024 vs 2023")
    assert line.locator("[data-testid=chart]").get_attribute("data-shape") == "series"
    assert kpi.locator("[data-testid=chart]").get_attribute("data-shape") == "kpi"
    assert compare.locator("[data-testid=chart]").get_attribute("data-shape") == "compare"
    assert line.locator("[data-testid=chart] svg .mark-line path").count() == 1
    assert "orders.order_ts" in line.locator("[data-testid=tile-query]").text_content()
    assert calls.count("nl2cube") == 3 and calls.count("cube/load") == 3

    calls.clear()
    page.reload()  # the tiles are stored: each refreshes through its Cube query, no question is asked
    page.locator("[data-testid=tile-status]:has-text('refreshed')").nth(2).wait_for(timeout=60_000)
    assert sorted(calls) == ["cube/load"] * 3
    assert page.locator("[data-testid=tile-title]").all_inner_texts() == [
        "GMV by month in 2024",
        "华东地区本月GMV",
        "GMV by region 2024 vs 2023",
    ]
    calls.clear()
    page.locator("[data-testid=tile]").first.locator("[data-testid=tile-refresh]").click()
    page.wait_for_function("() => document.querySelector('[data-testid=tile]:not(.loading)')")
    page.locator("[data-testid=tile] [data-testid=tile-status]:has-text('refreshed')").first.wait_for()
    assert calls == ["cube/load"]
    page.locator("[data-testid=tile]").nth(1).locator("[data-testid=tile-remove]").click()
    assert page.locator("[data-testid=tile]").count() == 2
    page.reload()
    page.locator("[data-testid=tile-status]:has-text('refreshed')").nth(1).wait_for(timeout=60_000)
    assert page.locator("[data-testid=tile]").count() == 2
    assert seen.problems == [] and seen.outside == [], (seen.problems, seen.outside)


def test_a_chat_answer_pins_to_the_dashboard(chat_api: LiveApi, watched: Any) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    page.fill("[data-testid=question]", "refund rate by channel in 2024")
    page.click("[data-testid=send]")
    turn = page.locator(".turn").first
    turn.locator("[data-testid=result-table] td").first.wait_for(timeout=60_000)
    turn.locator("[data-testid=pin]").click()
    turn.locator("[data-testid=pin-status] a").click()
    page.wait_for_url("**/dashboard")
    tile = page.locator("[data-testid=tile]").first
    tile.locator("[data-testid=tile-status]:has-text('refreshed')").wait_for(timeout=60_000)
    assert tile.locator("[data-testid=tile-title]").inner_text() == "refund rate by channel in 2024"
    tile.locator("[data-testid=tile-table-toggle]").click()
    cells = tile.locator("[data-testid=result-table] tbody tr td:last-child").all_inner_texts()
    assert len(cells) == 3 and all(c.endswith("%") for c in cells)
    assert seen.problems == [], seen.problems

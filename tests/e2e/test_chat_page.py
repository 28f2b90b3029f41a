"""The chat page in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright), on the real
API and the demo warehouse: asking (stages, chart, formatted table with paging and CSV), the provenance
panel, feedback to /v1/feedback, follow-ups and the session history, suggested questions, the catalog,
Chinese rendering and API keys."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

import pytest

from answer import keys
from cubesage_core import db
from tests.live_api import LiveApi, api_settings, running_api

pytestmark = pytest.mark.e2e


def ask(page: Any, question: str) -> Any:
    """Type and send ``question``; the turn once its answer (or error) is shown."""
    n = page.locator(".turn").count()
    page.fill("[data-testid=question]", question)
    page.click("[data-testid=send]")
    turn = page.locator(".turn").nth(n)
    turn.locator("[data-testid=answer-text]:not(:empty), [data-testid=error]:not([hidden])").first.wait_for(
        timeout=60_000
    )
    return turn


def test_ask_shows_stages_chart_formatted_table_and_provenance(chat_api: LiveApi, watched: Any) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    turn = ask(page, "GMV by month in 2024 for East China vs South China")
    assert turn.locator(".stages li.done").count() == 5
    turn.locator("[data-testid=chart] svg").first.wait_for(timeout=30_000)
    assert turn.locator("[data-testid=chart]").get_attribute("data-shape") == "series"
    lines = turn.locator("[data-testid=chart] svg .mark-line path")
    assert lines.count() == 2 and lines.nth(0).get_attribute("stroke") != lines.nth(1).get_attribute("stroke")
    text = turn.locator("[data-testid=answer-text]").inner_text()
    assert "East China went from" in text and "; South China went from" in text
    headers = turn.locator("[data-testid=result-table] th").all_inner_texts()
    assert headers == ["Region", "Order date (month)", "GMV"]
    first = turn.locator("[data-testid=result-table] tbody tr").first.locator("td").all_inner_texts()
    assert first[1] == "2024-01" and "T00" not in first[1] and first[2].count(".") == 1 and "," in first[2]
    assert turn.locator("[data-testid=row-count]").inner_text() == "24 rows"

    header = turn.locator("[data-testid=result-table] th").last  # sort by GMV, descending
    header.click()
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    cells = turn.locator("[data-testid=result-table] tbody tr td:last-child").all_inner_texts()
    values = [float(c.replace(",", "")) for c in cells]
    assert values == sorted(values, reverse=True)

    turn.locator("[data-testid=provenance] summary").click()
    for section in ("prov-intent", "prov-bindings", "prov-cube-query", "prov-sql", "prov-timings"):
        assert turn.locator(f"[data-testid={section}]").is_visible(), section
    assert "order_items.gmv" in turn.locator("[data-testid=prov-cube-query]").inner_text()
    assert "SELECT" in turn.locator("[data-testid=prov-sql]").inner_text().upper()
    assert "aggregate" in turn.locator("[data-testid=prov-intent]").inner_text()
    assert turn.locator("[data-testid=prov-timings] li").count() >= 3
    assert seen.problems == [] and seen.outside == [], (seen.problems, seen.outside)


def test_every_row_is_reachable_and_downloadable(chat_api: LiveApi, watched: Any) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    turn = ask(page, "GMV by day last month")
    count = turn.locator("[data-testid=row-count]")
    assert count.inner_text() == "rows 1–25 of 31"
    turn.locator("[data-testid=page-next]").click()
    assert count.inner_text() == "rows 26–31 of 31"
    assert turn.locator("[data-testid=result-table] tbody tr").count() == 6
    assert turn.locator("[data-testid=result-table] tbody tr td").first.inner_text() == "2025-05-26"
    with page.expect_download() as download:
        turn.locator("[data-testid=csv]").click()
    rows = list(csv.reader(io.StringIO(download.value.path().read_text(encoding="utf-8-sig"))))
    assert rows[0] == ["Order date (day)", "GMV"] and len(rows) == 32 and rows[1][0] == "2025-05-01"
    assert float(rows[1][1]) > 0 and "," not in rows[1][1]  # raw numbers for spreadsheets
    assert seen.problems == [], seen.problems


def test_feedback_goes_to_the_api_and_its_reply_is_shown(chat_api: LiveApi, watched: Any, pg_url: str) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    turn = ask(page, "list the refunded orders of customer 张敏")
    turn.locator("[data-testid=provenance] summary").click()
    passages = turn.locator("[data-testid=prov-passages] li")
    assert passages.count() >= 1 and passages.first.locator("p").inner_text().strip()
    with page.expect_response(lambda r: r.url.endswith("/v1/feedback")) as reply:
        turn.locator("[data-testid=thumbs-down]").click()
    body = reply.value.json()
    status = turn.locator("[data-testid=feedback-status]")
    status.locator(f"text={body['message']}").wait_for(timeout=10_000)
    assert turn.locator("[data-testid=thumbs-down]").get_attribute("aria-pressed") == "true"
    with db.connection(pg_url) as conn:
        feedback = conn.execute(
            "SELECT feedback FROM semlayer.query_log WHERE query_id = %s", (turn.get_attribute("data-query-id"),)
        ).fetchone()[0]
    assert feedback["verdict"] == "down"
    assert seen.problems == [], seen.problems


def test_follow_ups_share_the_session_and_the_history_keeps_it(chat_api: LiveApi, watched: Any) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    ask(page, "GMV by region in 2024")
    follow = ask(page, "and by channel?")
    assert "GMV by region in 2024" in follow.locator("[data-testid=follow-up]").inner_text()
    assert "Channel" in follow.locator("[data-testid=result-table] th").all_inner_texts()
    assert page.locator("[data-testid=history-turn]").all_inner_texts() == ["GMV by region in 2024", "and by channel?"]
    page.reload()  # the conversation is kept in the browser and can be reopened
    page.locator("[data-testid=session] button").first.click()
    assert page.locator(".turn").count() == 2
    again = ask(page, "only East China")
    assert "and by channel?" in again.locator("[data-testid=follow-up]").inner_text()
    page.click("[data-testid=new-session]")
    assert page.locator(".turn").count() == 0 and page.locator("[data-testid=welcome]").is_visible()
    assert seen.problems == [], seen.problems


def test_suggestions_and_catalog_come_from_the_model(chat_api: LiveApi, watched: Any, pg_url: str) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    chips = page.locator("[data-testid=suggestion]")
    chips.first.wait_for(timeout=30_000)
    assert chips.count() >= 4
    assert "2025-06-30" in page.locator("[data-testid=as-of]").inner_text()
    chips.nth(1).click()
    turn = page.locator(".turn").first
    turn.locator("[data-testid=chart] svg").first.wait_for(timeout=60_000)
    assert turn.locator("[data-testid=result-table] tbody tr").count() >= 1

    page.click("[data-testid=catalog-toggle]")
    cubes = page.locator("[data-testid=catalog-cube]")
    cubes.first.wait_for(timeout=30_000)
    with db.connection(pg_url) as conn:
        expected = conn.execute(
            "SELECT count(*) FROM semlayer.asset WHERE asset_type = 'table' AND meta->>'source' = 'cube_models'"
        ).fetchone()[0]
    assert cubes.count() == expected
    page.fill("[data-testid=catalog-filter]", "refund rate")
    member = page.locator("[data-testid=catalog-member]", has_text="Refund rate").first
    assert "refunded" in member.inner_text().lower()  # its description from the model
    member.locator("button").click()
    assert page.input_value("[data-testid=question]") == "Refund rate"
    assert seen.problems == [], seen.problems


def test_chinese_renders_with_a_cjk_font(chat_api: LiveApi, watched: Any) -> None:
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    assert page.locator("[data-testid=send]").inner_text() == "Ask"
    turn = ask(page, "2024年各地区的GMV")
    assert page.locator("[data-testid=send]").inner_text() == "提问"
    assert "查看 SQL" in turn.locator("[data-testid=provenance] summary").inner_text()
    assert turn.locator("[data-testid=result-table] th").first.inner_text() == "地区"
    turn.locator("[data-testid=chart] svg").first.wait_for(timeout=30_000)
    # without a CJK font every Chinese character is drawn as the same empty box
    glyphs = page.evaluate("""() => ['华', '东', '地'].map((ch) => {
        const c = document.createElement('canvas'); c.width = 40; c.height = 40;
        const g = c.getContext('2d'); g.font = '32px ' + getComputedStyle(document.body).fontFamily;
        g.fillText(ch, 2, 32); return c.toDataURL(); })""")
    assert len(set(glyphs)) == 3
    page.click("[data-testid=lang-toggle]")
    assert page.locator("[data-testid=send]").inner_text() == "Ask"
    assert seen.problems == [], seen.problems


def test_a_server_that_needs_keys_asks_for_one(demo_ready: Any, pg_url: str, watched: Any) -> None:
    name = f"e2e-key-{uuid.uuid4().hex[:6]}"
    _, token = keys.create_key(pg_url, name)
    try:
        with running_api(api_settings(pg_url, api_require_keys=True), pg_url) as api:
            seen = watched(api.url)
            page = seen.page
            page.goto(api.url + "/")
            page.locator("[data-testid=suggestions]:has-text('API key')").wait_for(timeout=30_000)
            refused = ask(page, "GMV by region in 2024")
            assert "API key" in refused.locator("[data-testid=error]").inner_text()
            page.fill("[data-testid=api-key]", token)
            page.locator("[data-testid=api-key]").dispatch_event("change")
            page.locator("[data-testid=suggestion]").first.wait_for(state="attached", timeout=30_000)
            answered = ask(page, "GMV by region in 2024")
            assert answered.locator("[data-testid=result-table] tbody tr").count() == 8
    finally:
        keys.revoke_key(pg_url, name)
    assert [p for p in seen.problems if "401" not in p] == [], seen.problems

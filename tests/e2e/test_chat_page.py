"""The chat page in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

Ask a question, watch the stages, see the table and a rendered Vega-Lite chart, sort the table, open
the provenance panel, send thumbs-up feedback and find it in semlayer.query_log; then a Chinese question
switches the UI labels to Chinese.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cubesage_core import db
from tests.live_api import LiveApi, api_settings, running_api

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
STATIC = Path(__file__).resolve().parents[2] / "answer" / "api" / "static"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def chat_api(demo_ready: Any, pg_url: str) -> Iterator[LiveApi]:
    if not (STATIC / "vendor" / "vega-embed.min.js").exists():
        subprocess.run(["bash", str(STATIC.parent / "web" / "vendor.sh")], check=True, stdin=subprocess.DEVNULL)
    with running_api(api_settings(pg_url), pg_url) as api:
        yield api


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium chromium-driver"
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def test_ask_see_table_chart_provenance_and_send_feedback(chat_api: LiveApi, browser: Any, pg_url: str) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    external: list[str] = []
    page.on("request", lambda req: external.append(req.url) if not req.url.startswith(
        (chat_api.url, "data:")) else None)
    page.goto(chat_api.url + "/")
    page.fill("[data-testid=question]", "GMV by region in 2024")
    page.click("[data-testid=send]")

    turn = page.locator(".turn").nth(0)
    turn.locator("[data-testid=result-table] td").first.wait_for(timeout=60_000)
    assert turn.locator(".stages li.done").count() == 5
    assert turn.locator("[data-testid=answer-text]").inner_text().strip()
    rows = turn.locator("[data-testid=result-table] tbody tr")
    assert rows.count() >= 2
    turn.locator("[data-testid=chart] svg, [data-testid=chart] canvas").first.wait_for(timeout=30_000)
    assert turn.locator("[data-testid=chart] svg .mark-rect, [data-testid=chart] svg path").count() > 0

    # sorting: clicking the last (numeric) header twice gives descending numbers
    header = turn.locator("[data-testid=result-table] th").last
    header.click()
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    cells = turn.locator("[data-testid=result-table] tbody tr td:last-child").all_inner_texts()
    values = [float(c.replace(",", "")) for c in cells if c]
    assert values == sorted(values, reverse=True)

    turn.locator("[data-testid=provenance] summary").click()
    provenance = turn.locator("[data-testid=provenance]").inner_text()
    assert "Cube query" in provenance and "order_items.gmv" in provenance

    turn.locator("[data-testid=thumbs-up]").click()
    turn.locator("[data-testid=feedback-status]:has-text('Thanks')").wait_for(timeout=30_000)
    query_id = turn.get_attribute("data-query-id")
    with db.connection(pg_url) as conn:
        feedback = conn.execute("SELECT feedback FROM semlayer.query_log WHERE query_id = %s",
                                (query_id,)).fetchone()[0]
    assert feedback["verdict"] == "up"

    assert errors == [], errors
    assert external == [], f"the page fetched outside the app: {external}"
    page.close()


def test_chinese_question_switches_the_labels(chat_api: LiveApi, browser: Any) -> None:
    page = browser.new_page()
    page.goto(chat_api.url + "/")
    assert page.locator("[data-testid=send]").inner_text() == "Ask"
    page.fill("[data-testid=question]", "2024年各地区的GMV")
    page.click("[data-testid=send]")
    turn = page.locator(".turn").nth(0)
    turn.locator("[data-testid=result-table] td").first.wait_for(timeout=60_000)
    assert page.locator("[data-testid=send]").inner_text() == "提问"
    assert "查看 SQL" in turn.locator("[data-testid=provenance] summary").inner_text()
    page.click("[data-testid=lang-toggle]")
    assert page.locator("[data-testid=send]").inner_text() == "Ask"
    page.close()

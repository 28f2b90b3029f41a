"""Screenshots of the chat page and the dashboard for the README (``make screenshots``).

Builds the demo when it is missing (embedded PostgreSQL in ``CUBESAGE_DATA_DIR``, as ``cubesage demo``
does, relative dates at the demo data's last day), serves the API on a free loopback port, asks a few
questions in Debian's Chromium and writes ``chat.png`` and ``dashboard.png`` into ``--out``.

    .venv/bin/python -m tests.infra.screenshots --out docs/screenshots
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tests.infra.browser import CHROMIUM, CHROMIUM_ARGS, vendor

CHAT_QUESTIONS = ("华东地区本月GMV", "GMV by month in 2024 for East China vs South China")
TILES = ("GMV by month this year", "华东地区本月GMV", "GMV by region 2024 vs 2023", "refund rate by channel this year")
VIEWPORT = {"width": 1400, "height": 1250}


def _ask(page: Any, question: str) -> None:
    n = page.locator(".turn").count()
    page.fill("[data-testid=question]", question)
    page.click("[data-testid=send]")
    page.locator(".turn").nth(n).locator("[data-testid=chart] svg").first.wait_for(timeout=120_000)


def _pin(page: Any, question: str) -> None:
    n = page.locator("[data-testid=tile]").count()
    page.fill("[data-testid=pin-question]", question)
    page.click("[data-testid=pin-send]")
    page.locator("[data-testid=tile]").nth(n).locator("[data-testid=chart] svg").first.wait_for(timeout=120_000)


def shoot(base: str, out: Path) -> list[Path]:
    """Drive the pages at ``base``; the PNGs written."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=VIEWPORT, device_scale_factor=1).new_page()
        page.goto(base + "/")
        page.locator("[data-testid=suggestion]").first.wait_for(timeout=60_000)
        page.click("[data-testid=catalog-toggle]")
        page.locator("[data-testid=catalog-cube]").first.wait_for(timeout=60_000)
        page.locator("[data-testid=catalog-cube] summary", has_text="Order items").click()
        for question in CHAT_QUESTIONS:
            _ask(page, question)
        page.locator("#conversation").evaluate("(el) => { el.scrollTop = 0; }")
        written.append(out / "chat.png")
        page.screenshot(path=str(written[-1]))
        page.goto(base + "/dashboard")
        for question in TILES:
            _pin(page, question)
        page.wait_for_timeout(500)
        written.append(out / "dashboard.png")
        page.screenshot(path=str(written[-1]), full_page=True)
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args()
    from answer.api import create_app
    from cubesage_core import db
    from cubesage_core.settings import get_settings
    from demo.build import prepare_demo
    from demo.cli import use_demo_settings
    from tests.serve_app import serve_in_thread

    use_demo_settings()
    settings = get_settings().model_copy(update={"api_rate_limit_per_min": 0, "api_require_keys": False})
    url = db.database_url(settings)
    prepare_demo(settings, url, reload_warehouse=False)
    vendor()
    with serve_in_thread(create_app(settings, database_url=url), timeout=120) as base:
        for path in shoot(base, args.out):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

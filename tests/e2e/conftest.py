"""Browser-test fixtures: Debian's Chromium driven by Playwright, the chat API on the session database, and
pages that record every console error, page error and request leaving the app."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.infra.browser import CHROMIUM, CHROMIUM_ARGS, vendor
from tests.live_api import LiveApi, api_settings, running_api

NOISE = ("Password field is not contained in a form",)  # Chromium's verbose DOM hint about the API-key field


@dataclass
class Watched:
    """A page with what went wrong on it: console errors and warnings, page errors, outside requests."""

    page: Any
    problems: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Per module: Playwright's sync API keeps an event loop running in this thread while it is open, which
    later asyncio tests of the session cannot share."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "install Debian's chromium: bash tests/infra/install_browser.sh"
    vendor()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def chat_api(demo_ready: Any, pg_url: str) -> Iterator[LiveApi]:
    vendor()
    with running_api(api_settings(pg_url), pg_url) as api:
        yield api


@pytest.fixture
def watched(browser: Any) -> Iterator[Callable[..., Watched]]:
    contexts: list[Any] = []

    def open_page(base: str = "", **options: Any) -> Watched:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True, **options)
        contexts.append(context)
        page = context.new_page()
        seen = Watched(page)
        page.on(
            "console",
            lambda m: (
                seen.problems.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") and not any(n in m.text for n in NOISE)
                else None
            ),
        )
        page.on("pageerror", lambda err: seen.problems.append(f"pageerror: {err}"))
        page.on(
            "request",
            lambda req: (
                seen.outside.append(req.url) if base and not req.url.startswith((base, "data:", "blob:")) else None
            ),
        )
        return seen

    yield open_page
    for context in contexts:
        context.close()

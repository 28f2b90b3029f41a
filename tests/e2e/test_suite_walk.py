"""Every case of the demo regression suite (dev and test) asked in the chat page in Chromium: each answer
with rows shows a chart or KPI card and its table, each refusal its text; no console error on the way."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from answer.regress import load_suite
from cubesage_core.settings import REPO_ROOT
from tests.live_api import TODAY, LiveApi

pytestmark = pytest.mark.e2e
SUITE = load_suite(REPO_ROOT / "demo" / "regress" / "suite.yaml")


def test_every_suite_case_renders_a_chart_or_kpi_card_and_a_table(chat_api: LiveApi, watched: Any) -> None:
    assert SUITE.today == TODAY  # the API resolves relative dates as the suite does
    seen = watched(chat_api.url)
    page = seen.page
    page.goto(chat_api.url + "/")
    shapes: Counter[str] = Counter()
    missing: dict[str, str] = {}
    for case in SUITE.cases:
        page.click("[data-testid=new-session]")  # every case on its own, as the suite asks them
        page.fill("[data-testid=question]", case.question)
        page.click("[data-testid=send]")
        turn = page.locator(".turn").first
        turn.locator("[data-testid=answer-text]:not(:empty), [data-testid=error]:not([hidden])").first.wait_for(
            timeout=60_000
        )
        rows = turn.locator("[data-testid=result-table] tbody tr").count()
        if not rows:
            shapes["text only (refusal)"] += 1
            if not turn.locator("[data-testid=answer-text]").inner_text().strip():
                missing[case.id] = "no answer text"
            continue
        chart = turn.locator("[data-testid=chart] svg")
        try:
            chart.first.wait_for(timeout=15_000)
        except Exception:  # reported below with every other case that lacks one
            missing[case.id] = f"{rows} rows but no chart"
            continue
        shapes[turn.locator("[data-testid=chart]").get_attribute("data-shape") or "?"] += 1
    print(dict(shapes))
    assert not missing, missing
    assert sum(shapes.values()) == len(SUITE.cases)
    assert seen.problems == [], seen.problems[:10]

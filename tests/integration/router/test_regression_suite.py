"""The regression suite on the session DB (demo scale 1, fast mode) meets the issue's targets."""

from __future__ import annotations

import time
from datetime import date
from typing import Any

import pytest
from pydantic import SecretStr

from answer.regress import load_suite, run_suite, summarize
from cubesage_core.settings import REPO_ROOT, Settings

pytestmark = pytest.mark.integration
SUITE = REPO_ROOT / "demo" / "regress" / "suite.yaml"


def test_suite_shape() -> None:
    suite = load_suite(SUITE)
    intents = [c.intent for c in suite.cases]
    assert len(suite.cases) >= 100 and suite.today == date(2025, 6, 30)
    assert intents.count("aggregate") >= 35 and intents.count("detail") >= 25 and intents.count("mixed") >= 15
    assert intents.count("unsupported") + intents.count("clarify") >= 8


def _numbers_not_in_table(answer: dict[str, Any]) -> list[str]:
    """Number tokens of the answer text that are no number of its table or of its filters (dates and period
    labels aside); a percent in the text must be a value of a percent column times 100, written by
    ``fmt_percent``, or the change between two compared periods that provenance ``changes`` derives from table
    numbers."""
    from answer.formatting import change_numbers, cut_numbers, filter_numbers, stray_numbers, table_numbers

    table = answer["table"]
    allowed = table_numbers(table["columns"], table["rows"], table.get("formats"))
    allowed |= change_numbers(answer["provenance"].get("changes"))  # compared periods: change of two table numbers
    allowed |= cut_numbers(answer["provenance"].get("truncation"))  # "5,000 of 5,872 are shown": counted totals
    provenance = answer["provenance"]  # "products listed under 500": the filters the answer declares
    allowed |= filter_numbers([provenance.get("cube_query"), (provenance.get("detail_plan") or {}).get("cube_query")])
    labels = tuple(tr["label"] for tr in answer["provenance"].get("understanding", {}).get("time_ranges", []))
    return stray_numbers(answer["text"], allowed, labels)


def test_regression_suite_meets_targets(demo_ready: Any, pg_url: str) -> None:
    """Intent accuracy and pass rate on the dev split (the split rules are tuned on; the test split is read only
    for its totals, by `cubesage regress --split test`), from startup; every number of an answer's text is in its
    table. Latency is measured by `cubesage bench e2e` and `cubesage regress`, not asserted here."""
    from answer.service import Cubesage

    suite = load_suite(SUITE).select("dev")
    answers: list[dict[str, Any]] = []
    started = time.perf_counter()
    with Cubesage(Settings(database_url=SecretStr(pg_url)), url=pg_url) as service:

        def ask(question: str, **kwargs: Any) -> dict[str, Any]:
            answers.append(service.ask(question, **kwargs).to_dict())
            return answers[-1]

        results = list(run_suite(suite, ask, pg_url))
        summary = summarize(results, time.perf_counter() - started, service.startup_ms)
    failures = "\n".join(f"{r.id}: {r.outcome}: {r.reason}" for r in results if not r.passed)
    print(summary, failures, sep="\n")
    stray = {a["question"]: n for a in answers if not a["provenance"].get("error") and (n := _numbers_not_in_table(a))}
    assert not stray, f"answer text numbers that are not table numbers: {stray}"
    # the first 106 dev cases have been tuned on longest: no wrong answer there, and nearly all pass
    first = [
        r for r in results if not r.id.startswith(("d2-", "d3-", "d8-", "d9-", "d10-", "d11-", "d12-", "d13-", "d14-"))
    ]  # d8- .. d14-: blind batches of 2026-12-04 to 07
    assert sum(r.passed for r in first) / len(first) >= 0.95, failures
    assert not [r for r in first if r.outcome == "wrong"], failures
    # the whole dev split, with the second blind batch (the numbers are reported by `make bench-regress`)
    assert summary["pass_rate"] >= 0.75 and summary["intent_accuracy"] >= 0.80, failures

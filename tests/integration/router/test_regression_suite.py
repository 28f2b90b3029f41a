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


def test_regression_suite_meets_targets(demo_ready: Any, pg_url: str) -> None:
    from answer.service import Cubesage

    started = time.perf_counter()
    with Cubesage(Settings(database_url=SecretStr(pg_url)), url=pg_url) as service:
        service.ask("warm up: GMV last month", today=date(2025, 6, 30), mode="fast")
        results = list(run_suite(load_suite(SUITE), service.ask, pg_url))
        summary = summarize(results, time.perf_counter() - started, service.startup_ms)
    failures = "\n".join(f"{r.id}: {r.reason}" for r in results if not r.passed)
    print(summary, failures, sep="\n")
    assert summary["intent_accuracy"] >= 0.95, failures
    assert summary["answer_accuracy"] >= 0.90, failures
    assert summary["latency_p50_ms"] < 150 and summary["latency_p95_ms"] < 400, summary
    assert summary["elapsed_s"] < 60, summary

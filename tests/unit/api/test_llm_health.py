"""/readyz shows the LLM endpoint's circuit breaker (open = degraded, LLM mode paused); /metrics counts calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cubesage_core.llm import two_mode, using_settings
from cubesage_core.settings import Settings
from tests.llm_stub import openai_stub


def _fail_calls(settings: Settings, n: int) -> None:
    import dspy

    class Echo(dspy.Signature):
        """Answer."""

        question: str = dspy.InputField()
        answer: str = dspy.OutputField()

    with using_settings(settings):
        for _ in range(n):
            two_mode(lambda: dspy.Predict(Echo)(question="q").answer, lambda: "fast", step="probe")


def test_readyz_reports_the_breaker_and_metrics_count_the_failures(make_api: Callable[..., Any]) -> None:
    with openai_stub(["unused"]) as stub:
        config = {
            "llm_url": stub.url,
            "llm_model": "openai/health",
            "llm_breaker_failures": 2,
            "llm_breaker_pause_s": 60.0,
        }
        api = make_api(**config)
        ready = api.client.get("/readyz").json()
        assert ready["status"] == "ready" and ready["checks"]["llm"]["breaker"]["state"] == "closed"
        stub.faults.down = True
        _fail_calls(Settings(**config), 2)
        paused = api.client.get("/readyz")
        metrics = api.client.get("/metrics")
    llm = paused.json()["checks"]["llm"]
    assert paused.status_code == 200 and paused.json()["status"] == "degraded"
    assert llm["ok"] is False and "circuit open" in llm["error"] and llm["breaker"]["state"] == "open"
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    assert f'cubesage_llm_breaker_open{{endpoint="openai/health@{stub.url}"}} 1' in metrics.text
    assert 'cubesage_llm_fallbacks_total{step="probe",cause="error"}' in metrics.text


def test_readyz_reports_a_model_the_lm_refuses(make_api: Callable[..., Any]) -> None:
    with openai_stub(["unused"]) as stub:
        ready = make_api(llm_url=stub.url, llm_model="openai/").client.get("/readyz").json()
    assert ready["status"] == "degraded" and "no model id" in ready["checks"]["llm"]["error"]

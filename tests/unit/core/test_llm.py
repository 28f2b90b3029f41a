"""LLM wiring: model families, fallback on any error, circuit breaker, deadline, call budget, concurrency."""

from __future__ import annotations

import socket
import threading
import time

import dspy
import pytest
from pydantic import ValidationError

from cubesage_core.llm import (
    QuestionBudget,
    get_lm,
    metrics_text,
    model_family,
    question_budget,
    run_concurrently,
    two_mode,
    using_budget,
    using_settings,
)
from cubesage_core.llm._breaker import CircuitBreaker
from cubesage_core.settings import Settings
from tests.llm_stub import STALL, dspy_reply, openai_stub


class Echo(dspy.Signature):
    """Answer the question."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def _ask(question: str = "q") -> str:
    return dspy.Predict(Echo)(question=question).answer


def _settings(url: str, **kwargs: object) -> Settings:
    return Settings(llm_url=url, llm_model=str(kwargs.pop("llm_model", "openai/stub")), **kwargs)


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def test_no_endpoint_means_fast_mode() -> None:
    with using_settings(Settings(llm_url=None)):
        assert get_lm() is None
        result = two_mode(lambda: "llm", lambda: "fast", step="t")
        with question_budget(Settings(llm_url=None), use_llm=True) as budget:
            asked = two_mode(lambda: "llm", lambda: "fast", step="t")
    assert (result.value, result.mode, result.label) == ("fast", "fast", "fast")
    assert asked.label == "fast (no llm endpoint configured)" and budget.report()["steps"][0]["step"] == "t"


@pytest.mark.parametrize(
    "model",
    [
        "openai/o3-mini",
        "openai/gpt-5",
        "openai/gpt-5-mini",
        "azure/o4-mini",
        "openai/gpt-5.1",
        "openai/gpt-4o-mini",
        "openai/gpt-5-chat",
        "openai/stub",
    ],
)
def test_model_family_agrees_with_dspy(model: str) -> None:
    from dspy.clients.lm import _is_openai_reasoning_model

    assert (model_family(model) == "reasoning") == _is_openai_reasoning_model(model)


@pytest.mark.parametrize("model", ["openai/o3-mini", "openai/gpt-5-mini"])
def test_reasoning_models_get_the_parameters_dspy_accepts(model: str) -> None:
    """dspy.LM refuses temperature=0/max_tokens=1024 for these names; the family settings answer in LLM mode."""
    with pytest.raises(dspy.utils.exceptions.LMConfigurationError):
        dspy.LM(model=model, temperature=0.0, max_tokens=1024)
    with openai_stub([dspy_reply(answer="42")]) as stub, using_settings(_settings(stub.url, llm_model=model)):
        result = two_mode(_ask, lambda: "fast", step="t")
    sent = stub.requests[0]
    assert result.value == "42" and result.mode == "llm"
    assert sent.get("temperature") in (None, 1.0) and sent["max_completion_tokens"] >= 16000
    assert sent["reasoning_effort"] == "low" and "max_tokens" not in sent


def test_reasoning_effort_can_be_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUBESAGE_LLM_REASONING_EFFORT", "")
    with openai_stub([dspy_reply(answer="42")]) as stub:
        settings = _settings(stub.url, llm_model="openai/o3-mini")
        with using_settings(settings):
            assert two_mode(_ask, lambda: "fast", step="t").mode == "llm"
    assert settings.llm_reasoning_effort is None and "reasoning_effort" not in stub.requests[0]


def test_chat_models_get_temperature_zero_and_the_token_cap() -> None:
    with openai_stub([dspy_reply(answer="a")]) as stub, using_settings(_settings(stub.url, llm_max_tokens=512)):
        assert two_mode(_ask, lambda: "fast", step="t").mode == "llm"
    sent = stub.requests[0]
    assert sent["temperature"] == 0.0 and sent["max_completion_tokens"] == 512 and "reasoning_effort" not in sent


def test_reasoning_token_budget_below_the_dspy_floor_is_a_settings_error() -> None:
    with pytest.raises(ValidationError, match="16000"):
        Settings(llm_reasoning_max_tokens=4000)


def test_lm_construction_error_falls_back_and_is_recorded() -> None:
    settings = _settings("http://127.0.0.1:9/v1", llm_model="openai/")  # dspy.LM: provider prefix without model
    with using_settings(settings), question_budget(settings) as budget:
        result = two_mode(_ask, lambda: "fast answer", step="intent")
    assert result.value == "fast answer"
    assert result.label.startswith("fast (llm error: ValueError: ") and "no model id" in result.label
    assert budget.report()["steps"] == [
        {
            "step": "intent",
            "mode": result.label,
            "calls": 0,
            "ms": pytest.approx(budget.steps[0].ms),
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
    ]


def test_endpoint_down_falls_back_with_the_transport_error() -> None:
    settings = _settings(_closed_port_url())
    with using_settings(settings), question_budget(settings) as budget:
        result = two_mode(_ask, lambda: "fast", step="t")
    assert result.value == "fast" and result.label.startswith("fast (llm error: LlmCallError: ")
    assert budget.report()["calls"] == 1


def test_breaker_opens_after_consecutive_failures_and_closes_after_the_pause() -> None:
    with openai_stub([dspy_reply(answer="up again")]) as stub:
        settings = _settings(stub.url, llm_breaker_failures=2, llm_breaker_pause_s=0.3)
        stub.faults.down = True
        with using_settings(settings):
            down = [two_mode(_ask, lambda: "fast", step="t") for _ in range(2)]
            assert len(stub.requests) == 2 and all("LlmCallError" in r.label for r in down)
            paused = two_mode(_ask, lambda: "fast", step="t")
            assert paused.label.startswith("fast (llm paused: circuit open") and len(stub.requests) == 2
            assert 'cubesage_llm_breaker_open{endpoint="openai/stub@' + stub.url + '"} 1' in metrics_text()
            stub.faults.down = False
            time.sleep(0.4)  # the pause is over: one trial call goes through and closes the breaker
            trial = two_mode(_ask, lambda: "fast", step="t")
            after = two_mode(_ask, lambda: "fast", step="t")
    assert (trial.mode, trial.value, after.mode) == ("llm", "up again", "llm") and len(stub.requests) == 4
    assert 'cubesage_llm_breaker_open{endpoint="openai/stub@' + stub.url + '"} 0' in metrics_text()


def test_breaker_half_open_failure_reopens() -> None:
    now = {"t": 0.0}
    breaker = CircuitBreaker(failures=1, pause_s=10, clock=lambda: now["t"])
    breaker.failure()
    assert breaker.allow() and breaker.state().state == "open"
    now["t"] = 11
    assert breaker.allow() is None and "trial" in (breaker.allow() or "")  # one trial at a time
    breaker.failure()
    assert breaker.state().state == "open" and breaker.state().opened_total == 2
    now["t"] = 22
    assert breaker.allow() is None
    breaker.success(0.1)
    assert breaker.state().state == "closed" and breaker.allow() is None


def test_the_deadline_stops_starting_calls_when_too_little_time_is_left() -> None:
    """The question's clock is injected: each call "takes" 1.0 s of it, so no real latency decides the outcome."""
    now = {"t": 100.0}
    with openai_stub([dspy_reply(answer="slow")]) as stub:
        settings = _settings(stub.url, llm_deadline_s=2.6)
        budget = QuestionBudget(settings.llm_deadline_s, settings.llm_max_calls, clock=lambda: now["t"])
        with using_settings(settings), using_budget(budget):
            modes = []
            for i in range(3):
                modes.append(two_mode(_ask, lambda: "fast", step=f"s{i}").label)
                now["t"] += 1.0
    report = budget.report()
    assert modes[:2] == ["llm", "llm"] and modes[2].startswith("fast (deadline: 2.0 s of 2.6 s used")
    assert len(stub.requests) == 2 and report["call_starts_s"] == [0.0, 1.0]


def test_the_expected_latency_of_a_slow_endpoint_stops_a_call_that_would_overrun() -> None:
    with openai_stub([dspy_reply(answer="slow")]) as stub:
        settings = _settings(stub.url, llm_deadline_s=2.6)
        from cubesage_core.llm._client import breaker_for

        breaker_for(settings).success(1.5)  # the endpoint has been answering in 1.5 s
        labels = []
        for elapsed in (0.8, 0.0):  # 1.3 s left before the reserve (too little), then 2.1 s (enough)
            budget = QuestionBudget(settings.llm_deadline_s, settings.llm_max_calls, clock=lambda e=elapsed: e)
            budget.started = 0.0
            with using_settings(settings), using_budget(budget):
                labels.append(two_mode(_ask, lambda: "fast", step="s").label)
    assert labels[0].startswith("fast (deadline: 0.8 s of 2.6 s used") and labels[1] == "llm"
    assert len(stub.requests) == 1


def test_a_call_longer_than_the_deadline_is_cut_and_not_counted_by_the_breaker() -> None:
    with openai_stub([STALL]) as stub:
        settings = _settings(stub.url, llm_deadline_s=1.5, llm_breaker_failures=1)
        with using_settings(settings), question_budget(settings):
            cut = two_mode(_ask, lambda: "fast", step="t")
        from cubesage_core.llm._client import breaker_for

        state = breaker_for(settings).state()
    assert cut.label.startswith("fast (deadline: the call was cut after ")
    assert state.state == "closed" and state.consecutive_failures == 0


def test_the_call_budget_bounds_calls_per_question() -> None:
    with openai_stub([dspy_reply(answer="a")]) as stub:
        settings = _settings(stub.url, llm_max_calls=2)
        with using_settings(settings), question_budget(settings) as budget:
            modes = [two_mode(_ask, lambda: "fast", step="t").label for _ in range(3)]
    assert modes == ["llm", "llm", "fast (call budget: 2 LLM calls used)"] and len(stub.requests) == 2
    assert budget.report()["prompt_tokens"] > 0 and budget.report()["completion_tokens"] > 0


def test_independent_steps_run_concurrently() -> None:
    """The stub answers only once both requests are in: sequential calls would time out and fall back."""
    both_in = threading.Barrier(2, timeout=3)

    def script(body: dict) -> str:
        try:
            both_in.wait()
        except threading.BrokenBarrierError:
            return "not concurrent"
        return dspy_reply(answer="together")

    with openai_stub(script) as stub:
        settings = _settings(stub.url, llm_deadline_s=8)
        with using_settings(settings), question_budget(settings) as budget:
            results = run_concurrently(
                lambda: two_mode(_ask, lambda: "fast", step="a"), lambda: two_mode(_ask, lambda: "fast", step="b")
            )
    assert [r.label for r in results] == ["llm", "llm"] and [r.value for r in results] == ["together"] * 2
    assert sorted((s.step, s.calls) for s in budget.steps) == [("a", 1), ("b", 1)]  # each step counts its own


def test_question_choice_applies_to_steps_asked_without_use_llm() -> None:
    with openai_stub([dspy_reply(answer="a")]) as stub:
        settings = _settings(stub.url)
        with using_settings(settings), question_budget(settings, use_llm=False):
            result = two_mode(_ask, lambda: "fast", step="t")
    assert result.label == "fast" and not stub.requests


def test_fast_only_blocks_answer_without_calling_the_endpoint() -> None:
    from cubesage_core.llm import fast_only, wants_llm

    with openai_stub([dspy_reply(answer="llm")]) as stub:
        settings = _settings(stub.url)
        with using_settings(settings), question_budget(settings) as budget:
            with fast_only():
                inside = (two_mode(_ask, lambda: "fast", step="t"), wants_llm())
            after = two_mode(_ask, lambda: "fast", step="t")
    assert (inside[0].label, inside[0].value, inside[1]) == ("fast", "fast", False)
    assert (after.label, after.value) == ("llm", "llm") and len(stub.requests) == 1
    assert [s.step for s in budget.steps] == ["t"]  # the fast-only step is no fallback of the question

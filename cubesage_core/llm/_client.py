"""The ``dspy.LM`` of an endpoint, guarded: every call is charged to the question's budget, gets what
is left of the deadline as its timeout, and reports to the endpoint's circuit breaker and the metrics."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import dspy

from cubesage_core.llm import _metrics
from cubesage_core.llm._breaker import CircuitBreaker
from cubesage_core.llm._budget import BudgetExhausted, QuestionBudget, _Counters, current_budget, current_step
from cubesage_core.llm._family import lm_kwargs
from cubesage_core.settings import Settings

CUT_SHARE = 0.95  # a call that ran this share of a deadline-shortened timeout was cut by the deadline


class LlmCallError(RuntimeError):
    """The endpoint failed a call (transport, HTTP or timeout): counted by the circuit breaker."""


class LlmPaused(RuntimeError):
    """The endpoint's circuit breaker is open."""


@dataclass(frozen=True)
class Endpoint:
    url: str
    model: str
    key: str

    @property
    def name(self) -> str:
        return f"{self.model}@{self.url}"


_breakers: dict[tuple[Endpoint, int, float], CircuitBreaker] = {}
_lms: dict[tuple[Endpoint, tuple[tuple[str, Any], ...]], GuardedLM] = {}
_lock = threading.Lock()


def endpoint_of(settings: Settings) -> Endpoint | None:
    if not settings.llm_url:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
    return Endpoint(settings.llm_url, settings.llm_model, key)


def breaker_for(settings: Settings) -> CircuitBreaker | None:
    endpoint = endpoint_of(settings)
    if endpoint is None:
        return None
    key = (endpoint, settings.llm_breaker_failures, settings.llm_breaker_pause_s)
    with _lock:
        if key not in _breakers:
            _breakers[key] = CircuitBreaker(settings.llm_breaker_failures, settings.llm_breaker_pause_s)
        return _breakers[key]


def breakers() -> dict[str, dict[str, object]]:
    """State of the breaker of every endpoint used in this process."""
    with _lock:
        return {key[0].name: b.state().to_dict() for key, b in _breakers.items()}


class GuardedLM(dspy.LM):
    """``dspy.LM`` whose calls go through the question budget and the endpoint's breaker."""

    breaker: CircuitBreaker
    call_timeout_s: float

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        budget = current_budget() or QuestionBudget(self.call_timeout_s, 1)
        paused = self.breaker.allow()
        if paused:
            raise LlmPaused(paused)
        try:
            timeout = budget.take_call(self.call_timeout_s, self.breaker.expected_latency())
        except BudgetExhausted:
            self.breaker.release()
            raise
        kwargs["timeout"] = timeout
        if (step := current_step()) is not None:
            step.calls += 1
        started = time.monotonic()
        try:
            out = super().__call__(prompt, messages=messages, **kwargs)
        except Exception as err:
            elapsed = time.monotonic() - started
            budget.add(_Counters(call_ms=elapsed * 1000))
            if timeout < self.call_timeout_s and elapsed >= CUT_SHARE * timeout:
                self.breaker.release()
                _metrics.count_call("deadline", elapsed)
                raise BudgetExhausted(f"deadline: the call was cut after {elapsed:.1f} s") from err
            self.breaker.failure()
            _metrics.count_call("error", elapsed)
            raise LlmCallError(f"{type(err).__name__}: {err}") from err
        elapsed = time.monotonic() - started
        self.breaker.success(elapsed)
        budget.add(_Counters(call_ms=elapsed * 1000))
        _metrics.count_call("ok", elapsed)
        return out


def build_lm(settings: Settings) -> GuardedLM | None:
    """The guarded LM of ``settings`` (built once per endpoint and parameters), or None without an endpoint.
    Raises what ``dspy.LM`` raises for parameters the model refuses."""
    endpoint = endpoint_of(settings)
    if endpoint is None:
        return None
    params = lm_kwargs(settings)
    cache_key = (
        endpoint,
        (
            *sorted(params.items()),
            ("timeout", settings.llm_timeout_s),
            ("breaker", (settings.llm_breaker_failures, settings.llm_breaker_pause_s)),
        ),
    )
    with _lock:
        lm = _lms.get(cache_key)
    if lm is not None:
        return lm
    lm = GuardedLM(
        model=endpoint.model,
        api_base=endpoint.url,
        api_key=endpoint.key or "none",
        timeout=settings.llm_timeout_s,
        num_retries=0,
        cache=False,
        **params,
    )
    lm.breaker = breaker_for(settings)  # type: ignore[assignment]
    lm.call_timeout_s = settings.llm_timeout_s
    with _lock:
        return _lms.setdefault(cache_key, lm)

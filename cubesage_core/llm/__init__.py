"""LLM wiring through DSPy: every LLM step has a deterministic fast twin, and a production endpoint
cannot make a question fail or hang.

``two_mode(llm_step, fast_step, step=...)`` runs the DSPy step when an endpoint is configured and
wanted, else, or on any error (LM construction, transport, timeout, parsing, validation), the fast
step; the step's mode and cost are recorded in the question's budget (``question_budget``), which
also holds the per-question deadline and call budget. The endpoint's circuit breaker pauses LLM mode
after repeated failed calls. LM parameters follow the model family (``_family``).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from cubesage_core.llm import _metrics
from cubesage_core.llm._budget import (
    BudgetExhausted,
    QuestionBudget,
    StepCost,
    _Counters,
    current_budget,
    question_budget,
    step_cost,
    using_budget,
)
from cubesage_core.llm._family import model_family
from cubesage_core.settings import Settings, get_settings

__all__ = [
    "BudgetExhausted",
    "ModeResult",
    "QuestionBudget",
    "breaker_state",
    "breaker_states",
    "current_budget",
    "fast_only",
    "get_lm",
    "in_context",
    "metrics_text",
    "model_family",
    "observe_steps",
    "question_budget",
    "record_fallback",
    "run_concurrently",
    "two_mode",
    "using_settings",
    "wants_llm",
]

T = TypeVar("T")
log = logging.getLogger(__name__)
REASON_CHARS = 300
_ACTIVE_SETTINGS: ContextVar[Settings | None] = ContextVar("cubesage_llm_settings", default=None)
_FAST_ONLY: ContextVar[bool] = ContextVar("cubesage_llm_fast_only", default=False)
_observer: Callable[[str, Callable[[], Any]], None] | None = None
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cubesage-llm")


@contextmanager
def using_settings(settings: Settings) -> Iterator[None]:
    """Make ``settings`` the LLM configuration of every step run inside the block (this context only)."""
    token = _ACTIVE_SETTINGS.set(settings)
    try:
        yield
    finally:
        _ACTIVE_SETTINGS.reset(token)


@contextmanager
def fast_only() -> Iterator[None]:
    """Every step run inside the block (this context only) answers in fast mode, with no LLM call and no
    fallback recorded: for work that is not the question's own LLM step (a search another step reads)."""
    token = _FAST_ONLY.set(True)
    try:
        yield
    finally:
        _FAST_ONLY.reset(token)


def _settings(settings: Settings | None = None) -> Settings:
    return settings or _ACTIVE_SETTINGS.get() or get_settings()


def get_lm(settings: Settings | None = None) -> Any:
    """The guarded DSPy LM of ``settings`` (else the active ``using_settings`` block's, else the process's),
    or None without an endpoint. Raises ``dspy`` configuration errors for parameters the model refuses."""
    from cubesage_core.llm._client import build_lm

    return build_lm(_settings(settings))


def wants_llm(use_llm: bool | None = None) -> bool:
    """Whether a step asked with ``use_llm`` would try the LLM (an endpoint is set and the question allows it)."""
    budget = current_budget()
    wanted = use_llm if use_llm is not None else (budget.use_llm if budget is not None else None)
    return wanted is not False and not _FAST_ONLY.get() and bool(_settings().llm_url)


@dataclass
class ModeResult(Generic[T]):
    value: T
    mode: str  # "llm" | "fast"
    fallback_reason: str | None = None

    @property
    def label(self) -> str:
        """``llm``, ``fast`` or ``fast (<why the LLM did not answer>)``."""
        return f"fast ({self.fallback_reason})" if self.mode == "fast" and self.fallback_reason else self.mode


class _StepMeter:
    """DSPy's usage tracker for one step: the tokens of its calls, added to the question's budget."""

    def __init__(self, budget: QuestionBudget) -> None:
        self.budget = budget
        self.prompt_tokens = self.completion_tokens = 0

    def add_usage(self, lm: str, usage: dict[str, Any]) -> None:
        prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.budget.add(_Counters(prompt_tokens=prompt, completion_tokens=completion))
        _metrics.count_tokens(prompt, completion)


_CAUSES = (("llm error", "error"), ("llm paused", "paused"), ("deadline", "deadline"), ("call budget", "budget"))


def _cause(reason: str) -> str:
    """The metrics label of a fallback reason: error | paused | deadline | budget."""
    return next((cause for prefix, cause in _CAUSES if reason.startswith(prefix)), "error")


def _run_llm(llm_step: Callable[[], T], step: str, settings: Settings, budget: QuestionBudget) -> T:
    import dspy

    meter = _StepMeter(budget)
    started = time.monotonic()
    cost = StepCost(step, "llm")
    try:
        lm = get_lm(settings)
        with step_cost(cost), dspy.context(lm=lm.copy(), adapter=_adapter(), usage_tracker=meter):
            return llm_step()
    except Exception as err:
        cost.mode = f"fast ({_reason(err)})"
        raise
    finally:
        cost.ms = round((time.monotonic() - started) * 1000, 1)
        cost.prompt_tokens, cost.completion_tokens = meter.prompt_tokens, meter.completion_tokens
        budget.record(cost)


@lru_cache(maxsize=1)
def _adapter() -> Any:
    """ChatAdapter without the JSON-adapter retry: one failed parse is one call, re-asked by the step."""
    import dspy

    return dspy.ChatAdapter(use_json_adapter_fallback=False)


def _reason(err: BaseException) -> str:
    from cubesage_core.llm._client import LlmPaused

    if isinstance(err, BudgetExhausted | LlmPaused):
        return str(err)[:REASON_CHARS]
    return f"llm error: {type(err).__name__}: {err}"[:REASON_CHARS]


def _skip_reason(settings: Settings, budget: QuestionBudget) -> str | None:
    from cubesage_core.llm._client import breaker_for

    breaker = breaker_for(settings)
    state = breaker.state() if breaker is not None else None
    if state is not None and state.state == "open":
        return f"llm paused: circuit open, retry in {state.retry_in_s:.0f} s"
    return budget.blocked(breaker.expected_latency() if breaker is not None else None)


def two_mode(
    llm_step: Callable[[], T], fast_step: Callable[[], T], *, step: str, use_llm: bool | None = None
) -> ModeResult[T]:
    """Run ``llm_step`` under the configured LM when wanted (``use_llm``, else the question's choice, else
    whenever an endpoint is set); ``fast_step`` otherwise and on any failure, with the reason."""
    settings = _settings()
    budget = current_budget()
    wanted = use_llm if use_llm is not None else (budget.use_llm if budget is not None else None)
    if wanted is False or _FAST_ONLY.get() or not settings.llm_url:
        reason = "no llm endpoint configured" if wanted and not settings.llm_url else None
        if reason and budget is not None:
            budget.record(StepCost(step, f"fast ({reason})"))
        return ModeResult(fast_step(), "fast", reason)
    own = budget is None  # a step asked outside a question: its own budget
    budget = budget or QuestionBudget.of(settings)
    reason = _skip_reason(settings, budget)
    if reason is None:
        if _observer is not None:
            _observer(step, fast_step)
        try:
            with using_budget(budget) if own else nullcontext():
                return ModeResult(_run_llm(llm_step, step, settings, budget), "llm")
        except Exception as err:
            reason = _reason(err)
            log.warning("LLM step %s fell back to fast mode: %s", step, reason)
    else:
        budget.record(StepCost(step, f"fast ({reason})"))
    _metrics.count_fallback(step, _cause(reason))
    return ModeResult(fast_step(), "fast", reason)


def record_fallback(step: str, reason: str) -> None:
    """Record that ``step``'s LLM answer was dropped after it ran (a later check refused it, the fast twin
    answers): in the question's budget (provenance) and the fallback metrics."""
    budget = current_budget()
    if budget is not None:
        budget.record(StepCost(step, f"fast ({reason})"))
    _metrics.count_fallback(step, _cause(reason))


@contextmanager
def observe_steps(observer: Callable[[str, Callable[[], Any]], None]) -> Iterator[None]:
    """Call ``observer(step, fast_step)`` before every LLM step (the replay recorder scripts the stub's
    answer from the fast twin's). Process-wide; for tools, not for serving."""
    global _observer
    previous, _observer = _observer, observer
    try:
        yield
    finally:
        _observer = previous


def in_context(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` bound to a copy of the current context (settings, question budget), for another thread."""
    context = contextvars.copy_context()
    return lambda *args, **kwargs: context.run(fn, *args, **kwargs)


def run_concurrently(*steps: Callable[[], Any]) -> list[Any]:
    """Run independent steps (LLM calls) at the same time, each in a copy of the current context; the first
    runs in this thread. Results in order; the first exception is raised after all have finished."""
    futures = [_pool.submit(in_context(s)) for s in steps[1:]]
    first: list[Any] = []
    error: BaseException | None = None
    try:
        first.append(steps[0]())
    except BaseException as err:  # re-raised after the others are done: no step left running unseen
        error = err
    results = []
    for future in futures:
        try:
            results.append(future.result())
        except BaseException as err:
            error = error or err
    if error is not None:
        raise error
    return first + results


def breaker_state(settings: Settings | None = None) -> dict[str, object] | None:
    """The circuit breaker of the configured endpoint (None without an endpoint)."""
    from cubesage_core.llm._client import breaker_for

    breaker = breaker_for(_settings(settings))
    return breaker.state().to_dict() if breaker is not None else None


def breaker_states() -> dict[str, dict[str, object]]:
    """The circuit breaker of every LLM endpoint this process used (for /readyz)."""
    from cubesage_core.llm._client import breakers

    return breakers()


def metrics_text() -> str:
    """Prometheus text of the LLM counters and breakers (for /metrics)."""
    return _metrics.prometheus(breaker_states())

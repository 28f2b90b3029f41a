"""The LLM budget of one question: a deadline, a call budget, and what every step cost.

``question_budget(settings, use_llm=...)`` opens it (the API and CLI do, per question); every LLM call
inside takes its timeout from what is left of the deadline (minus a reserve for the deterministic
steps after it) and counts against ``llm_max_calls``. A call that cannot start raises
:class:`BudgetExhausted`, and the step falls back to fast mode. ``report()`` goes into provenance.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from cubesage_core.settings import Settings

RESERVE_S = 0.5  # kept after the last LLM call for the deterministic steps that follow it
MIN_CALL_S = 0.2  # a call is not started with less time than this left


class BudgetExhausted(RuntimeError):
    """The question's deadline or call budget leaves no room for another LLM call."""


@dataclass
class StepCost:
    """What one LLM step of a question used and how it ended (``mode``: llm, or fast with the reason)."""

    step: str
    mode: str
    calls: int = 0
    ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class _Counters:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    call_ms: float = 0.0


@dataclass
class QuestionBudget:
    deadline_s: float
    max_calls: int
    use_llm: bool | None = None
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    steps: list[StepCost] = field(default_factory=list)
    totals: _Counters = field(default_factory=_Counters)
    call_starts_s: list[float] = field(default_factory=list)  # offsets from the question start

    def __post_init__(self) -> None:
        self.started = self.started or self.clock()
        self._lock = threading.Lock()

    @classmethod
    def of(cls, settings: Settings, use_llm: bool | None = None) -> QuestionBudget:
        return cls(settings.llm_deadline_s, settings.llm_max_calls, use_llm)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining(self) -> float:
        """Seconds LLM calls may still use."""
        return self.deadline_s - RESERVE_S - self.elapsed()

    def blocked(self, expected_s: float | None = None) -> str | None:
        """Why no call can start now (call budget used, deadline too close), else None."""
        with self._lock:
            if self.totals.calls >= self.max_calls:
                return f"call budget: {self.max_calls} LLM calls used"
        left = self.remaining()
        if left < max(MIN_CALL_S, expected_s or 0.0):
            return f"deadline: {self.elapsed():.1f} s of {self.deadline_s:g} s used"
        return None

    def take_call(self, timeout_s: float, expected_s: float | None = None) -> float:
        """Count a call that starts now; its timeout (what is left of the deadline, at most ``timeout_s``)."""
        reason = self.blocked(expected_s)
        if reason:
            raise BudgetExhausted(reason)
        with self._lock:
            self.totals.calls += 1
            self.call_starts_s.append(round(self.elapsed(), 3))
        return max(min(timeout_s, self.remaining()), MIN_CALL_S)

    def add(self, counters: _Counters) -> None:
        with self._lock:
            self.totals.prompt_tokens += counters.prompt_tokens
            self.totals.completion_tokens += counters.completion_tokens
            self.totals.call_ms += counters.call_ms

    def record(self, cost: StepCost) -> None:
        with self._lock:
            self.steps.append(cost)

    def report(self) -> dict[str, Any]:
        with self._lock:
            return {
                "deadline_s": self.deadline_s,
                "elapsed_ms": round(self.elapsed() * 1000, 1),
                "calls": self.totals.calls,
                "max_calls": self.max_calls,
                "prompt_tokens": self.totals.prompt_tokens,
                "completion_tokens": self.totals.completion_tokens,
                "call_ms": round(self.totals.call_ms, 1),
                "call_starts_s": list(self.call_starts_s),
                "steps": [asdict(s) for s in self.steps],
            }


_BUDGET: ContextVar[QuestionBudget | None] = ContextVar("cubesage_llm_budget", default=None)
_STEP: ContextVar[StepCost | None] = ContextVar("cubesage_llm_step", default=None)


def current_step() -> StepCost | None:
    """The cost record of the LLM step running in this context (its calls are counted on it)."""
    return _STEP.get()


@contextmanager
def step_cost(cost: StepCost) -> Iterator[StepCost]:
    token = _STEP.set(cost)
    try:
        yield cost
    finally:
        _STEP.reset(token)


def current_budget() -> QuestionBudget | None:
    return _BUDGET.get()


@contextmanager
def question_budget(settings: Settings, *, use_llm: bool | None = None) -> Iterator[QuestionBudget]:
    """Open the LLM budget of one question for the block (this context and the threads it hands it to)."""
    with using_budget(QuestionBudget.of(settings, use_llm)) as budget:
        yield budget


@contextmanager
def using_budget(budget: QuestionBudget) -> Iterator[QuestionBudget]:
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)

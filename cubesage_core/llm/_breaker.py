"""Circuit breaker of one LLM endpoint: after N consecutive failed calls, LLM mode pauses for T seconds.

closed -> (N consecutive failures or timeouts) -> open: every LLM step goes fast for ``pause_s`` ->
half-open: one trial call is let through -> success closes the breaker, failure opens it again.
It also keeps a moving average of successful call latencies, so a step is not started when the
question's deadline leaves less time than a call usually takes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

LATENCY_WEIGHT = 0.3  # weight of the newest call in the moving average


@dataclass(frozen=True)
class BreakerState:
    state: str  # closed | open | half_open
    consecutive_failures: int
    opened_total: int
    retry_in_s: float
    latency_s: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "state": self.state,
            "consecutive_failures": self.consecutive_failures,
            "opened_total": self.opened_total,
            "retry_in_s": round(self.retry_in_s, 1),
            "latency_ms": None if self.latency_s is None else round(self.latency_s * 1000, 1),
        }


class CircuitBreaker:
    """Thread-safe; ``clock`` is injectable for tests."""

    def __init__(self, failures: int, pause_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.failures, self.pause_s, self._clock = failures, pause_s, clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._opened_at: float | None = None
        self._trial = False  # a half-open trial call is in flight
        self._opened_total = 0
        self._latency: float | None = None

    def allow(self) -> str | None:
        """None when a call may start (taking the half-open trial slot if due), else why not."""
        with self._lock:
            if self._opened_at is None:
                return None
            left = self._opened_at + self.pause_s - self._clock()
            if left > 0:
                return f"llm paused: circuit open after {self._consecutive} failed calls, retry in {left:.0f} s"
            if self._trial:
                return "llm paused: circuit half-open, a trial call is in flight"
            self._trial = True
            return None

    def success(self, latency_s: float) -> None:
        with self._lock:
            self._consecutive, self._opened_at, self._trial = 0, None, False
            self._latency = (
                latency_s
                if self._latency is None
                else (LATENCY_WEIGHT * latency_s + (1 - LATENCY_WEIGHT) * self._latency)
            )

    def failure(self) -> None:
        with self._lock:
            self._consecutive += 1
            if self._trial or (self._opened_at is None and self._consecutive >= self.failures):
                self._opened_at, self._trial = self._clock(), False
                self._opened_total += 1

    def release(self) -> None:
        """A started call ended without telling anything about the endpoint (e.g. cut by the deadline)."""
        with self._lock:
            self._trial = False

    def expected_latency(self) -> float | None:
        with self._lock:
            return self._latency

    def state(self) -> BreakerState:
        with self._lock:
            if self._opened_at is None:
                return BreakerState("closed", self._consecutive, self._opened_total, 0.0, self._latency)
            left = max(self._opened_at + self.pause_s - self._clock(), 0.0)
            return BreakerState(
                "open" if left > 0 else "half_open", self._consecutive, self._opened_total, left, self._latency
            )

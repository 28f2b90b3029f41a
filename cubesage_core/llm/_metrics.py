"""Process-wide LLM counters (calls by outcome, tokens, fallbacks by step and cause, call time),
rendered in the Prometheus text format by ``answer.api`` at ``GET /metrics``."""

from __future__ import annotations

import threading
from collections import Counter

_lock = threading.Lock()
_calls: Counter[str] = Counter()  # outcome: ok | error | deadline
_tokens: Counter[str] = Counter()  # prompt | completion
_fallbacks: Counter[tuple[str, str]] = Counter()  # (step, cause)
_call_seconds = {"sum": 0.0}


def count_call(outcome: str, seconds: float) -> None:
    with _lock:
        _calls[outcome] += 1
        _call_seconds["sum"] += seconds


def count_tokens(prompt_tokens: int, completion_tokens: int) -> None:
    with _lock:
        _tokens["prompt"] += prompt_tokens
        _tokens["completion"] += completion_tokens


def count_fallback(step: str, cause: str) -> None:
    with _lock:
        _fallbacks[(step, cause)] += 1


def snapshot() -> dict[str, object]:
    with _lock:
        return {
            "calls": dict(_calls),
            "tokens": dict(_tokens),
            "fallbacks": {f"{s}:{c}": n for (s, c), n in _fallbacks.items()},
            "call_seconds": round(_call_seconds["sum"], 3),
        }


def prometheus(breakers: dict[str, dict[str, object]]) -> str:
    """The counters plus the breaker of every endpoint used so far (``breakers``: endpoint -> state)."""
    with _lock:
        lines = ["# TYPE cubesage_llm_calls_total counter"]
        lines += [f'cubesage_llm_calls_total{{outcome="{o}"}} {n}' for o, n in sorted(_calls.items())]
        lines += [
            "# TYPE cubesage_llm_call_seconds_total counter",
            f"cubesage_llm_call_seconds_total {_call_seconds['sum']:.3f}",
            "# TYPE cubesage_llm_tokens_total counter",
        ]
        lines += [f'cubesage_llm_tokens_total{{kind="{k}"}} {n}' for k, n in sorted(_tokens.items())]
        lines.append("# TYPE cubesage_llm_fallbacks_total counter")
        lines += [
            f'cubesage_llm_fallbacks_total{{step="{s}",cause="{c}"}} {n}' for (s, c), n in sorted(_fallbacks.items())
        ]
    lines += ["# TYPE cubesage_llm_breaker_open gauge", "# TYPE cubesage_llm_breaker_opened_total counter"]
    for endpoint, state in sorted(breakers.items()):
        label = endpoint.replace('"', "")
        lines.append(f'cubesage_llm_breaker_open{{endpoint="{label}"}} {int(state["state"] != "closed")}')
        lines.append(f'cubesage_llm_breaker_opened_total{{endpoint="{label}"}} {state["opened_total"]}')
    return "\n".join(lines) + "\n"

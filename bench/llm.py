"""LLM mode against the replay stub: LLM calls and tokens per question by intent, and latency per call delay.

The stub (``tests/llm_stub.py``) serves the recorded replies of ``tests/replay/demo_dev.jsonl`` (scripted,
see ``tests/replay/record.py``: no real LLM is reachable here) with real token counts (tiktoken) and an
injected delay per call. One JSON line per pass (the cost pass without delay, a latency pass per delay,
fast mode for reference) and a summary line.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from answer.regress import _p95, load_suite
from cubesage_core.settings import REPO_ROOT, get_settings

DEFAULT_SUITE = REPO_ROOT / "demo" / "regress" / "suite.yaml"
RECORDS = REPO_ROOT / "tests" / "replay" / "demo_dev.jsonl"


def _latency(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(values), 1), "p95_ms": _p95(values)} if values else {}


def _pass(service: Any, suite: Any, mode: str) -> list[tuple[str, float, dict[str, Any] | None]]:
    """(expected intent, latency ms, provenance.llm) per case."""
    out = []
    for case in suite.cases:
        started = time.perf_counter()
        answer = service.ask(case.question, today=suite.today, mode=mode).to_dict()
        out.append((case.intent, (time.perf_counter() - started) * 1000, answer["provenance"].get("llm")))
    return out


def _cost(rows: list[tuple[str, float, dict[str, Any] | None]]) -> dict[str, Any]:
    reports = [r for _, _, r in rows if r]
    n = len(reports) or 1
    steps: dict[str, int] = {}
    for report in reports:
        for step in report["steps"]:
            steps[step["step"]] = steps.get(step["step"], 0) + step["calls"]
    return {
        "questions": len(rows),
        "calls_per_question": round(sum(r["calls"] for r in reports) / n, 2),
        "prompt_tokens_per_question": round(sum(r["prompt_tokens"] for r in reports) / n, 1),
        "completion_tokens_per_question": round(sum(r["completion_tokens"] for r in reports) / n, 1),
        "fallback_steps": sum(s["mode"] != "llm" for r in reports for s in r["steps"]),
        "calls_by_step": {k: round(v / n, 2) for k, v in sorted(steps.items())},
    }


def _fallbacks(rows: list[tuple[str, float, dict[str, Any] | None]]) -> dict[str, int]:
    """Steps answered in fast mode, by the cause's first words (``deadline``, ``llm error``, ...)."""
    causes: dict[str, int] = {}
    for _, _, report in rows:
        for step in (report or {}).get("steps", []):
            if step["mode"] != "llm":
                cause = step["mode"].removeprefix("fast (").split(":", 1)[0]
                causes[cause] = causes.get(cause, 0) + 1
    return causes


def _by_intent(rows: list[tuple[str, float, dict[str, Any] | None]], summary: Any) -> dict[str, Any]:
    intents = sorted({i for i, _, _ in rows})
    return {i: summary([r for r in rows if r[0] == i]) for i in intents}


def run(suite: Path | None = None, split: str = "dev", delays_ms: tuple[int, ...] = (300,)) -> dict[str, Any]:
    from answer.service import Cubesage

    if str(REPO_ROOT) not in sys.path:  # the stub and the records are test infrastructure of the repository
        sys.path.insert(0, str(REPO_ROOT))
    from tests.llm_stub import Replay, openai_stub

    spec = load_suite(suite or DEFAULT_SUITE).select(split)
    summary: dict[str, Any] = {"bench": "llm", "suite": spec.name, "split": split, "questions": len(spec.cases)}
    replay = Replay.load(RECORDS)
    for delay in (0, *delays_ms):
        with openai_stub(replay, latency_s=delay / 1000) as stub:
            settings = get_settings().model_copy(update={"llm_url": stub.url, "llm_model": f"openai/replay-{delay}"})
            with Cubesage(settings) as service:
                rows = _pass(service, spec, "llm")
                fast = _pass(service, spec, "fast") if delay == 0 else []
        line: dict[str, Any] = {
            "pass": "llm",
            "delay_ms": delay,
            **_latency([ms for _, ms, _ in rows]),
            "fallbacks": _fallbacks(rows),
            "by_intent": _by_intent(rows, lambda g: _latency([ms for _, ms, _ in g])),
        }
        if delay == 0:
            line["cost"] = {**_cost(rows), "by_intent": _by_intent(rows, _cost)}
            line["replay_misses"] = len(replay.misses)
            summary["cost"] = line["cost"]
            fast_line = {
                "pass": "fast",
                **_latency([ms for _, ms, _ in fast]),
                "by_intent": _by_intent(fast, lambda g: _latency([ms for _, ms, _ in g])),
            }
            print(json.dumps(fast_line), flush=True)
            summary["fast"] = {k: fast_line[k] for k in ("p50_ms", "p95_ms")}
        print(json.dumps(line, ensure_ascii=False), flush=True)
        summary[f"latency_{delay}ms_per_call"] = {k: line[k] for k in ("p50_ms", "p95_ms", "fallbacks", "by_intent")}
    print(json.dumps({"summary": summary}, ensure_ascii=False), flush=True)
    return summary

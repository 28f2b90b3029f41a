"""End-to-end ``Cubesage.ask`` latency (in process, fast mode): startup and RSS, then warm p50/p95 per intent.

Prints one JSON line per round and a summary line. Questions default to the regression suite.
"""

from __future__ import annotations

import json
import statistics
import time
from datetime import date
from pathlib import Path

from answer.regress import load_suite
from cubesage_core.settings import REPO_ROOT

DEFAULT_SUITE = REPO_ROOT / "demo" / "regress" / "suite.yaml"


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(int(p * len(ordered)), len(ordered) - 1)], 1)


def _rss_mb() -> float:
    """This process's resident memory (the service runs in it), in MiB."""
    import psutil

    return round(psutil.Process().memory_info().rss / 2**20, 1)


def run(suite: Path | None = None, rounds: int = 2) -> dict[str, object]:
    from answer.service import Cubesage

    spec = load_suite(suite or DEFAULT_SUITE)
    started = time.perf_counter()
    with Cubesage() as service:
        startup_ms = (time.perf_counter() - started) * 1000
        rss_started = _rss_mb()
        service.ask("warm up: GMV last month", today=spec.today, mode="fast")
        by_intent: dict[str, list[float]] = {}
        for round_no in range(rounds):
            lat: list[float] = []
            for case in spec.cases:
                t = time.perf_counter()
                service.ask(case.question, today=spec.today or date.today(), mode="fast")
                ms = (time.perf_counter() - t) * 1000
                lat.append(ms)
                by_intent.setdefault(case.intent, []).append(ms)
            print(
                json.dumps(
                    {"round": round_no + 1, "questions": len(lat), "p50_ms": _pct(lat, 0.5), "p95_ms": _pct(lat, 0.95)}
                ),
                flush=True,
            )
    everything = [v for values in by_intent.values() for v in values]
    summary = {
        "bench": "e2e",
        "startup_ms": round(startup_ms, 1),
        "rss_mb_started": rss_started,
        "rss_mb_after": _rss_mb(),
        "asks": len(everything),
        "p50_ms": round(statistics.median(everything), 1),
        "p95_ms": _pct(everything, 0.95),
        "by_intent": {k: {"p50_ms": _pct(v, 0.5), "p95_ms": _pct(v, 0.95)} for k, v in sorted(by_intent.items())},
        "targets": {"p50_ms": 150, "p95_ms": 400},
    }
    print(json.dumps({"summary": summary}), flush=True)
    return summary

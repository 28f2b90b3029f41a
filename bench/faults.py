"""``cubesage bench faults``: database connection resets in the middle of /v1/ask load (JSON lines).

Starts ``cubesage serve`` on loopback (rate limit, answer cache, warehouse result cache and SAG memo off:
every request reaches the database), sends ``--requests`` /v1/ask at ``--concurrency`` and, at evenly
spaced points, terminates every backend of the API's role (``pg_terminate_backend``). For each reset it
reports the backends terminated, the 5xx that followed and how long until answers were right again
(:func:`recovery`; the first success includes queueing behind the load, so the latency before the reset
is reported beside it). The summary line has the counts attempted / 2xx / 4xx / 5xx / leaked / modified /
recovered (after every reset the last 5xx came within ``--within-s``, requests succeeded again, and
``/readyz`` was ready at the end), ``wrong`` (200 answers that differ from the same question asked serially
before the load) and the first non-2xx answers.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

# the API's settings for the run: every request reaches the database
_UNCACHED = {
    "CUBESAGE_API_RATE_LIMIT_PER_MIN": "0",
    "CUBESAGE_API_ANSWER_CACHE_TTL_S": "0",
    "CUBESAGE_WAREHOUSE_CACHE_REFRESH_S": "0",
    "CUBESAGE_SAG_CACHE_REFRESH_S": "0",
}


@dataclass
class Sample:
    sent: float
    done: float
    status: int
    leaked: bool
    question: str = ""
    detail: str = ""
    signature: str | None = None


def terminate_api_backends(admin_url: str) -> int:
    from cubesage_core import db

    with db.connection(admin_url) as conn:
        return int(
            db.one(
                conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
                    "usename = %s AND pid <> pg_backend_pid()",
                    (db.API_ROLE,),
                ).fetchone()
            )[0]
        )


def recovery(samples: list[Sample], reset_at: float, until: float) -> dict[str, Any]:
    """What followed one reset: the 5xx, ``error_window_s`` (from the reset to the last 5xx answer, 0 when there
    was none), ``first_success_s`` (the first success of a request sent after the reset: queueing included,
    compare ``p50_s_before``) and ``recovery_s``: the later of the two."""
    window = sorted((s for s in samples if reset_at <= s.sent < until), key=lambda s: s.done)
    failed = [s for s in samples if s.status >= 500 and s.done >= reset_at and s.sent < until]
    last_failure = max((s.done for s in failed), default=reset_at)
    first_ok = next((s for s in window if s.status < 500 and s.done >= last_failure), None)
    before = sorted(s.done - s.sent for s in samples if s.done < reset_at)
    first_success = None if first_ok is None else round(first_ok.done - reset_at, 3)
    return {
        "requests_after": len(window),
        "errors_5xx": len(failed),
        "error_window_s": round(last_failure - reset_at, 3),
        "first_success_s": first_success,
        "p50_s_before": round(before[len(before) // 2], 3) if before else None,
        "recovery_s": None if first_success is None else max(first_success, round(last_failure - reset_at, 3)),
    }


async def _references(client: httpx.AsyncClient, questions: list[str]) -> dict[str, str | None]:
    """Each question's answer asked once, serially, before any fault: what a right answer is."""
    from bench.load import signature

    out: dict[str, str | None] = {}
    for question in dict.fromkeys(questions):
        response = await client.post("/v1/ask", json={"question": question})
        out[question] = signature(response.json()) if response.status_code == 200 else None
    return out


async def _load(
    url: str, questions: list[str], *, requests: int, concurrency: int, resets: int, admin_url: str
) -> tuple[list[Sample], list[tuple[float, int]], dict[str, str | None]]:
    from bench.adversarial import leaked
    from bench.load import signature

    samples: list[Sample] = []
    reset_log: list[tuple[float, int]] = []
    points = [requests * (i + 1) // (resets + 1) for i in range(resets)]
    next_index = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        references = await _references(client, questions)

        async def worker() -> None:
            nonlocal next_index
            while next_index < requests:
                i = next_index
                next_index += 1
                if points and i == points[0]:
                    points.pop(0)
                    at = time.monotonic()
                    reset_log.append((at, await asyncio.to_thread(terminate_api_backends, admin_url)))
                sent, question = time.monotonic(), questions[i % len(questions)]
                try:
                    response = await client.post("/v1/ask", json={"question": question})
                    status, text = response.status_code, response.text
                except httpx.HTTPError as err:
                    status, text = 599, str(err)
                samples.append(
                    Sample(
                        sent,
                        time.monotonic(),
                        status,
                        leaked(text),
                        question,
                        "" if status < 300 else text[:200],
                        signature(response.json()) if status == 200 else None,
                    )
                )

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples, reset_log, references


def _max_recovery(lines: list[dict[str, Any]]) -> float | None:
    values = [line["recovery_s"] for line in lines]
    return None if not values or None in values else max(values)


def _reset_lines(samples: list[Sample], reset_log: list[tuple[float, int]]) -> list[dict[str, Any]]:
    """One line per reset: the backends it terminated and what followed it until the next reset."""
    ends = [at for at, _ in reset_log[1:]] + [float("inf")]
    lines: list[dict[str, Any]] = []
    for n, ((at, terminated), until) in enumerate(zip(reset_log, ends, strict=True), start=1):
        lines.append(
            {
                "bench": "api-faults",
                "fault": "pg_terminate_backend",
                "reset": n,
                "backends_terminated": terminated,
                **recovery(samples, at, until),
            }
        )
    return lines


def _counts(samples: list[Sample], references: dict[str, str | None]) -> dict[str, int]:
    """Answers by status class, those that leaked internals and the 200s that differ from the serial answer."""
    return {
        "attempted": len(samples),
        "2xx": sum(200 <= s.status < 300 for s in samples),
        "4xx": sum(400 <= s.status < 500 for s in samples),
        "5xx": sum(s.status >= 500 for s in samples),
        "leaked": sum(s.leaked for s in samples),
        "wrong": sum(
            1
            for s in samples
            if s.signature is not None
            and references.get(s.question) is not None
            and s.signature != references[s.question]
        ),
    }


def run(*, requests: int, concurrency: int, resets: int, within_s: float) -> int:
    from bench._api_server import api_server
    from bench._state import changed, fingerprint
    from bench.load import load_mix
    from cubesage_core import db
    from cubesage_core.settings import get_settings

    settings = get_settings()
    admin_url = db.bootstrap(settings)
    cases, _, source = load_mix(None)
    questions = [c["question"] for c in cases]
    model_dir = Path(settings.model_folder())
    before = fingerprint(admin_url, model_dir, settings.warehouse_schemas)
    with api_server(_UNCACHED) as running:
        samples, reset_log, references = asyncio.run(
            _load(
                running.url, questions, requests=requests, concurrency=concurrency, resets=resets, admin_url=admin_url
            )
        )
        ready = httpx.get(f"{running.url}/readyz", timeout=10).status_code == 200
    modified = changed(before, fingerprint(admin_url, model_dir, settings.warehouse_schemas))
    lines = _reset_lines(samples, reset_log)
    recovered = (
        ready
        and bool(lines)
        and all(
            line["first_success_s"] is not None
            and line["error_window_s"] <= within_s
            and line["backends_terminated"] > 0
            for line in lines
        )
    )
    counts = _counts(samples, references)
    lines.append(
        {
            "bench": "api-faults",
            "summary": True,
            **counts,
            "modified": len(modified),
            "modified_parts": modified,
            "recovered": recovered,
            "resets": len(reset_log),
            "concurrency": concurrency,
            "within_s": within_s,
            "ready_after": ready,
            "max_recovery_s": _max_recovery(lines),
            "not_ok_examples": [f"{x.status} {x.question!r}: {x.detail}" for x in samples if x.status >= 300][:5],
            "mix": source,
        }
    )
    for line in lines:
        print(json.dumps(line, ensure_ascii=False), flush=True)
    return 0 if recovered and not modified and counts["leaked"] == counts["wrong"] == 0 else 1

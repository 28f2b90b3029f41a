"""``cubesage bench load``: concurrent /v1/ask load against a loopback API, checked against serial answers.

1. start ``cubesage serve`` on loopback (rate limit off; answer cache on unless ``--no-answer-cache``;
   warehouse result cache and SAG search memo on unless ``--no-memo``) unless ``--url`` is given;
2. ask each distinct question of the mix once, serially: the reference answers;
3. send ``--requests`` /v1/ask requests at ``--concurrency`` (httpx async), cycling the mix;
4. report throughput, p50/p95/p99, 5xx count and answers that differ from the reference;
5. /v1/nl2cube latency (serial) and the API process RSS after the load.
Prints JSON lines.
"""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import yaml

from cubesage_core.settings import REPO_ROOT

SUITE = REPO_ROOT / "demo" / "regress" / "suite.yaml"
FALLBACK = Path(__file__).resolve().parent / "data" / "api_load_questions.yaml"


def load_mix(path: Path | None) -> tuple[list[dict[str, Any]], str | None, str]:
    """(cases, today, source) from the regression suite, else the built-in fallback list."""
    source = path or (SUITE if SUITE.exists() else FALLBACK)
    doc = yaml.safe_load(source.read_text())
    cases = [c for c in doc.get("cases", []) if c.get("question")]
    today = doc.get("today")
    return cases, str(today) if today else None, str(source)


def signature(body: dict[str, Any]) -> str:
    """What must be identical between a serial and a concurrent answer to the same question."""
    return json.dumps(
        [body.get("intent"), body.get("text"), body.get("table"), body.get("chart")],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1) if values else 0.0


async def _post(client: httpx.AsyncClient, path: str, payload: dict[str, Any]) -> tuple[int, float, Any]:
    started = time.perf_counter()
    try:
        response = await client.post(path, json=payload)
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else None
        status = response.status_code
    except httpx.HTTPError as err:
        status, body = 599, {"error": str(err)}
    return status, (time.perf_counter() - started) * 1000, body


def _ask_payload(case: dict[str, Any], today: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"question": case["question"], "mode": "fast"}
    if today:
        body["today"] = today
    return body


async def run_load(
    url: str,
    cases: list[dict[str, Any]],
    today: str | None,
    *,
    requests: int,
    concurrency: int,
    headers: dict[str, str],
) -> list[dict[str, Any]]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits, headers=headers) as client:
        reference, serial_ms = await _serial_pass(client, cases, today)
        results, wall = await _concurrent_pass(client, cases, today, requests, concurrency)
        lines = [_ask_line(results, wall, reference, serial_ms, len(cases), concurrency)]
        lines.append(await _nl2cube_pass(client, cases, today))
    return lines


async def _serial_pass(
    client: httpx.AsyncClient, cases: list[dict[str, Any]], today: str | None
) -> tuple[dict[str, str | None], list[float]]:
    """Each question asked once, one at a time: its reference answer (None when it failed) and latency."""
    reference: dict[str, str | None] = {}
    serial_ms: list[float] = []
    for case in cases:
        status, ms, body = await _post(client, "/v1/ask", _ask_payload(case, today))
        serial_ms.append(ms)
        reference[case["question"]] = signature(body) if status == 200 and body else None
    return reference, serial_ms


async def _concurrent_pass(
    client: httpx.AsyncClient, cases: list[dict[str, Any]], today: str | None, requests: int, concurrency: int
) -> tuple[list[tuple[str, int, float, Any]], float]:
    """``requests`` asks over the questions in turn by ``concurrency`` workers; their results and the wall time."""
    results: list[tuple[str, int, float, Any]] = []
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < requests:
            i = next_index
            next_index += 1
            case = cases[i % len(cases)]
            status, ms, body = await _post(client, "/v1/ask", _ask_payload(case, today))
            results.append((case["question"], status, ms, body))

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results, time.perf_counter() - started


def _ask_line(
    results: list[tuple[str, int, float, Any]],
    wall: float,
    reference: dict[str, str | None],
    serial_ms: list[float],
    distinct: int,
    concurrency: int,
) -> dict[str, Any]:
    """The /v1/ask result line: throughput, latency percentiles, errors, answers unlike the reference, cache hits."""
    latencies = [ms for _, _, ms, _ in results]
    cache_hits = sum(
        1 for _, status, _, body in results if status == 200 and (body.get("provenance") or {}).get("answer_cache")
    )
    result_hits = sum(
        1
        for _, status, _, body in results
        if status == 200 and (body.get("provenance") or {}).get("result_cache") == "hit"
    )
    wrong = [
        q
        for q, status, _, body in results
        if status == 200 and reference.get(q) is not None and signature(body) != reference[q]
    ]
    status_counts: dict[str, int] = {}
    for _, status, _, _ in results:
        status_counts[str(status)] = status_counts.get(str(status), 0) + 1
    return {
        "bench": "api-load",
        "endpoint": "/v1/ask",
        "requests": len(results),
        "concurrency": concurrency,
        "distinct_questions": distinct,
        "throughput_rps": round(len(results) / wall, 1),
        "p50_ms": _pct(latencies, 50),
        "p95_ms": _pct(latencies, 95),
        "p99_ms": _pct(latencies, 99),
        "errors_5xx": sum(1 for _, s, _, _ in results if s >= 500),
        "status_counts": status_counts,
        "wrong_answers": len(wrong),
        "wrong_examples": sorted(set(wrong))[:5],
        "answer_cache_hits": cache_hits,
        "warehouse_result_cache_hits": result_hits,
        "serial_p50_ms": _pct(serial_ms, 50),
        "reference_failures": sum(1 for v in reference.values() if v is None),
    }


async def _nl2cube_pass(client: httpx.AsyncClient, cases: list[dict[str, Any]], today: str | None) -> dict[str, Any]:
    """The /v1/nl2cube result line: at least 50 requests over the questions, one at a time."""
    nl_ms: list[float] = []
    nl_status: dict[str, int] = {}
    for i in range(max(50, len(cases))):
        case = cases[i % len(cases)]
        body = {"question": case["question"]}
        if today:
            body["today"] = today
        status, ms, _ = await _post(client, "/v1/nl2cube", body)
        nl_ms.append(ms)
        nl_status[str(status)] = nl_status.get(str(status), 0) + 1
    return {
        "bench": "api-load",
        "endpoint": "/v1/nl2cube",
        "requests": len(nl_ms),
        "p50_ms": _pct(nl_ms, 50),
        "p95_ms": _pct(nl_ms, 95),
        "status_counts": nl_status,
    }


def run(
    *,
    url: str | None,
    suite: Path | None,
    requests: int,
    concurrency: int,
    api_key: str | None,
    answer_cache: bool = True,
    memo: bool = True,
) -> None:
    import psutil

    from bench._api_server import api_server

    cases, today, source = load_mix(suite)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    env = {"CUBESAGE_API_RATE_LIMIT_PER_MIN": "0"}
    if not answer_cache:
        env["CUBESAGE_API_ANSWER_CACHE_TTL_S"] = "0"
    if not memo:
        env["CUBESAGE_WAREHOUSE_CACHE_REFRESH_S"] = env["CUBESAGE_SAG_CACHE_REFRESH_S"] = "0"
    server = nullcontext(None) if url else api_server(env)
    with server as running:
        base = running.url if running is not None else str(url)  # no server started: url was given
        lines = asyncio.run(run_load(base, cases, today, requests=requests, concurrency=concurrency, headers=headers))
        lines[0]["mix"] = source
        lines[0]["answer_cache"] = "unknown (external server)" if url else answer_cache
        lines[0]["memo"] = "unknown (external server)" if url else memo
        if running is not None:
            rss = psutil.Process(running.pid).memory_info().rss
            lines.append({"bench": "api-load", "metric": "api_rss_after_load_mb", "value": round(rss / 2**20, 1)})
    for line in lines:
        print(json.dumps(line, ensure_ascii=False), flush=True)

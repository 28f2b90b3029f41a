"""``cubesage bench scale``: the demo warehouse at two scales, built and measured side by side.

For each scale (default 1 and 10), in its own data dir under ``--root``:

1. build: ``cubesage demo load --scale S`` (wall time and its step timings), then the data dir and the
   ``sag`` schema sizes, and the median time of the SAG lookups that grow with the index;
2. start-up: ``cubesage serve`` (answer cache, warehouse result cache and SAG memo off: every request runs
   the pipeline) until ``/readyz`` answers 200 (the second start: the first warms the file cache), and its
   RSS once idle;

then, interleaved across the scales so all see the same machine:

3. serial: the regression suite asked once through each API (a first pass after ``WARM_UP`` questions),
   case by case in turn across the scales, judged against the gold SQL of that scale's warehouse: p50/p95
   latency, cases passed, answers whose rows stop at a limit the provenance does not state (undisclosed
   truncation);
4. load: ``--requests`` /v1/ask at ``--concurrency`` per scale, cycling the suite, in ``--rounds`` turns
   across the scales: throughput, p50/p95, 5xx, statement timeouts and answers differing from the serial
   ones.

Last, one ``comparison`` line puts the bigger scale against the smaller with the targets of the scale issue.
Prints JSON lines.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench._api_server import RunningApi, api_server
from bench.load import signature

SERVER_ENV = {
    "CUBESAGE_API_RATE_LIMIT_PER_MIN": "0",
    "CUBESAGE_API_ANSWER_CACHE_TTL_S": "0",
    "CUBESAGE_WAREHOUSE_CACHE_REFRESH_S": "0",
    "CUBESAGE_SAG_CACHE_REFRESH_S": "0",
}
TIMEOUT_WORDS = ("statement timeout", "statement_timeout", "canceling statement", "query cancelled")
_STEP = re.compile(r"^\s+(.+?): ([0-9.]+)s$")


@dataclass
class Scale:
    scale: float
    data_dir: Path
    lines: dict[str, dict[str, Any]] = field(default_factory=dict)  # metric -> its JSON line
    reference: dict[str, str] = field(default_factory=dict)  # question -> serial answer signature

    def env(self) -> dict[str, str]:
        return {"CUBESAGE_DATA_DIR": str(self.data_dir)}

    def emit(self, metric: str, **values: Any) -> None:
        line = {"bench": "scale", "scale": self.scale, "metric": metric, **values}
        self.lines[metric] = line
        print(json.dumps(line, ensure_ascii=False, default=str), flush=True)


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1) if values else 0.0


def _dir_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def build(target: Scale) -> None:
    """``cubesage demo load --scale S`` in the scale's data dir: wall time, step timings, sizes."""
    target.data_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "from answer.cli import main; main()", "demo", "load", "--scale", str(target.scale)],
        env={**os.environ, **target.env()},
        capture_output=True,
        text=True,
    )
    seconds = round(time.monotonic() - started, 1)
    if done.returncode != 0:
        raise RuntimeError(f"demo load --scale {target.scale} failed: {done.stderr[-2000:]}")
    steps = {m.group(1): float(m.group(2)) for line in done.stderr.splitlines() if (m := _STEP.match(line))}
    target.emit("build", load_s=seconds, steps_s=steps, data_dir_mb=_dir_mb(target.data_dir), sag_mb=_sag_mb(target))


def lookups(target: Scale, repeat: int = 20) -> None:
    """Median ms of the SAG lookups that grow with the index: entity -> events (10 entities) and the kNN of
    the dense recall (wiki events), on the built data dir."""
    import statistics

    from cubesage_core import db
    from cubesage_core.settings import Settings
    from sag_index import repository
    from sag_index.backends.postgres import PostgresStore

    url = db.database_url(Settings(data_dir=target.data_dir))
    store = PostgresStore(url)
    try:
        with db.connection(url) as conn:
            entities = [
                r[0]
                for r in conn.execute(
                    "SELECT entity_id FROM sag.entity ORDER BY md5(entity_id) LIMIT %s", (repeat + 10,)
                ).fetchall()
            ]
            vectors = [
                np.asarray(json.loads(r[0]), dtype=np.float32)
                for r in conn.execute(
                    "SELECT content_vec::text FROM sag.event_vectors WHERE kind = 'doc' ORDER BY event_id LIMIT %s",
                    (repeat,),
                ).fetchall()
            ]
            links = db.one(conn.execute("SELECT count(*) FROM sag.event_entity").fetchone())[0]

            def median_ms(work: Any, n: int) -> float:
                times = []
                for i in range(n):
                    started = time.perf_counter()
                    work(i)
                    times.append((time.perf_counter() - started) * 1000)
                return round(statistics.median(times), 2) if times else 0.0

            by_entity = median_ms(lambda i: repository.events_of_entities(conn, entities[i : i + 10], 50), repeat)
        knn = median_ms(lambda i: store.knn_events(vectors[i], 20, "content", ["doc"]), len(vectors))
    finally:
        store.close()
    target.emit("sag_lookups", event_entity_rows=int(links), events_of_entities_ms=by_entity, knn_doc_ms=knn)


def _sag_mb(target: Scale) -> float:
    from cubesage_core import db
    from cubesage_core.settings import Settings

    with db.connection(db.database_url(Settings(data_dir=target.data_dir))) as conn:
        size = db.one(
            conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'sag' AND c.relkind IN ('r', 'm')"
            ).fetchone()
        )[0]
    return round(int(size) / 2**20, 1)


@contextmanager
def serve(target: Scale) -> Iterator[RunningApi]:
    """``cubesage serve`` on the scale's data dir; start-up to /readyz and idle RSS are emitted."""
    import psutil

    with api_server({**SERVER_ENV, **target.env()}, ready_path="/readyz"):
        pass  # a first start warms the file cache: the measured start is the second
    started = time.monotonic()
    with api_server({**SERVER_ENV, **target.env()}, ready_path="/readyz") as running:
        ready_s = round(time.monotonic() - started, 2)
        time.sleep(2)
        rss = psutil.Process(running.pid).memory_info().rss
        target.emit("startup", readyz_s=ready_s, rss_idle_mb=round(rss / 2**20, 1))
        yield running


WARM_UP = 3  # questions asked once per server before the measured pass (process warm-up, not scale)


def serial(targets: list[Scale], urls: list[str], suite: Any) -> None:
    """The suite once per scale, case by case in turn across the scales (interleaved), judged against the
    gold SQL of each scale's own warehouse."""
    from answer.regress import run_suite
    from cubesage_core import db
    from cubesage_core.settings import Settings

    with ExitStack() as stack:
        clients = [stack.enter_context(httpx.Client(base_url=url, timeout=120)) for url in urls]
        answers: list[dict[str, dict[str, Any]]] = [{} for _ in targets]

        def asker(i: int) -> Any:
            def ask(question: str, *, today: Any, mode: str) -> dict[str, Any]:
                response = clients[i].post(
                    "/v1/ask", json={"question": question, "mode": mode, "today": today.isoformat()}
                )
                body = response.json()
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}: {str(body)[:200]}")
                answers[i][question] = body
                return body

            return ask

        for i in range(len(targets)):
            for case in suite.cases[:WARM_UP]:
                asker(i)(case.question, today=suite.today, mode="fast")
        runs = [
            run_suite(suite, asker(i), db.database_url(Settings(data_dir=t.data_dir))) for i, t in enumerate(targets)
        ]
        results: list[list[Any]] = [[] for _ in targets]
        for per_case in zip(*runs, strict=True):
            for i, result in enumerate(per_case):
                results[i].append(result)
    for target, mine, answered in zip(targets, results, answers, strict=True):
        _emit_serial(target, mine, answered)


def _emit_serial(target: Scale, results: list[Any], answers: dict[str, dict[str, Any]]) -> None:
    target.reference = {q: signature(body) for q, body in answers.items()}
    latencies = [r.latency_ms for r in results]
    undisclosed = sorted(q for q, body in answers.items() if undisclosed_cut(body))
    target.emit(
        "serial",
        cases=len(results),
        p50_ms=_pct(latencies, 50),
        p95_ms=_pct(latencies, 95),
        passed=sorted(r.id for r in results if r.passed),
        passed_n=sum(r.passed for r in results),
        timeouts=sum(1 for body in answers.values() if timed_out(body)),
        undisclosed_truncation=len(undisclosed),
        undisclosed_examples=undisclosed[:5],
        stated_truncation=sum(1 for body in answers.values() if body["provenance"].get("truncation")),
        slowest=[[r.id, r.latency_ms] for r in sorted(results, key=lambda r: -r.latency_ms)[:8]],
    )


def undisclosed_cut(body: dict[str, Any]) -> bool:
    """Rows that stop at the limit of their query while the provenance states no cut of that part."""
    prov = body.get("provenance") or {}
    stated = {c.get("part") for c in prov.get("truncation") or []}
    plan = prov.get("detail_plan") or {}
    limit = int(plan.get("limit") or (plan.get("cube_query") or {}).get("limit") or 0)
    detail = next((s for s in prov.get("sections") or [] if s.get("kind") == "detail"), None)
    shown = len(detail["rows"]) if detail else (body.get("table") or {}).get("row_count", 0)
    listing_tables = plan.get("kind") == "table_lookup"  # the tables SAG recalls are a ranking, not a result cut
    cut_detail = bool(plan) and not listing_tables and limit > 0 and shown >= limit and "detail" not in stated
    query = prov.get("cube_query") or {}
    rows = (
        len(next((s["rows"] for s in prov.get("sections") or [] if s.get("kind") == "aggregate"), []))
        if detail
        else (body.get("table") or {}).get("row_count", 0)
    )
    cut_aggregate = bool(query) and not query.get("limit") and rows >= _default_limit() and "aggregate" not in stated
    return cut_detail or cut_aggregate


def _default_limit() -> int:
    from cubesage_core.settings import get_settings

    settings = get_settings()
    return min(settings.default_limit, settings.query_row_cap)


def timed_out(body: dict[str, Any]) -> bool:
    text = json.dumps(
        [body.get("text"), (body.get("provenance") or {}).get("problems"), (body.get("provenance") or {}).get("error")],
        ensure_ascii=False,
        default=str,
    ).lower()
    return any(word in text for word in TIMEOUT_WORDS)


async def _load(
    url: str, questions: list[str], today: str, requests: int, concurrency: int
) -> list[tuple[str, int, float, dict[str, Any] | None]]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    out: list[tuple[str, int, float, dict[str, Any] | None]] = []
    sent = 0
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def worker() -> None:
            nonlocal sent
            while sent < requests:
                question = questions[sent % len(questions)]
                sent += 1
                started = time.perf_counter()
                try:
                    response = await client.post("/v1/ask", json={"question": question, "mode": "fast", "today": today})
                    status, body = response.status_code, response.json()
                except (httpx.HTTPError, ValueError):
                    status, body = 599, None
                out.append((question, status, (time.perf_counter() - started) * 1000, body))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


def load(targets: list[Scale], urls: list[str], suite: Any, requests: int, concurrency: int, rounds: int) -> None:
    """Pipeline-only load (every cache off) in ``rounds`` turns across the scales (interleaved), answers
    compared with each scale's serial ones."""
    questions = [c.question for c in suite.cases]
    per_round = max(1, requests // rounds)
    results: list[list[tuple[str, int, float, dict[str, Any] | None]]] = [[] for _ in targets]
    walls = [0.0 for _ in targets]
    for _ in range(rounds):
        for i, url in enumerate(urls):
            started = time.perf_counter()
            results[i] += asyncio.run(_load(url, questions, suite.today.isoformat(), per_round, concurrency))
            walls[i] += time.perf_counter() - started
    for target, mine, wall in zip(targets, results, walls, strict=True):
        ok = [(q, body) for q, status, _, body in mine if status == 200 and body is not None]
        differing = sorted({q for q, body in ok if target.reference.get(q) not in (None, signature(body))})
        latencies = [ms for _, _, ms, _ in mine]
        target.emit(
            "load",
            requests=len(mine),
            concurrency=concurrency,
            rounds=rounds,
            throughput_rps=round(len(mine) / wall, 2),
            p50_ms=_pct(latencies, 50),
            p95_ms=_pct(latencies, 95),
            errors_5xx=sum(1 for _, s, _, _ in mine if s >= 500),
            timeouts=sum(1 for _, body in ok if timed_out(body)),
            differing_answers=len(differing),
            differing_examples=differing[:5],
        )


def compare(small: Scale, big: Scale) -> dict[str, Any]:
    """The bigger scale over the smaller, with the scale issue's targets (ratios rounded to 2 places)."""

    def ratio(metric: str, key: str) -> float | None:
        a, b = small.lines.get(metric, {}).get(key), big.lines.get(metric, {}).get(key)
        return round(b / a, 2) if a and b is not None else None

    passed_small = set(small.lines["serial"]["passed"])
    lost = sorted(passed_small - set(big.lines["serial"]["passed"]))
    ratios = {
        "serial_p50": ratio("serial", "p50_ms"),
        "serial_p95": ratio("serial", "p95_ms"),
        "load_throughput": ratio("load", "throughput_rps"),
        "startup": ratio("startup", "readyz_s"),
        "sag_build": _step_ratio(small, big, "SAG indices"),
        "load_build": ratio("build", "load_s"),
        "rss_idle": ratio("startup", "rss_idle_mb"),
        "data_dir": ratio("build", "data_dir_mb"),
        "sag_size": ratio("build", "sag_mb"),
    }
    load_big = big.lines["load"]
    targets = {
        "serial_within_2x": _le(ratios["serial_p50"], 2) and _le(ratios["serial_p95"], 2),
        "load_within_2x": ratios["load_throughput"] is not None and ratios["load_throughput"] >= 0.5,
        "load_no_timeouts": load_big["timeouts"] == 0 and load_big["errors_5xx"] == 0,
        "load_same_answers": load_big["differing_answers"] == 0,
        "startup_within_2x": _le(ratios["startup"], 2),
        "sag_build_within_10x": _le(ratios["sag_build"], 10),
        "regress_same_passes": not lost,
        "no_undisclosed_truncation": big.lines["serial"]["undisclosed_truncation"] == 0,
    }
    return {
        "bench": "scale",
        "metric": "comparison",
        "scales": [small.scale, big.scale],
        "ratios": ratios,
        "passed_at_small_not_big": lost,
        "passed_at_big_not_small": sorted(set(big.lines["serial"]["passed"]) - passed_small),
        "targets": targets,
    }


def _step_ratio(small: Scale, big: Scale, step: str) -> float | None:
    a = small.lines["build"]["steps_s"].get(step)
    b = big.lines["build"]["steps_s"].get(step)
    return round(b / a, 2) if a and b is not None else None


def _le(value: float | None, bound: float) -> bool:
    return value is not None and value <= bound


def run(
    *,
    scales: list[float],
    root: Path,
    requests: int,
    concurrency: int,
    suite_path: Path | None,
    skip_build: bool,
    rounds: int = 2,
) -> None:
    from answer.regress import load_suite
    from bench.load import SUITE
    from demo.cli import use_demo_settings

    use_demo_settings()
    suite = load_suite(suite_path or SUITE)
    targets = [Scale(s, root / f"scale-{s:g}") for s in scales]
    for target in targets:
        if skip_build:
            target.emit(
                "build",
                load_s=None,
                steps_s={},
                data_dir_mb=_dir_mb(target.data_dir),
                sag_mb=_sag_mb(target),
                note="kept (--skip-build)",
            )
        else:
            build(target)
        lookups(target)
    with ExitStack() as stack:
        urls = [stack.enter_context(serve(target)).url for target in targets]
        serial(targets, urls, suite)
        load(targets, urls, suite, requests, concurrency, rounds)
    if len(targets) >= 2:
        print(json.dumps(compare(targets[0], targets[-1]), ensure_ascii=False), flush=True)

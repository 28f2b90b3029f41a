"""``cubesage bench compile``: built-in compiler latency, and execution latency builtin vs Cube, side by side.

JSON lines: one per parity query (compile p50, builtin and Cube execution ms, rows equal?), then summary
lines (compile p50/p95; execution p50/p95 per backend; parity count). Without ``--cube-url`` and
``--database-url`` it starts an embedded PostgreSQL with the demo warehouse and a real Cube server.
"""

from __future__ import annotations

import importlib.util
import json
import secrets
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from rich.progress import Progress

from cube_models.backends import BuiltinBackend, CubeBackend
from cube_models.client import CubeClient
from cube_models.compiler import compile_query
from cube_models.model import load_model
from cube_models.parity import compare_rows, order_keys
from cube_models.query import CubeQuery
from cubesage_core.settings import REPO_ROOT, Settings
from demo.parity_cases import PARITY_CASES, ParityCase


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if ordered else 0.0


def _emit(record: dict[str, Any]) -> None:
    print(json.dumps(record, ensure_ascii=False), flush=True)


def _cube_launcher() -> Any:
    """tests/infra/cube/cube_server.py (stdlib only), loaded by path: tests/ is not installed."""
    path = REPO_ROOT / "tests" / "infra" / "cube" / "cube_server.py"
    spec = importlib.util.spec_from_file_location("cubesage_cube_server", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the Cube launcher from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _services(
    stack: ExitStack,
    database_url: str | None,
    cube_url: str | None,
    cube_secret: str | None,
    scale: float,
    model_dir: Path,
) -> tuple[str, str, str]:
    if database_url and cube_url:
        return database_url, cube_url, cube_secret or ""
    from cubesage_core import db
    from cubesage_core.embedded_pg import EmbeddedPostgres
    from demo import load as demo_warehouse

    work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cubesage-bench-compile-")))
    if not database_url:
        pg = EmbeddedPostgres(work / "pg")
        database_url = pg.start().url()
        stack.callback(pg.stop)
        db.apply_schema(database_url)
        demo_warehouse.load(database_url, scale=scale)
    if not cube_url:
        server = _cube_launcher().start_cube(database_url, model_dir, work / "cube")
        stack.callback(server.stop)
        cube_url, cube_secret = server.url, server.secret
    return database_url, cube_url, cube_secret or ""


def _uncached(query: dict[str, Any], model: Any) -> dict[str, Any]:
    """The query plus an always-true filter with a fresh value (primary key <> -nonce), so Cube's result cache
    cannot answer it and both backends run the same extra predicate."""
    parsed = CubeQuery.parse(query)
    member = model.member(model.resolve_path(parsed.members()[0]))
    pk = model.cubes[member.cube].primary_keys[0]
    body = parsed.to_dict()
    body["filters"] = [
        *body.get("filters", []),
        {"member": pk.path, "operator": "notEquals", "values": [str(-secrets.randbelow(10**9) - 1)]},
    ]
    return body


@dataclass
class _Totals:
    """The latencies (ms) of every parity query, and how many gave the same rows on both backends."""

    compile_ms: list[float] = field(default_factory=list)
    compile_cpu_ms: list[float] = field(default_factory=list)
    builtin_ms: list[float] = field(default_factory=list)
    cube_ms: list[float] = field(default_factory=list)
    cube_cached_ms: list[float] = field(default_factory=list)
    matches: int = 0


def run(
    database_url: str | None = None,
    cube_url: str | None = None,
    cube_secret: str | None = None,
    compile_rounds: int = 50,
    exec_rounds: int = 3,
    scale: float = 1.0,
    model_dir: Path | None = None,
) -> None:
    model_dir = model_dir or REPO_ROOT / "demo" / "model"
    model = load_model(model_dir)
    with ExitStack() as stack:
        started = time.perf_counter()
        url, cube, secret = _services(stack, database_url, cube_url, cube_secret, scale, model_dir)
        setup_s = time.perf_counter() - started
        builtin, cube_backend = _backends(stack, url, cube, secret, model)
        totals = _Totals()
        with Progress(transient=True) as progress:
            task = progress.add_task("parity queries", total=len(PARITY_CASES))
            for case in PARITY_CASES:
                _bench_case(case, model, builtin, cube_backend, compile_rounds, exec_rounds, totals)
                progress.advance(task)
        _emit_summaries(totals, compile_rounds, exec_rounds, setup_s)


def _backends(stack: ExitStack, url: str, cube: str, secret: str, model: Any) -> tuple[BuiltinBackend, CubeBackend]:
    """The built-in backend on ``url`` and a Cube backend on ``cube``, closed with ``stack``."""
    # _env_file is pydantic-settings' init option, which mypy (without the pydantic plugin) does not know
    builtin = BuiltinBackend(url, model, Settings(_env_file=None))  # type: ignore[call-arg]
    stack.callback(builtin.close)
    client = CubeClient(cube, secret, timeout_s=120, max_wait_s=300)
    stack.callback(client.close)
    return builtin, CubeBackend(client, with_sql=False)


def _bench_case(
    case: ParityCase,
    model: Any,
    builtin: BuiltinBackend,
    cube_backend: CubeBackend,
    compile_rounds: int,
    exec_rounds: int,
    totals: _Totals,
) -> None:
    """One parity query: compiled ``compile_rounds`` times, run ``exec_rounds`` times on each backend (made
    unique), then once as is on each to compare rows; its line emitted, its latencies added to ``totals``."""
    today = datetime.now(UTC).date() if case.real_clock else None
    times = _compile_times(case.query, model, today, compile_rounds, totals.compile_cpu_ms)
    totals.compile_ms += times
    builtin_ms, cube_ms = [], []
    for _ in range(exec_rounds):
        fresh = _uncached(case.query, model)
        t0 = time.perf_counter()
        builtin.load(fresh, today=today)
        builtin_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        cube_backend.load(fresh, today=today)
        cube_ms.append((time.perf_counter() - t0) * 1000)
    ours = builtin.load(case.query, today=today)
    t0 = time.perf_counter()
    theirs = cube_backend.load(case.query)
    cube_cached_ms = (time.perf_counter() - t0) * 1000
    equal = not compare_rows(ours.rows, theirs.rows, order_keys(case.query))
    totals.matches += equal
    totals.builtin_ms += builtin_ms
    totals.cube_ms += cube_ms
    totals.cube_cached_ms.append(cube_cached_ms)
    _emit(
        {
            "bench": "compile",
            "case": case.name,
            "compile_ms_p50": _pct(times, 0.5),
            "builtin_exec_ms": round(statistics.median(builtin_ms), 2),
            "cube_exec_ms": round(statistics.median(cube_ms), 2),
            "cube_cached_ms": round(cube_cached_ms, 2),
            "rows": len(ours.rows),
            "rows_equal": equal,
        }
    )


def _compile_times(
    query: dict[str, Any], model: Any, today: date | None, rounds: int, cpu_ms: list[float]
) -> list[float]:
    """The wall-clock ms of each of ``rounds`` compilations of ``query``; their CPU ms appended to ``cpu_ms``."""
    times = []
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        compile_query(query, model, today=today)
        times.append((time.perf_counter() - t0) * 1000)
        cpu_ms.append((time.process_time() - c0) * 1000)
    return times


def _emit_summaries(totals: _Totals, compile_rounds: int, exec_rounds: int, setup_s: float) -> None:
    """The summary lines: compile latency, execution latency per backend, parity."""
    _emit(
        {
            "bench": "compile",
            "summary": "compile",
            "queries": len(PARITY_CASES),
            "rounds": compile_rounds,
            "p50_ms": _pct(totals.compile_ms, 0.5),
            "p95_ms": _pct(totals.compile_ms, 0.95),
            "cpu_p50_ms": _pct(totals.compile_cpu_ms, 0.5),
            "cpu_p95_ms": _pct(totals.compile_cpu_ms, 0.95),
        }
    )
    _emit(
        {
            "bench": "compile",
            "summary": "execution",
            "rounds": exec_rounds,
            "builtin_p50_ms": _pct(totals.builtin_ms, 0.5),
            "builtin_p95_ms": _pct(totals.builtin_ms, 0.95),
            "cube_p50_ms": _pct(totals.cube_ms, 0.5),
            "cube_p95_ms": _pct(totals.cube_ms, 0.95),
            "cube_cached_p50_ms": _pct(totals.cube_cached_ms, 0.5),
            "cube_cached_p95_ms": _pct(totals.cube_cached_ms, 0.95),
            "note": "builtin = compile + execute on PostgreSQL (read-only txn, reader role); "
            "cube = /v1/load of a query made unique (no result-cache hit); cube_cached = the query as is",
        }
    )
    _emit(
        {
            "bench": "compile",
            "summary": "parity",
            "queries": len(PARITY_CASES),
            "rows_equal": totals.matches,
            "setup_s": round(setup_s, 1),
        }
    )

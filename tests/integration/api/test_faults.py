"""Reliability: stop real services mid-run and check what the API answers.

Each test starts its OWN Cube / Elasticsearch instance (never the session-wide ones) and stops it
while the API is serving. LLM timeouts use the in-test OpenAI-compatible stub stalling its replies.
Database connection resets terminate the API role's backends (pg_terminate_backend) mid-load.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from cubesage_core.settings import REPO_ROOT
from tests.live_api import api_settings as _api_settings
from tests.live_api import running_api

pytestmark = pytest.mark.integration

AGGREGATE = "What was the order count in 2024?"
DETAIL = "list the orders of customer Li Wei"


def api_settings(pg_url: str, **overrides: Any) -> Any:
    """Settings for a fault test: no answer cache (every request must go to the backends)."""
    return _api_settings(pg_url, api_answer_cache_ttl_s=0, **overrides)


def _ask(url: str, question: str, **extra: Any) -> httpx.Response:
    return httpx.post(f"{url}/v1/ask", json={"question": question, **extra}, timeout=120)


def _numbers(body: dict[str, Any]) -> list[float]:
    return [
        v
        for row in body["table"]["rows"]
        for v in (row if isinstance(row, list) else row.values())
        if isinstance(v, int | float)
    ]


def test_cube_down_falls_back_to_the_builtin_compiler(demo_ready: Any, pg_url: str, tmp_path: Path) -> None:
    from tests.infra.cube.cube_server import start_cube

    own_cube = start_cube(pg_url, REPO_ROOT / "demo" / "model", tmp_path / "cube")
    try:
        settings = api_settings(pg_url, cube_url=own_cube.url, cube_secret=own_cube.secret, cube_fallback_builtin=True)
        strict = api_settings(pg_url, cube_url=own_cube.url, cube_secret=own_cube.secret, cube_fallback_builtin=False)
        with running_api(settings, pg_url) as api, running_api(strict, pg_url) as strict_api:
            before = _ask(api.url, AGGREGATE)
            assert before.status_code == 200, before.text
            assert not before.json()["provenance"].get("fallback_reason")
            assert httpx.get(f"{api.url}/readyz", timeout=10).json()["status"] == "ready"

            own_cube.stop()  # mid-run

            after = _ask(api.url, AGGREGATE)
            assert after.status_code == 200, after.text
            provenance = after.json()["provenance"]
            assert "built-in" in (provenance.get("fallback_reason") or ""), provenance
            assert _numbers(after.json()) == _numbers(before.json())
            ready = httpx.get(f"{api.url}/readyz", timeout=10).json()
            assert ready["status"] == "degraded" and ready["checks"]["cube"]["ok"] is False

            # without the fallback: a clear refusal naming the unreachable Cube (or a 503), never numbers
            refused = _ask(strict_api.url, AGGREGATE)
            assert refused.status_code in (200, 503), refused.text
            assert "Traceback" not in refused.text
            if refused.status_code == 200:
                body = refused.json()
                assert body["table"]["rows"] == [] and "reach" in body["text"], body["text"]
    finally:
        own_cube.stop()


@pytest.fixture
def own_es(tmp_path: Path):
    from tests.infra.elasticsearch.es_server import start_elasticsearch

    server = start_elasticsearch(tmp_path / "es")
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(tmp_path / "es", ignore_errors=True)


def test_elasticsearch_down_uses_postgres_or_answers_503(demo_ready: Any, pg_url: str, own_es: Any) -> None:
    prefix = f"cs_fault_{int(time.time())}_"
    with_fallback = api_settings(pg_url, es_url=own_es.url, es_index_prefix=prefix, es_fallback_postgres=True)
    no_fallback = api_settings(pg_url, es_url=own_es.url, es_index_prefix=prefix, es_fallback_postgres=False)
    with running_api(with_fallback, pg_url) as api, running_api(no_fallback, pg_url) as strict_api:
        assert _ask(api.url, DETAIL).status_code == 200

        own_es.stop()  # mid-run

        served = _ask(api.url, DETAIL)
        assert served.status_code == 200, served.text
        assert served.json()["intent"] == "detail" and served.json()["table"]["rows"], served.json()
        assert httpx.get(f"{api.url}/readyz", timeout=10).json()["status"] == "degraded"

        detail = _ask(strict_api.url, DETAIL)
        assert detail.status_code == 503, detail.text
        assert "unavailable" in detail.json()["detail"].lower()
        aggregate = _ask(strict_api.url, AGGREGATE)
        assert aggregate.status_code == 200 and aggregate.json()["intent"] == "aggregate", aggregate.text
        assert httpx.get(f"{strict_api.url}/readyz", timeout=10).status_code == 503


def test_llm_timeout_falls_back_to_fast_mode(demo_ready: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from cubesage_core.settings import get_settings
    from tests.llm_stub import STALL, openai_stub

    with openai_stub([STALL]) as stub:
        # as `cubesage serve` is configured: through the environment (the LLM wiring reads get_settings())
        for name, value in {"LLM_URL": stub.url, "LLM_MODEL": "openai/stub", "LLM_TIMEOUT_S": "1"}.items():
            monkeypatch.setenv(f"CUBESAGE_{name}", value)
        get_settings.cache_clear()
        settings = api_settings(pg_url, llm_url=stub.url, llm_model="openai/stub", llm_timeout_s=1.0)
        with running_api(settings, pg_url) as api:
            fast = _ask(api.url, AGGREGATE, mode="fast").json()
            started = time.monotonic()
            r = _ask(api.url, AGGREGATE, mode="llm")
            elapsed = time.monotonic() - started
        assert stub.requests, "the LLM endpoint was never called"
    monkeypatch.undo()
    get_settings.cache_clear()
    assert r.status_code == 200, r.text
    assert _numbers(r.json()) == _numbers(fast)
    assert elapsed < 60
    assert "fallback" in str(r.json()["provenance"]).lower() or "fast" in str(r.json()["provenance"]).lower()


LOAD_QUESTIONS = (
    AGGREGATE,
    DETAIL,
    "GMV by region in 2024",
    "list the refunded orders of customer 王芳",
    "top 5 products by GMV",
    "华东地区本月GMV",
)
RECOVERY_S = 5.0


def _load(url: str, stop: threading.Event, results: list[tuple[float, float, int]], worker: int) -> None:
    with httpx.Client(timeout=60) as client:
        i = worker
        while not stop.is_set():
            sent = time.monotonic()
            try:
                status = client.post(
                    f"{url}/v1/ask", json={"question": LOAD_QUESTIONS[i % len(LOAD_QUESTIONS)]}
                ).status_code
            except httpx.HTTPError:
                status = 599
            results.append((sent, time.monotonic(), status))
            i += 1


def _terminate_api_backends(pg_url: str) -> int:
    from cubesage_core import db

    with db.connection(pg_url) as conn:
        return conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE usename = %s AND pid <> pg_backend_pid()",
            (db.API_ROLE,),
        ).fetchone()[0]


def test_terminated_database_backends_recover_within_5_s(demo_ready: Any, pg_url: str) -> None:
    """pg_terminate_backend on every API connection mid-load: answers resume within 5 s, no 5xx after."""
    settings = api_settings(pg_url, warehouse_cache_refresh_s=0, sag_cache_refresh_s=0)
    results: list[tuple[float, float, int]] = []
    stop = threading.Event()
    with running_api(settings, pg_url) as api:
        assert _ask(api.url, AGGREGATE).status_code == 200
        workers = [threading.Thread(target=_load, args=(api.url, stop, results, w), daemon=True) for w in range(6)]
        for w in workers:
            w.start()
        time.sleep(3)
        killed_at = time.monotonic()
        assert _terminate_api_backends(pg_url) > 0
        time.sleep(2)
        assert _terminate_api_backends(pg_url) > 0  # again, while the pools are refilling
        time.sleep(RECOVERY_S + 4)
        stop.set()
        for w in workers:
            w.join(90)
        ready = httpx.get(f"{api.url}/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["checks"]["postgres"]["ok"] is True, ready.text
    before = [r for r in results if r[1] < killed_at]
    after = [r for r in results if r[0] >= killed_at + 2 + RECOVERY_S]  # sent 5 s after the second kill
    assert before and all(status == 200 for _, _, status in before)
    assert len(after) >= 6, results
    assert [s for _, _, s in after if s >= 500] == [], results
    assert all(status == 200 for _, _, status in after)

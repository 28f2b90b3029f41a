"""GET /healthz (the process answers) and GET /readyz (PostgreSQL, Cube, Elasticsearch, LLM as configured).

/readyz checks each service as it is now, through the connections the API really uses: PostgreSQL
is a round trip through the audit store's pool *and* the answering service's pool, Cube its
``/readyz``, Elasticsearch its cluster health (red = down), the LLM endpoint any HTTP answer (and its
LM built for the model, its circuit breaker not open: shown under ``checks.llm.breaker``).
200 "ready" when every configured service answers; 200 "degraded" when only a service with a
configured fallback is down (Cube -> built-in compiler, Elasticsearch -> PostgreSQL backend,
LLM -> fast mode); 503 "unavailable" when PostgreSQL or a service without fallback is down.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

import httpx
from litestar import Controller, Response, get
from litestar.openapi.datastructures import ResponseSpec

from answer.api._service import ServiceAdapter
from answer.api.dto import Health, Readiness
from answer.api.store import Store
from cubesage_core.llm import breaker_state, get_lm
from cubesage_core.settings import Settings

TIMEOUT_S = 2.0


async def _timed(check: Any) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        await check
        result: dict[str, Any] = {"ok": True}
    except Exception as err:
        result = {"ok": False, "error": f"{type(err).__name__}: {err}"[:300]}
    result["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return result


async def _http_ok(client: httpx.AsyncClient, url: str, *, any_status: bool = False) -> None:
    """The service answers (``any_status``: any HTTP answer counts, e.g. an LLM endpoint without GET)."""
    response = await client.get(url)
    if not any_status and response.status_code >= 400:
        raise RuntimeError(f"HTTP {response.status_code} from {url}")


async def _llm_ok(client: httpx.AsyncClient, settings: Settings) -> None:
    """The LM can be built for the model, the endpoint answers, and its circuit breaker is not open."""
    get_lm(settings)  # raises for parameters the model refuses
    await _http_ok(client, str(settings.llm_url).rstrip("/") + "/models", any_status=True)
    state = breaker_state(settings) or {}
    if state.get("state") == "open":
        raise RuntimeError(
            f"circuit open after {state['consecutive_failures']} failed calls: LLM mode paused, "
            f"retry in {state['retry_in_s']} s"
        )


async def _es_ok(client: httpx.AsyncClient, url: str) -> None:
    response = await client.get(url.rstrip("/") + "/_cluster/health")
    if response.status_code >= 400:
        raise RuntimeError(f"HTTP {response.status_code} from {url}")
    status = response.json().get("status")
    if status == "red":
        raise RuntimeError("cluster health is red")


async def _postgres_ok(store: Store, service: ServiceAdapter) -> None:
    await asyncio.wait_for(asyncio.gather(store.ping(), service.ping()), TIMEOUT_S)


class HealthController(Controller):
    tags = ("health",)

    @get("/healthz", summary="Liveness")
    async def healthz(self) -> Health:
        return Health(status="ok")

    @get(
        "/readyz",
        summary="Readiness of PostgreSQL, Cube, Elasticsearch and the LLM endpoint",
        responses={503: ResponseSpec(data_container=Readiness, description="A required service is down")},
    )
    async def readyz(self, store: Store, service: ServiceAdapter, settings: Settings) -> Response[Readiness]:
        async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
            names = ["postgres"]
            checks: list[Any] = [_postgres_ok(store, service)]
            fallback = {"postgres": False}
            if settings.cube_url:
                names.append("cube")
                checks.append(_http_ok(client, settings.cube_url.rstrip("/") + "/readyz"))
                fallback["cube"] = settings.cube_fallback_builtin
            if settings.es_url:
                names.append("elasticsearch")
                checks.append(_es_ok(client, settings.es_url))
                fallback["elasticsearch"] = settings.es_fallback_postgres
            if settings.llm_url:
                names.append("llm")
                checks.append(_llm_ok(client, settings))
                fallback["llm"] = True
            results = await asyncio.gather(*(_timed(c) for c in checks))
        report = dict(zip(names, results, strict=True))
        for name, result in report.items():
            result["fallback"] = fallback[name]
        if "llm" in report:
            report["llm"]["breaker"] = breaker_state(settings)
        down = [n for n, r in report.items() if not r["ok"]]
        status: Literal["ready", "degraded", "unavailable"] = "ready"
        if any(not fallback[n] for n in down):
            status, code = "unavailable", 503
        else:
            status, code = ("degraded" if down else "ready"), 200
        return Response(Readiness(status=status, checks=report), status_code=code)

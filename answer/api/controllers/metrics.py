"""GET /metrics: process counters in the Prometheus text format (LLM calls by outcome, tokens, fallbacks
by step and cause, call time, and the circuit breaker of every LLM endpoint used)."""

from __future__ import annotations

from litestar import Controller, MediaType, Response, get

from cubesage_core.llm import metrics_text

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class MetricsController(Controller):
    tags = ("health",)

    @get("/metrics", summary="Prometheus metrics", media_type=MediaType.TEXT)
    async def metrics(self) -> Response[str]:
        return Response(metrics_text(), media_type=CONTENT_TYPE)

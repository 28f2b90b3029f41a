"""POST /v1/cube/load: run a stored Cube query again (a dashboard tile) through the configured backend
(Cube REST or the built-in compiler), without a question: the table and chart an answer would show."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import msgspec
from litestar import Controller, post

from answer.api._service import ServiceAdapter
from answer.api.controllers.ask import check_today
from answer.api.dto import CubeLoadRequest, CubeLoadResponse, Table
from answer.api.errors import BadRequest, Unprocessable, error_responses
from answer.api.knowledge import Knowledge


def labeled_queries(data: CubeLoadRequest) -> list[tuple[str, dict[str, Any]]]:
    """The request's queries as (label, Cube query): one ``cube_query`` or the ``cube_queries`` of nl2cube."""
    if (data.cube_query is None) == (data.cube_queries is None):
        raise BadRequest("send either 'cube_query' or 'cube_queries'")
    if data.cube_query is not None:
        return [("", data.cube_query)]
    return [(q.label, q.cube_query) for q in data.cube_queries or []]


class CubeController(Controller):
    path = "/v1/cube"
    tags = ("nl2cube",)

    @post(
        "/load",
        summary="Run a stored Cube query (a dashboard tile)",
        status_code=200,
        responses=error_responses(400, 401, 413, 422, 429, 503),
        description="The Cube query that /v1/nl2cube returned, validated against the model and run through "
        "Cube's REST API or the built-in compiler; the question is not parsed again.",
    )
    async def load(self, data: CubeLoadRequest, service: ServiceAdapter, knowledge: Knowledge) -> CubeLoadResponse:
        queries = labeled_queries(data)
        for label, query in queries:
            problems = await anyio.to_thread.run_sync(knowledge.validate_cube_query, query)
            if problems:
                where = f" ({label})" if label else ""
                raise Unprocessable(f"the Cube query{where} does not validate: " + "; ".join(problems))
        result = await service.load(queries, today=check_today(data.today), language=data.language, title=data.title)
        return CubeLoadResponse(
            table=msgspec.convert(result["table"], Table),
            chart=result.get("chart"),
            sql=list(result.get("sql") or []),
            backend=str(result.get("backend") or ""),
            today=str(result.get("today") or ""),
            fallback_reason=result.get("fallback_reason"),
        )

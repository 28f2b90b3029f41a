"""POST /v1/nl2cube: a question -> a Cube query for dashboards (executed only when ``run`` is true)."""

from __future__ import annotations

from litestar import Controller, post

from answer.api._service import ServiceAdapter
from answer.api.controllers.ask import check_question, check_today
from answer.api.dto import LabeledQuery, NL2CubeRequest, NL2CubeResponse
from answer.api.errors import error_responses
from cubesage_core.settings import Settings


class NL2CubeController(Controller):
    path = "/v1/nl2cube"
    tags = ("nl2cube",)

    @post(
        "/",
        summary="Translate a question into a Cube query",
        status_code=200,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 503),
    )
    async def nl2cube(self, data: NL2CubeRequest, service: ServiceAdapter, settings: Settings) -> NL2CubeResponse:
        question = check_question(data.question, settings)
        result = await service.nl2cube(question, run=data.run, today=check_today(data.today))
        rows = result.get("rows")
        if isinstance(rows, dict):  # a table {columns, rows}
            rows = rows.get("rows")
        return NL2CubeResponse(
            cube_query=dict(result.get("cube_query") or {}),
            bindings=list(result.get("bindings") or []),
            confidence=float(result.get("confidence") or 0.0),
            rows=list(rows) if data.run and rows is not None else None,
            sql=result.get("sql") if data.run else None,
            cube_queries=[
                LabeledQuery(label=str(q["label"]), cube_query=dict(q["cube_query"])) for q in result["cube_queries"]
            ]
            if result.get("cube_queries")
            else None,
        )

"""POST /v1/feedback: thumbs up/down on an answer; approved pairs (validated first) feed engine D's cache.

Up without a correction approves the answer's own Cube query or SQL; a correction
(``corrected_cube_query`` checked by cube_models validation, ``corrected_sql`` by the
SQL guard) is learned whatever the verdict. Down without a correction is recorded only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from litestar import Controller, Request, post

from answer.api.cache import AnswerCache
from answer.api.dto import FeedbackRequest, FeedbackResponse
from answer.api.errors import NotFound, Unprocessable, error_responses
from answer.api.knowledge import Knowledge
from answer.api.store import Store


def _pair_to_learn(data: FeedbackRequest, plan: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    if data.corrected_cube_query is not None or data.corrected_sql is not None:
        return data.corrected_cube_query, data.corrected_sql
    if data.verdict == "up":
        cube_query = plan.get("cube_query")
        sql = None if cube_query else plan.get("sql")
        return (cube_query if isinstance(cube_query, dict) else None), (sql if isinstance(sql, str) else None)
    return None, None


class FeedbackController(Controller):
    path = "/v1/feedback"
    tags = ("feedback",)

    @post("/", summary="Rate an answer, optionally with a corrected Cube query or SQL", status_code=200,
          responses=error_responses(400, 401, 404, 413, 422, 429, 503))
    async def feedback(self, data: FeedbackRequest, request: Request, store: Store,
                       knowledge: Knowledge, answer_cache: AnswerCache) -> FeedbackResponse:
        record = await store.get_query(data.query_id)
        if record is None:
            raise NotFound(f"no query with id {data.query_id}")
        cube_query, sql = _pair_to_learn(data, record.plan)
        problems: list[str] = []
        if cube_query is not None:
            problems += [f"cube query: {p}" for p in
                         await anyio.to_thread.run_sync(knowledge.validate_cube_query, cube_query)]
        if sql is not None:
            problems += [f"sql: {p}" for p in await anyio.to_thread.run_sync(knowledge.validate_sql, sql)]
        if problems:
            raise Unprocessable("the correction was not learned: " + "; ".join(problems))
        cache_id = None
        if cube_query is not None or sql is not None:
            cache_id = await anyio.to_thread.run_sync(knowledge.learn, record.question, cube_query, sql)
            answer_cache.clear()
        await store.set_feedback(data.query_id, {
            "verdict": data.verdict, "corrected_cube_query": data.corrected_cube_query,
            "corrected_sql": data.corrected_sql, "comment": data.comment, "learned": cache_id is not None,
            "cache_id": cache_id, "api_key_id": request.state.api_key_id,
            "at": datetime.now(UTC).isoformat(),
        })
        message = ("learned: added to the few-shot cache" if cache_id is not None
                   else "recorded (nothing to learn: no query or correction)")
        return FeedbackResponse(query_id=str(data.query_id), verdict=data.verdict,
                                learned=cache_id is not None, cache_id=cache_id, message=message)

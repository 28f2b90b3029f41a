"""POST /v1/ask and /v1/ask/stream: a question in, the synthesizer's answer out (whole or stage by stage)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import msgspec
from litestar import Controller, Request, post
from litestar.response import ServerSentEvent, ServerSentEventMessage

from answer.api._service import ServiceAdapter, StageCallback, stages_of, threadsafe_callback
from answer.api.cache import AnswerCache, cache_key
from answer.api.dto import AskRequest, AskResponse, Table
from answer.api.errors import ApiError, BadRequest, classify, error_responses, log
from answer.api.sessions import SessionMemory
from answer.api.store import Store
from cubesage_core.settings import Settings

MIN_TODAY, MAX_TODAY = date(1970, 1, 1), date(2100, 12, 31)


def check_question(question: str, settings: Settings) -> str:
    text = question.strip()
    if not text:
        raise BadRequest("the question is empty")
    if len(text) > settings.api_max_question_chars:
        raise BadRequest(f"the question is {len(text)} characters long; the limit is {settings.api_max_question_chars}")
    if "\x00" in text:
        raise BadRequest("the question contains a NUL character")
    return text


def check_today(today: date | None) -> date | None:
    if today is not None and not (MIN_TODAY <= today <= MAX_TODAY):
        raise BadRequest(f"'today' must be between {MIN_TODAY} and {MAX_TODAY}")
    return today


def to_response(answer: dict[str, Any], session_id: str | None) -> AskResponse:
    table = answer.get("table") or {}
    return AskResponse(
        query_id=str(answer.get("query_id", "")),
        question=str(answer.get("question", "")),
        intent=answer.get("intent"),
        text=str(answer.get("text", "")),
        table=msgspec.convert({k: v for k, v in table.items() if k in Table.__struct_fields__}, Table),
        chart=answer.get("chart") or None,
        provenance=dict(answer.get("provenance") or {}),
        timings_ms=dict(answer.get("timings_ms") or {}),
        session_id=session_id,
    )


async def answer_question(
    question: str,
    data: AskRequest,
    *,
    service: ServiceAdapter,
    sessions: SessionMemory,
    cache: AnswerCache,
    settings: Settings,
    on_stage: StageCallback | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Run (or reuse from the answer cache) one turn; remembers it as the session's previous turn."""
    previous = sessions.get(data.session_id)
    today = check_today(data.today)
    key = cache_key(question, data.mode, today or settings.today or date.today())
    hit = cache.get(key) if previous is None else None
    if hit is not None:
        raw, answer = hit
    else:
        raw, answer = await service.ask(
            question, session_id=data.session_id, mode=data.mode, today=today, previous=previous, on_stage=on_stage
        )
        if previous is None:
            cache.put(key, raw, answer)
    sessions.put(data.session_id, raw)
    return raw, answer


class AskController(Controller):
    path = "/v1/ask"
    tags = ("ask",)

    @post(
        "/",
        summary="Answer a question",
        status_code=200,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 503),
        description="Intent-routed answer: text, result table, Vega-Lite chart spec and provenance.",
    )
    async def ask(
        self,
        data: AskRequest,
        request: Request,
        service: ServiceAdapter,
        store: Store,
        sessions: SessionMemory,
        answer_cache: AnswerCache,
        settings: Settings,
    ) -> AskResponse:
        question = check_question(data.question, settings)
        _, answer = await answer_question(
            question, data, service=service, sessions=sessions, cache=answer_cache, settings=settings
        )
        await store.log_answer(answer, session_id=data.session_id, api_key_id=request.state.api_key_id)
        return to_response(answer, data.session_id)

    @post(
        "/stream",
        summary="Answer a question as Server-Sent Events",
        status_code=200,
        responses=error_responses(),
        media_type="text/event-stream",
        description="One event per stage as it completes: intent, retrieval, plan, rows, answer "
        "(the answer event carries the same body as /v1/ask); an 'error' event on failure.",
    )
    async def ask_stream(
        self,
        data: AskRequest,
        request: Request,
        service: ServiceAdapter,
        store: Store,
        sessions: SessionMemory,
        answer_cache: AnswerCache,
        settings: Settings,
    ) -> ServerSentEvent:
        question = check_question(data.question, settings)
        check_today(data.today)
        api_key_id = request.state.api_key_id

        async def events() -> AsyncIterator[ServerSentEventMessage]:
            queue: asyncio.Queue = asyncio.Queue()
            callback = threadsafe_callback(asyncio.get_running_loop(), queue)
            task = asyncio.create_task(
                answer_question(
                    question,
                    data,
                    service=service,
                    sessions=sessions,
                    cache=answer_cache,
                    settings=settings,
                    on_stage=callback,
                )
            )
            sent: set[str] = set()
            while not task.done() or not queue.empty():
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    name, payload = getter.result()
                    if name != "answer":
                        sent.add(name)
                        yield _message(name, payload)
                else:
                    getter.cancel()
            try:
                _, answer = task.result()
            except Exception as err:  # reported as an 'error' event: the HTTP status is already sent
                yield _message("error", _error_body(err))
                return
            await store.log_answer(answer, session_id=data.session_id, api_key_id=api_key_id)
            for name, payload in stages_of(answer)[:-1]:
                if name not in sent:
                    yield _message(name, payload)
            yield _message("answer", _plain_response(answer, data.session_id))

        return ServerSentEvent(events())


def _plain_response(answer: dict[str, Any], session_id: str | None) -> dict[str, Any]:
    return msgspec.to_builtins(to_response(answer, session_id))


def _message(event: str, payload: Any) -> ServerSentEventMessage:
    return ServerSentEventMessage(event=event, data=json.dumps(payload, ensure_ascii=False, default=str))


def _error_body(err: Exception) -> dict[str, Any]:
    mapped: ApiError | None = classify(err)
    if mapped is None:
        log.exception("unexpected error while streaming an answer", exc_info=err)
        return {"status_code": 500, "error": "internal_error", "detail": "internal error; the incident was logged"}
    return {"status_code": mapped.status_code, "error": mapped.code, "detail": mapped.detail}

"""Adapter between the HTTP layer and the answering service (``answer.service.Cubesage`` or a fake).

The service may be sync or async; sync calls run in a worker thread so the event
loop keeps serving. Its results (dataclasses, msgspec Structs, pydantic models or
dicts) are turned into plain dicts. Streaming: a service that declares ``streams_stages = True``
reports stages through the ``on_stage(name, data)`` callback of its ``ask``; otherwise the stages
are derived from the finished answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable
from datetime import date
from typing import Any, Protocol, runtime_checkable

import anyio.to_thread
import msgspec

from answer.api.errors import ServiceUnavailable

STAGES = ("intent", "retrieval", "plan", "rows", "answer")
StageCallback = Callable[[str, Any], None]


@runtime_checkable
class AnswerService(Protocol):
    """What the API needs from the answering service."""

    def ask(
        self,
        question: str,
        *,
        session_id: str | None = None,
        mode: str | None = None,
        today: date | None = None,
        previous: Any = None,
    ) -> Any: ...

    def nl2cube(self, question: str, run: bool = False, today: date | None = None) -> Any: ...


class StreamingAnswerService(AnswerService, Protocol):
    """A service whose ``ask`` reports each stage as it is done (``streams_stages`` is True)."""

    streams_stages: bool

    def ask(
        self,
        question: str,
        *,
        session_id: str | None = None,
        mode: str | None = None,
        today: date | None = None,
        previous: Any = None,
        on_stage: StageCallback | None = None,
    ) -> Any: ...


def as_plain(value: Any) -> Any:
    """Dataclass / Struct / pydantic model / mapping -> JSON-ready dicts, lists and scalars."""
    if isinstance(value, dict):
        return {str(k): as_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [as_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, msgspec.Struct):
        return as_plain(msgspec.structs.asdict(value))
    if hasattr(value, "model_dump"):
        return as_plain(value.model_dump())
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return msgspec.to_builtins(value, str_keys=True, enc_hook=str)


def stages_of(answer: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The five stage events of a finished answer (used when the service cannot stream)."""
    prov = answer.get("provenance") or {}
    table = answer.get("table") or {}
    return [
        ("intent", {"intent": answer.get("intent"), "confidence": prov.get("intent_confidence")}),
        (
            "retrieval",
            {"bindings": prov.get("bindings", []), "crag_grade": prov.get("crag_grade"), "crag": prov.get("crag")},
        ),
        ("plan", {"cube_query": prov.get("cube_query"), "sql": prov.get("sql")}),
        ("rows", {"row_count": len(table.get("rows") or []), "columns": table.get("columns", [])}),
        ("answer", answer),
    ]


class ServiceAdapter:
    """Calls the service the same way whatever its flavour (sync/async, streaming or not)."""

    def __init__(self, service: AnswerService, max_concurrent: int = 4) -> None:
        self.service = service
        self.streams = getattr(service, "streams_stages", False) is True
        # pipeline runs are CPU-bound Python: more of them at once only share the GIL with the event loop
        self._slots = asyncio.Semaphore(max(1, max_concurrent))

    async def _call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        async with self._slots:
            if inspect.iscoroutinefunction(func):
                return await func(*args, **kwargs)
            result = await anyio.to_thread.run_sync(lambda: func(*args, **kwargs))
            if inspect.isawaitable(result):
                result = await result
            return result

    async def ask(
        self,
        question: str,
        *,
        session_id: str | None,
        mode: str | None,
        today: date | None,
        previous: Any,
        on_stage: StageCallback | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """The raw answer (kept as the session's previous turn) and its plain-dict form."""
        kwargs: dict[str, Any] = {"session_id": session_id, "mode": mode, "today": today, "previous": previous}
        if on_stage is not None and self.streams:
            kwargs["on_stage"] = on_stage
        raw = await self._call(self.service.ask, question, **kwargs)
        return raw, as_plain(raw)

    async def ping(self) -> None:
        """The service's own database round trip (services without ``ping`` have nothing to check); not
        queued behind running answers."""
        hook = getattr(self.service, "ping", None)
        if hook is not None:
            await anyio.to_thread.run_sync(hook)

    async def knowledge_changed(self, kind: str) -> None:
        """Tell the service an ingest of ``kind`` stored new knowledge (services without the hook skip it)."""
        hook = getattr(self.service, "knowledge_changed", None)
        if hook is not None:
            await anyio.to_thread.run_sync(hook, kind)

    async def load(
        self, queries: list[tuple[str, dict[str, Any]]], *, today: date | None, language: str, title: str
    ) -> dict[str, Any]:
        """A stored query's table and chart (``Cubesage.load``); 503 from services that cannot run one."""
        loader = getattr(self.service, "load", None)
        if loader is None:
            raise ServiceUnavailable("this service cannot run stored Cube queries")
        return as_plain(await self._call(loader, queries, today=today, language=language, title=title))

    async def suggestions(self, language: str) -> dict[str, Any]:
        """Suggested questions of the service (none from services without the hook)."""
        hook = getattr(self.service, "suggestions", None)
        if hook is None:
            return {"questions": [], "today": date.today().isoformat()}
        return as_plain(await anyio.to_thread.run_sync(hook, language))

    async def nl2cube(self, question: str, *, run: bool, today: date | None) -> dict[str, Any]:
        return as_plain(await self._call(self.service.nl2cube, question, run=run, today=today))


def threadsafe_callback(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue) -> StageCallback:
    """An ``on_stage`` callback usable from a worker thread: puts (stage, plain data) on ``queue``."""

    def on_stage(name: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (name, as_plain(data)))

    return on_stage

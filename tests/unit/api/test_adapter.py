"""The service adapter: sync and async services, streaming callbacks, plain-dict conversion, audit rows."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import msgspec

from answer.api._service import ServiceAdapter, as_plain, stages_of, threadsafe_callback
from answer.api.store import AUDIT_TABLE_ROWS, audit_row
from answer.keys import TOKEN_PREFIX, hash_token, new_token


@dataclass
class Inner:
    n: int


class S(msgspec.Struct):
    inner: Inner
    items: tuple[int, ...]


class AsyncService:
    streams_stages = True

    async def ask(
        self,
        question: str,
        *,
        session_id: Any = None,
        mode: Any = None,
        today: Any = None,
        previous: Any = None,
        on_stage: Any = None,
    ) -> dict[str, Any]:
        if on_stage:
            on_stage("intent", {"intent": "detail"})
        await asyncio.sleep(0)
        return {"query_id": "q1", "question": question, "intent": "detail", "table": {"rows": [[1]]}}

    async def nl2cube(self, question: str, run: bool = False, today: Any = None) -> dict[str, Any]:
        return {"cube_query": {}, "bindings": [], "confidence": 0.5}


class PlainService:
    def ask(
        self, question: str, *, session_id: Any = None, mode: Any = None, today: Any = None, previous: Any = None
    ) -> dict[str, Any]:
        return {"query_id": "q2", "question": question, "mode": mode}

    def nl2cube(self, question: str, run: bool = False, today: Any = None) -> dict[str, Any]:
        return {"cube_query": {"run": run}}


def test_as_plain_handles_structs_dataclasses_and_tuples() -> None:
    assert as_plain(S(inner=Inner(3), items=(1, 2))) == {"inner": {"n": 3}, "items": [1, 2]}


async def test_async_service_streams_through_the_callback() -> None:
    adapter = ServiceAdapter(AsyncService())
    assert adapter.streams
    queue: asyncio.Queue = asyncio.Queue()
    raw, plain = await adapter.ask(
        "who?",
        session_id=None,
        mode=None,
        today=None,
        previous=None,
        on_stage=threadsafe_callback(asyncio.get_running_loop(), queue),
    )
    await asyncio.sleep(0)
    assert queue.get_nowait() == ("intent", {"intent": "detail"})
    assert plain["intent"] == "detail" and raw["query_id"] == "q1"


async def test_service_without_on_stage_is_not_passed_one() -> None:
    adapter = ServiceAdapter(PlainService())
    _, plain = await adapter.ask("q", session_id="s", mode="fast", today=None, previous=None, on_stage=lambda *_: None)
    assert not adapter.streams and plain["mode"] == "fast"
    assert (await adapter.nl2cube("q", run=True, today=None))["cube_query"] == {"run": True}


def test_stages_of_a_finished_answer() -> None:
    stages = stages_of(
        {
            "intent": "aggregate",
            "provenance": {"cube_query": {"measures": ["m"]}},
            "table": {"columns": ["a"], "rows": [[1], [2]]},
        }
    )
    assert [name for name, _ in stages] == ["intent", "retrieval", "plan", "rows", "answer"]
    assert stages[3][1]["row_count"] == 2 and stages[2][1]["cube_query"] == {"measures": ["m"]}


def test_audit_row_joins_sql_lists_and_truncates_tables() -> None:
    row = audit_row(
        {
            "query_id": "x",
            "question": "q",
            "provenance": {"sql": ["SELECT 1", "SELECT 2"]},
            "table": {"columns": ["a"], "rows": [[i] for i in range(AUDIT_TABLE_ROWS + 5)]},
        }
    )
    assert row["executed_sql"] == "SELECT 1;\nSELECT 2"
    assert len(row["answer"]["table"]["rows"]) == AUDIT_TABLE_ROWS


def test_tokens_are_random_and_only_their_hash_is_kept() -> None:
    (id1, t1), (id2, t2) = new_token(), new_token()
    assert t1.startswith(TOKEN_PREFIX + id1 + "_") and t1 != t2 and id1 != id2
    assert hash_token(t1) == hash_token(t1) and len(hash_token(t1)) == 64 and t1 not in hash_token(t1)


def test_error_classification() -> None:
    from answer.api.errors import ServiceUnavailable, Unprocessable, classify

    own = type("AggregateError", (Exception,), {"__module__": "router.aggregate.types"})
    down = type("CubeUnavailableError", (Exception,), {"__module__": "cube_models.errors"})
    assert isinstance(classify(own("no measure found")), Unprocessable)
    assert isinstance(classify(down("refused")), ServiceUnavailable)
    assert isinstance(classify(ValueError("bad date")), Unprocessable)
    assert isinstance(classify(TimeoutError("slow")), ServiceUnavailable)
    assert classify(AttributeError("x")) is None and classify(KeyError("k")) is None


def test_only_stable_answers_are_cached() -> None:
    from answer.api.cache import AnswerCache, cache_key

    cache = AnswerCache(ttl_s=60, max_entries=2)
    key = cache_key("Q", None, None)
    cache.put(key, None, {"query_id": "a", "provenance": {"error": {"type": "QueryExecutionError"}}})
    assert cache.get(key) is None
    cache.put(key, None, {"query_id": "a", "provenance": {"error": {"type": "DetailPlanError"}}})
    assert cache.get(key)[1]["provenance"]["answer_cache"]["of_query_id"] == "a"
    for q in ("x", "y"):
        cache.put(cache_key(q, None, None), None, {"query_id": q})
    assert cache.get(key) is None  # evicted: LRU of 2

"""Long-lived components borrow from checked pools: a connection the server dropped is replaced, not kept.

Each component gets a URL with its own ``application_name`` so only its backends are terminated.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from cubesage_core import db

pytestmark = pytest.mark.integration


def _tagged(url: str) -> tuple[str, str]:
    tag = f"cs-pool-{uuid.uuid4().hex[:8]}"
    return make_conninfo(url, application_name=tag), tag


def _terminate(admin_url: str, tag: str) -> int:
    with db.connection(admin_url) as conn:
        return conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s", (tag,)
        ).fetchone()[0]


def test_read_retries_once_on_a_fresh_connection(pg_url: str) -> None:
    url, tag = _tagged(pg_url)
    pool = db.pool(url, min_size=1, max_size=1)
    try:
        pool.wait(10)
        calls: list[int] = []

        def work(conn: psycopg.Connection) -> Any:
            calls.append(1)
            if len(calls) == 1:
                _terminate(pg_url, tag)  # the server drops the connection in the middle of the read
            return conn.execute("SELECT 42").fetchone()[0]

        assert db.read(pool, work) == 42 and len(calls) == 2
        with pytest.raises(psycopg.errors.DivisionByZero):  # a query error is not retried
            db.read(pool, lambda conn: conn.execute("SELECT 1 / 0").fetchone())
    finally:
        pool.close()


def test_sag_recall_store_and_retriever_survive_terminated_backends(demo_ready: Any, pg_url: str) -> None:
    from pydantic import SecretStr

    from cubesage_core.settings import Settings
    from sag_index.backends.postgres import PostgresStore
    from sag_index.recall import SagRecall

    url, tag = _tagged(pg_url)
    settings = Settings(database_url=SecretStr(url), sag_cache_refresh_s=0)
    store = PostgresStore(url)
    recall = SagRecall(url, store, settings)
    try:
        question = "list the refunded orders of customer Li Wei"
        before = (
            [h.table for h in recall.recall_tables(question)],
            [h.label for h in recall.recall_rows(question)],
            store.count(),
        )
        assert before[0] and before[1]
        for _ in range(2):
            recall.refresh()  # reload dictionaries too: every query goes to the database again
            assert _terminate(pg_url, tag) > 0
            after = (
                [h.table for h in recall.recall_tables(question)],
                [h.label for h in recall.recall_rows(question)],
                store.count(),
            )
            assert after == before
    finally:
        recall.close()
        store.close()


def test_the_answering_service_survives_terminated_backends(demo_ready: Any, pg_url: str) -> None:
    from pydantic import SecretStr

    from answer.service import Cubesage
    from cubesage_core.settings import Settings

    url, tag = _tagged(pg_url)
    settings = Settings(database_url=SecretStr(url), warehouse_cache_refresh_s=0, sag_cache_refresh_s=0)
    with Cubesage(settings, url=url) as service:
        first = service.ask("What was the order count in 2024?")
        assert first.table["rows"]
        assert _terminate(pg_url, tag) > 0
        service.ping()
        again = service.ask("What was the order count in 2024?")
        assert again.table["rows"] == first.table["rows"]
        detail = service.ask("list the orders of customer Li Wei")
        assert _terminate(pg_url, tag) > 0
        assert service.ask("list the orders of customer Li Wei").table["rows"] == detail.table["rows"]

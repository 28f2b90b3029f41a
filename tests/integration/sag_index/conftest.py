"""Fixtures: a fresh SAG database per module and the store under contract test, on real servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from cubesage_core.scratch import scratch_database, unique_name
from sag_index.backends.base import VectorStore

BACKENDS = ["postgres", "elasticsearch"]


def fresh_database(pg_url: str, prefix: str = "sag_test") -> str:
    """A new empty database on the session server with the cubesage schema applied."""
    return scratch_database(pg_url, unique_name(prefix))


@pytest.fixture(scope="module")
def sag_db(pg_url: str) -> str:
    return fresh_database(pg_url)


def make_store(backend: str, request: pytest.FixtureRequest, db_url: str) -> VectorStore:
    if backend == "postgres":
        from sag_index.backends.postgres import PostgresStore

        store: VectorStore = PostgresStore(db_url)
    else:
        from sag_index.backends.elasticsearch import ElasticsearchStore

        es_url = request.getfixturevalue("es_url")
        store = ElasticsearchStore(es_url, prefix=f"sagtest_{uuid.uuid4().hex[:8]}_")
    store.ensure()
    store.reset()
    return store


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, pg_url: str) -> Iterator[VectorStore]:
    """The store under test, empty; PostgreSQL stores get their own database."""
    db_url = fresh_database(pg_url, "sag_store") if request.param == "postgres" else pg_url
    s = make_store(request.param, request, db_url)
    yield s
    if request.param == "elasticsearch":
        s.reset()
        for name in ("event_vectors", "entity_vectors", "event_entity_vectors"):
            s._es.indices.delete(index=s.index(name), ignore_unavailable=True)  # type: ignore[attr-defined]
    s.close()

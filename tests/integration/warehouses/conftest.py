"""A fresh database ``tpch`` on the session's PostgreSQL server with the TPC-H pack loaded."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from cubesage_core.embedded_pg import EmbeddedPostgres
from tests.conftest import SERVICE_TIMINGS
from warehouses.packs import Pack, get_pack

DB_NAME = "tpch"


@dataclass(frozen=True)
class LoadedPack:
    pack: Pack
    url: str
    counts: dict[str, int]
    seconds: float


@pytest.fixture(scope="session")
def tpch_loaded(pg_server: EmbeddedPostgres) -> Iterator[LoadedPack]:
    running = pg_server.running()
    assert running is not None
    with psycopg.connect(running.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB_NAME}")
    pack = get_pack("tpch")
    url = running.url(DB_NAME)
    started = time.monotonic()
    counts = pack.loader()(url, pack.schema)
    seconds = time.monotonic() - started
    SERVICE_TIMINGS["tpch_load_s"] = seconds
    yield LoadedPack(pack, url, counts, seconds)
    with psycopg.connect(running.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")

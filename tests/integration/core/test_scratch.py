"""Scratch databases on the session server: set up as asked, started afresh, dropped on exit."""

from __future__ import annotations

import psycopg
import pytest

from cubesage_core.scratch import drop_database, scratch_database, temporary_database, unique_name

pytestmark = pytest.mark.integration


def _exists(url: str, name: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def _extensions(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0] for r in conn.execute("SELECT extname FROM pg_extension").fetchall()}


def test_a_scratch_database_has_the_schema_and_fresh_starts_it_over(pg_url: str) -> None:
    name = unique_name("scratch_it")
    url = scratch_database(pg_url, name)
    try:
        assert {"vector", "pg_trgm"} <= _extensions(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('sag.source_chunk')").fetchone()[0] is not None
            conn.execute("CREATE TABLE public.marker (x int)")
        assert scratch_database(pg_url, name) == url  # again: the same database, kept
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('public.marker')").fetchone()[0] is not None
        scratch_database(pg_url, name, fresh=True)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('public.marker')").fetchone()[0] is None
    finally:
        drop_database(pg_url, name)
    assert not _exists(pg_url, name)


def test_setup_levels_and_temporary_databases_are_dropped(pg_url: str) -> None:
    with temporary_database(pg_url, "scratch_none", setup="none") as empty:
        assert "vector" not in _extensions(empty)
        name = psycopg.conninfo.conninfo_to_dict(empty)["dbname"]
        assert _exists(pg_url, name)
    assert not _exists(pg_url, name)
    with temporary_database(pg_url, "scratch_ext", setup="extensions") as url:
        assert {"vector", "pg_trgm"} <= _extensions(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('sag.source_chunk')").fetchone()[0] is None
    with temporary_database(pg_url, "scratch_keep", setup="none", keep=True) as kept:
        name = psycopg.conninfo.conninfo_to_dict(kept)["dbname"]
    assert _exists(pg_url, name)
    drop_database(pg_url, name)

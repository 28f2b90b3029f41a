"""Embedded PostgreSQL: start, reuse on the same data dir, recover after a crash, extensions present."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psycopg

from cubesage_core.embedded_pg import EmbeddedPostgres


def _wait_gone(pid: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def test_start_reuse_crash_and_restart(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path / "pg")
    first = server.start()
    try:
        with psycopg.connect(first.url(), autocommit=True) as conn:
            exts = {r[0] for r in conn.execute("SELECT extname FROM pg_extension").fetchall()}
            conn.execute("CREATE TABLE keep_me (id int)")
            conn.execute("INSERT INTO keep_me VALUES (42)")
        assert {"vector", "pg_trgm"} <= exts
        assert first.url().startswith("postgresql://postgres@127.0.0.1:")

        again = EmbeddedPostgres(tmp_path / "pg").start()
        assert again == first  # same postmaster reused, no second server

        os.kill(first.pid, signal.SIGKILL)  # crash: postmaster.pid stays behind
        _wait_gone(first.pid)
        assert (tmp_path / "pg" / "postmaster.pid").exists()
        assert server.running() is None

        restarted = server.start()
        assert restarted.pid != first.pid
        with psycopg.connect(restarted.url()) as conn:
            assert conn.execute("SELECT id FROM keep_me").fetchone() == (42,)
    finally:
        server.stop()
    assert server.running() is None


def test_configured_port_is_used(tmp_path: Path) -> None:
    from cubesage_core.embedded_pg import free_port

    port = free_port()
    server = EmbeddedPostgres(tmp_path / "pg", port=port)
    try:
        assert server.start().port == port
    finally:
        server.stop()


def test_apply_schema_on_a_brand_new_database(tmp_path: Path) -> None:
    from cubesage_core import db

    server = EmbeddedPostgres(tmp_path / "pg")
    try:
        url = server.start().url()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE fresh")
        fresh = url.rsplit("/", 1)[0] + "/fresh"
        db.apply_schema(fresh)
        db.apply_schema(fresh)  # idempotent
        with db.connection(fresh) as conn:
            tables = {
                r[0]
                for r in conn.execute(
                    "SELECT table_schema || '.' || table_name FROM information_schema.tables"
                ).fetchall()
            }
        assert {"semlayer.asset", "semlayer.business_term", "sag.event"} <= tables
    finally:
        server.stop()

"""The built-in backend's result cache on a real warehouse: hits are marked, writes are seen."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cube_models.backends import BuiltinBackend
from cube_models.model import load_model
from cubesage_core.db import connection
from cubesage_core.settings import Settings

pytestmark = pytest.mark.integration
SCHEMA = "cs_cache_probe"


@pytest.fixture()
def probe(tmp_path: Path, pg_url: str):
    with connection(pg_url) as conn:
        conn.execute(
            f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA};"
            f"CREATE TABLE {SCHEMA}.sale (id int PRIMARY KEY, amount int);"
            f"INSERT INTO {SCHEMA}.sale VALUES (1, 10), (2, 20);"
            f"GRANT USAGE ON SCHEMA {SCHEMA} TO cubesage_reader;"
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO cubesage_reader"
        )
    (tmp_path / "sale.yml").write_text(f"""
cubes:
  - name: sale
    sql_table: {SCHEMA}.sale
    dimensions:
      - {{name: id, sql: id, type: number, primary_key: true}}
    measures:
      - {{name: total, type: sum, sql: amount}}
""")
    backend = BuiltinBackend(
        pg_url, load_model(tmp_path), Settings(_env_file=None, warehouse_schema=SCHEMA, warehouse_cache_refresh_s=0.2)
    )
    yield backend
    backend.close()
    with connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")


def _total_after_refresh(backend: BuiltinBackend, expected: int, deadline_s: float = 10.0) -> int:
    """Ask until the answer changes (the refresh key is read every 0.2 s; statistics flush within ~1 s)."""
    stop = time.monotonic() + deadline_s
    while True:
        total = backend.load({"measures": ["sale.total"]}).rows[0]["sale.total"]
        if total == expected or time.monotonic() > stop:
            return total
        time.sleep(0.1)


def test_repeat_queries_are_cache_hits_and_writes_are_seen(probe: BuiltinBackend, pg_url: str) -> None:
    first = probe.load({"measures": ["sale.total"]})
    again = probe.load({"measures": ["sale.total"]})
    assert first.rows == again.rows == [{"sale.total": 30}]
    assert not first.cached and again.cached
    with connection(pg_url) as conn:  # an insert by another session: seen through the change counters
        conn.execute(f"INSERT INTO {SCHEMA}.sale VALUES (3, 5)")
    assert _total_after_refresh(probe, 35) == 35
    with connection(pg_url) as conn:  # TRUNCATE + reload: a new file node
        conn.execute(f"TRUNCATE {SCHEMA}.sale; INSERT INTO {SCHEMA}.sale VALUES (9, 1)")
    assert _total_after_refresh(probe, 1) == 1


def test_cache_off_always_runs_the_query(probe: BuiltinBackend, pg_url: str) -> None:
    off = BuiltinBackend(
        pg_url, probe.model, Settings(_env_file=None, warehouse_schema=SCHEMA, warehouse_cache_refresh_s=0)
    )
    try:
        assert [off.load({"measures": ["sale.total"]}).cached for _ in range(3)] == [False, False, False]
    finally:
        off.close()

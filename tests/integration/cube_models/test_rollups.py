"""Rollups on the demo warehouse: the built-in compiler picks the rollup the real Cube server picks for each
matching rule, answers from the rollup tables cubesage built with the same rows as from the warehouse and as
Cube, and stops using a rollup as soon as the warehouse changes until it is refreshed."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import psycopg
import pytest

from cube_models import rollups
from cube_models.backends import BuiltinBackend, CubeBackend
from cube_models.client import CubeClient
from cube_models.compiler import compile_query
from cube_models.model import SemanticModel, load_model
from cube_models.parity import compare_rows, order_keys
from cubesage_core.settings import Settings
from tests.integration.cube_models.rollup_cases import KNOWN_DIFFERENCES, ROLLUP_CASES

pytestmark = pytest.mark.integration
TODAY = date(2025, 6, 30)
SCHEMAS = ("warehouse",)


@pytest.fixture(scope="module")
def built(pg_url: str, demo_model: SemanticModel) -> dict[str, str]:
    rollups.refresh(pg_url, demo_model, SCHEMAS)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        tables = rollups.fresh_tables(conn, demo_model, SCHEMAS)
    assert set(tables) == {p.path for p in demo_model.pre_aggregations()}
    return tables


def test_demo_rollup_cases_cover_matches_and_misses(demo_model: SemanticModel) -> None:
    every = {p.path: "x.y" for p in demo_model.pre_aggregations()}
    chosen = [compile_query(q, demo_model, TODAY, rollups=every).rollup for q in ROLLUP_CASES.values()]
    assert None in chosen and len({c for c in chosen if c}) == len(every)


@pytest.mark.parametrize("name", list(ROLLUP_CASES))
def test_builtin_picks_the_rollup_cube_picks(name: str, demo_model: SemanticModel, cube_client: CubeClient) -> None:
    query = ROLLUP_CASES[name]
    every = {p.path: "x.y" for p in demo_model.pre_aggregations()}
    ours = compile_query(query, demo_model, TODAY, rollups=every).rollup
    theirs = [p["preAggregationId"] for p in cube_client.sql(query).get("preAggregations", [])]
    if name in KNOWN_DIFFERENCES:
        assert (ours, theirs[0] if theirs else None) == KNOWN_DIFFERENCES[name]
        return
    assert ([ours] if ours else []) == theirs, f"{name}: built-in {ours}, Cube {theirs}"


@pytest.mark.parametrize("name", list(ROLLUP_CASES))
def test_rollup_rows_equal_warehouse_rows_and_cube(
    name: str, built: dict[str, str], pg_url: str, demo_model: SemanticModel, cube_backend: CubeBackend
) -> None:
    query = ROLLUP_CASES[name]
    backend = BuiltinBackend(
        pg_url, demo_model, Settings(_env_file=None, warehouse_cache_refresh_s=0, rollup_refresh=False)
    )
    backend.refresher = None  # the tables set below are used as given: no check against the refresh key
    try:
        warehouse = backend.load(query, TODAY)
        assert warehouse.rollup is None
        backend.rollup_tables = dict(built)
        from_rollup = backend.load(query, TODAY)
    finally:
        backend.close()
    assert compare_rows(from_rollup.rows, warehouse.rows, order_keys(query)) == []
    if name not in KNOWN_DIFFERENCES:
        assert compare_rows(from_rollup.rows, cube_backend.load(query).rows, order_keys(query)) == []
    if from_rollup.rollup:
        assert "cubesage_rollups." in from_rollup.sql and "warehouse." not in from_rollup.sql


def _await_counted_inserts(conn: psycopg.Connection, table: str, rows: int) -> None:
    """Wait (10 s at most) until pg_stat counts ``rows`` inserts into ``table``: a session's write counters
    reach it asynchronously, within about a second."""
    deadline = time.monotonic() + 10
    query = "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relid = %s::regclass"
    while conn.execute(query, (table,)).fetchone()[0] < rows and time.monotonic() < deadline:
        time.sleep(0.2)


def test_changed_warehouse_is_answered_from_its_tables_until_refreshed(pg_url: str, tmp_path: Path) -> None:
    """A rollup over a scratch schema: fresh after its build, stale (and unused) once a row is added, fresh
    again with the new total after a refresh."""
    (tmp_path / "t.yml").write_text(
        "cubes:\n  - name: sales\n    sql_table: rollup_scratch.sales\n    dimensions:\n"
        "      - {name: id, sql: id, type: number, primary_key: true}\n      - {name: kind, sql: kind, type: string}\n"
        "    measures:\n      - {name: total, sql: amount, type: sum}\n    pre_aggregations:\n"
        "      - {name: by_kind, measures: [CUBE.total], dimensions: [CUBE.kind]}\n"
    )
    model = load_model(tmp_path)
    schemas = ("rollup_scratch",)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "DROP SCHEMA IF EXISTS rollup_scratch CASCADE; CREATE SCHEMA rollup_scratch; "
            "CREATE TABLE rollup_scratch.sales (id int PRIMARY KEY, kind text, amount numeric); "
            "INSERT INTO rollup_scratch.sales VALUES (1, 'a', 10), (2, 'b', 5); "
            "GRANT USAGE ON SCHEMA rollup_scratch TO cubesage_reader; "
            "GRANT SELECT ON rollup_scratch.sales TO cubesage_reader"
        )
        _await_counted_inserts(conn, "rollup_scratch.sales", 2)  # else the build's state misses them
    settings = Settings(
        _env_file=None, warehouse_schemas=list(schemas), warehouse_cache_refresh_s=0, rollup_refresh=False
    )
    backend = BuiltinBackend(pg_url, model, settings)
    query = {"measures": ["sales.total"], "dimensions": ["sales.kind"], "order": {"sales.kind": "asc"}}
    try:
        assert [b.built for b in rollups.refresh(pg_url, model, schemas)] == [True]
        assert [b.built for b in rollups.refresh(pg_url, model, schemas)] == [False]
        first = backend.load(query)
        assert first.rollup == "sales.by_kind" and [r["sales.total"] for r in first.rows] == [10, 5]
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("INSERT INTO rollup_scratch.sales VALUES (3, 'a', 7)")
            deadline = time.monotonic() + 10
            while rollups.fresh_tables(conn, model, schemas) and time.monotonic() < deadline:
                time.sleep(0.2)  # the write counters reach pg_stat within about a second
        backend._rollup_key.expire()
        changed = backend.load(query)
        assert changed.rollup is None and [r["sales.total"] for r in changed.rows] == [17, 5]
        assert [b.built for b in rollups.refresh(pg_url, model, schemas)] == [True]
        backend._rollup_key.expire()
        refreshed = backend.load(query)
        assert refreshed.rollup == "sales.by_kind" and [r["sales.total"] for r in refreshed.rows] == [17, 5]
    finally:
        backend.close()
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA rollup_scratch CASCADE")
        rollups.refresh(pg_url, load_model(Path(__file__).parents[3] / "demo" / "model"), ("warehouse",))

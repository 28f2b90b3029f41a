"""Hostile input through both backends: clear errors or bound parameters, and the warehouse is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.backends import BuiltinBackend, CubeBackend
from cube_models.errors import CubeModelsError, CubeUserError, QueryError
from cube_models.model import load_model
from cubesage_core.db import connection
from cubesage_core.settings import Settings

pytestmark = pytest.mark.integration

EVIL = [
    "'; drop table warehouse.fact_order; --",
    "x' OR '1'='1",
    "completed'); DELETE FROM warehouse.fact_order; --",
    "\\'; drop table warehouse.dim_region; --",
    "$1; truncate warehouse.fact_refund",
]


def _fingerprint(pg_url: str) -> dict[str, int]:
    with connection(pg_url) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM warehouse.{t}").fetchone()[0]
            for t in ("fact_order", "dim_region", "fact_refund", "fact_order_item")
        }


@pytest.mark.parametrize("value", EVIL)
def test_injection_in_filter_values_is_a_bound_parameter(
    value: str, pg_url: str, builtin: BuiltinBackend, cube_backend: CubeBackend
) -> None:
    before = _fingerprint(pg_url)
    for operator in ("equals", "contains", "notEquals", "startsWith"):
        query = {
            "measures": ["orders.count"],
            "filters": [{"member": "orders.status", "operator": operator, "values": [value]}],
        }
        ours = builtin.load(query)
        theirs = cube_backend.load(query)
        assert value not in ours.sql and "$1" in ours.sql and len(ours.params) == 1
        assert ours.rows == theirs.rows
    assert _fingerprint(pg_url) == before


@pytest.mark.parametrize(
    "query,error",
    [
        ({"measures": ["orders.count; drop table warehouse.fact_order"]}, "not a member name"),
        ({"measures": ["orders.count"], "order": {"orders.count desc; drop table x": "asc"}}, "not a member name"),
        ({"measures": ["orders.count"], "limit": "1; drop table warehouse.fact_order"}, "limit"),
        (
            {
                "measures": ["orders.count"],
                "timeDimensions": [
                    {
                        "dimension": "orders.order_ts",
                        "dateRange": ["2024-01-01'; drop table warehouse.fact_order; --", "2024-02-01"],
                    }
                ],
            },
            "can't parse date",
        ),
        ({"measures": ["orders.secret_column"]}, "unknown member"),
    ],
)
def test_hostile_structure_is_rejected(query: dict, error: str, pg_url: str, builtin: BuiltinBackend) -> None:
    before = _fingerprint(pg_url)
    with pytest.raises(QueryError, match=error):
        builtin.load(query)
    assert _fingerprint(pg_url) == before


def test_cube_reports_unknown_member_with_its_message(cube_backend: CubeBackend) -> None:
    with pytest.raises(CubeUserError, match="not found") as info:
        cube_backend.load({"measures": ["orders.nope"]})
    assert info.value.status == 400


def test_builtin_runs_read_only_as_reader_with_timeout(tmp_path: Path, pg_url: str) -> None:
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "probe.yml").write_text("""
cubes:
  - name: probe
    sql: SELECT 1 AS id
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: role, sql: "current_user", type: string}
      - {name: read_only, sql: "current_setting('transaction_read_only')", type: string}
      - {name: timeout, sql: "current_setting('statement_timeout')", type: string}
      - {name: tz, sql: "current_setting('TimeZone')", type: string}
  - name: forbidden
    sql_table: semlayer.asset
    dimensions:
      - {name: asset_id, sql: asset_id, type: string, primary_key: true}
""")
    backend = BuiltinBackend(pg_url, load_model(folder), Settings(_env_file=None, statement_timeout_ms=1234))
    try:
        row = backend.load({"dimensions": ["probe.role", "probe.read_only", "probe.timeout", "probe.tz"]}).rows[0]
        assert row == {
            "probe.role": "cubesage_reader",
            "probe.read_only": "on",
            "probe.timeout": "1234ms",
            "probe.tz": "UTC",
        }
        with pytest.raises(CubeModelsError, match="permission denied"):
            backend.load({"dimensions": ["forbidden.asset_id"]})
        # the connection is still usable after an error
        assert backend.load({"dimensions": ["probe.role"]}).rows == [{"probe.role": "cubesage_reader"}]
    finally:
        backend.close()


def test_statement_timeout_cancels_slow_queries(tmp_path: Path, pg_url: str) -> None:
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "slow.yml").write_text("""
cubes:
  - name: slow
    sql: SELECT g AS id FROM generate_series(1, 30000000) g
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
    measures:
      - {name: total, type: sum, sql: id}
""")
    backend = BuiltinBackend(pg_url, load_model(folder), Settings(_env_file=None, statement_timeout_ms=200))
    try:
        with pytest.raises(QueryError, match="statement_timeout"):
            backend.load({"measures": ["slow.total"]})
    finally:
        backend.close()

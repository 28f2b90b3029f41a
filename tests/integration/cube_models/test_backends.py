"""Backends against the real services: Cube client calls, async paths, get_backend and its fallback."""

from __future__ import annotations

from datetime import date

import pytest

from cube_models.backends import BuiltinBackend, CubeBackend, get_backend
from cube_models.backends.fallback import FallbackBackend
from cube_models.client import CubeClient
from cube_models.errors import CubeAuthError, CubeUnavailableError
from cube_models.model import SemanticModel
from cubesage_core.embedded_pg import free_port
from cubesage_core.settings import Settings

pytestmark = pytest.mark.integration
QUERY = {
    "measures": ["order_items.gmv", "orders.count"],
    "dimensions": ["regions.name_zh"],
    "timeDimensions": [{"dimension": "orders.order_ts", "granularity": "month", "dateRange": "this quarter"}],
}


def test_client_meta_sql_ready(cube_client: CubeClient) -> None:
    assert cube_client.ready()
    meta = cube_client.meta()
    assert {c["name"] for c in meta["cubes"]} >= {"orders", "order_items"}
    sql = cube_client.sql({"measures": ["orders.count"]})
    assert "count(distinct" in sql["sql"][0].lower()


async def test_async_cube_and_builtin_agree_with_today_anchor(
    cube_backend: CubeBackend, builtin: BuiltinBackend
) -> None:
    today = date(2025, 6, 30)
    theirs = await cube_backend.aload(QUERY, today=today)
    ours = await builtin.aload(QUERY, today=today)
    assert ours.rows and len(ours.rows) == len(theirs.rows) == 24  # 8 regions x 3 months of Q2 2025
    key = lambda r: (r["regions.name_zh"], r["orders.order_ts.month"])  # noqa: E731
    for a, b in zip(sorted(ours.rows, key=key), sorted(theirs.rows, key=key), strict=True):
        assert a["orders.count"] == b["orders.count"]
        assert a["order_items.gmv"] == pytest.approx(b["order_items.gmv"], rel=1e-9)


def test_bad_secret_is_an_auth_error(cube) -> None:
    with pytest.raises(CubeAuthError):
        CubeClient(cube.url, "wrong-secret-" * 3, retries=0).meta()


def test_get_backend_prefers_cube_and_falls_back(cube, pg_url: str, demo_model: SemanticModel) -> None:
    live = get_backend(Settings(_env_file=None, cube_url=cube.url, cube_secret=cube.secret), pg_url, demo_model)
    result = live.load({"measures": ["orders.count"]})
    assert result.backend == "cube" and result.fallback_reason is None and "SELECT" in result.sql.upper()

    dead_url = f"http://127.0.0.1:{free_port()}"
    settings = Settings(_env_file=None, cube_url=dead_url, cube_secret="x" * 32)
    backend = get_backend(settings, pg_url, demo_model)
    assert isinstance(backend, FallbackBackend)
    backend.primary.client.retries = 0
    fallen = backend.load({"measures": ["orders.count"]})
    assert fallen.backend == "builtin" and "Cube unreachable" in fallen.fallback_reason
    assert fallen.rows == result.rows

    strict = get_backend(
        Settings(_env_file=None, cube_url=dead_url, cube_secret="x" * 32, cube_fallback_builtin=False),
        pg_url,
        demo_model,
    )
    strict.client.retries = 0
    with pytest.raises(CubeUnavailableError):
        strict.load({"measures": ["orders.count"]})
    assert isinstance(get_backend(Settings(_env_file=None), pg_url, demo_model), BuiltinBackend)


def test_boolean_dimension_filter(builtin: BuiltinBackend, cube_backend: CubeBackend, pg_url: str) -> None:
    """A boolean dimension defined by an expression is parenthesised as a filter operand (Cube 0.33 is not)."""
    from cube_models.errors import CubeError
    from cubesage_core.db import connection

    query = {
        "measures": ["customers.count"],
        "filters": [{"member": "customers.is_vip", "operator": "equals", "values": ["true"]}],
    }
    with connection(pg_url) as conn:
        vip = conn.execute("SELECT count(*) FROM warehouse.dim_customer WHERE segment = 'vip'").fetchone()[0]
    assert builtin.load(query).rows == [{"customers.count": vip}]
    with pytest.raises(CubeError, match="syntax error"):
        cube_backend.load(query)

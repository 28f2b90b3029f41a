"""Views: a second real Cube server over demo/model plus a views file; built-in rows must match Cube's.

View members follow Cube's join hints: the view's join_path is joined hop by hop from its first cube.
One deliberate difference: Cube 0.33 loses fan-out protection for view measures (it counts a customer once
per order); the built-in compiler keeps it (see cube_models/README.md).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cube_models.backends import BuiltinBackend, CubeBackend
from cube_models.client import CubeClient
from cube_models.model import load_model
from cube_models.parity import compare_rows, order_keys
from cubesage_core.settings import REPO_ROOT, Settings

pytestmark = pytest.mark.integration

VIEWS = """
views:
  - name: sales
    cubes:
      - join_path: order_items
        includes: [gmv, aov, units_sold, line_count]
      - join_path: order_items.orders
        prefix: true
        includes: [count, status, channel, order_ts]
      - join_path: order_items.orders.regions
        includes:
          - name: name_en
            alias: region
      - join_path: order_items.products
        includes: [category]
  - name: customer_orders
    cubes:
      - join_path: orders
        includes: [count, completed_count]
      - join_path: orders.customers
        alias: buyer
        prefix: true
        includes: [segment, count]
"""

CASES = [
    {"measures": ["sales.gmv", "sales.aov"], "dimensions": ["sales.region"]},
    {"measures": ["sales.orders_count"], "dimensions": ["sales.orders_status"]},
    {
        "measures": ["sales.gmv"],
        "dimensions": ["sales.category"],
        "timeDimensions": [
            {"dimension": "sales.orders_order_ts", "granularity": "quarter", "dateRange": ["2024-01-01", "2024-12-31"]}
        ],
    },
    {
        "measures": ["sales.units_sold", "sales.line_count"],
        "filters": [{"member": "sales.orders_channel", "operator": "equals", "values": ["app"]}],
    },
    {"measures": ["customer_orders.count"], "dimensions": ["customer_orders.buyer_segment"]},
    {
        "measures": ["customer_orders.completed_count"],
        "dimensions": ["customer_orders.buyer_segment"],
        "order": {"customer_orders.buyer_segment": "asc"},
    },
]


@pytest.fixture(scope="module")
def views_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("views_model")
    for path in (REPO_ROOT / "demo" / "model").glob("*.yml"):
        shutil.copy(path, folder / path.name)
    (folder / "views.yml").write_text(VIEWS)
    return folder


@pytest.fixture(scope="module")
def views_cube(pg_url: str, views_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CubeBackend]:
    from tests.infra.cube.cube_server import start_cube

    server = start_cube(pg_url, views_dir, tmp_path_factory.mktemp("views_cube"))
    client = CubeClient(server.url, server.secret)
    try:
        yield CubeBackend(client, with_sql=False)
    finally:
        client.close()
        server.stop()


@pytest.mark.parametrize("query", CASES, ids=[f"view{i}" for i in range(len(CASES))])
def test_view_queries_match_cube(query: dict, pg_url: str, views_dir: Path, views_cube: CubeBackend) -> None:
    builtin = BuiltinBackend(pg_url, load_model(views_dir), Settings(_env_file=None))
    try:
        ours = builtin.load(query)
    finally:
        builtin.close()
    theirs = views_cube.load(query)
    assert ours.rows, "a view query with no rows proves little"
    problems = compare_rows(ours.rows, theirs.rows, order_keys(query))
    assert not problems, f"{problems}\nSQL: {ours.sql}"


def test_view_measures_stay_fan_out_safe_unlike_cube_0_33(
    pg_url: str, views_dir: Path, views_cube: CubeBackend
) -> None:
    from cubesage_core.db import connection

    query = {"measures": ["customer_orders.buyer_count"]}
    builtin = BuiltinBackend(pg_url, load_model(views_dir), Settings(_env_file=None))
    try:
        ours = builtin.load(query).rows[0]["customer_orders.buyer_count"]
    finally:
        builtin.close()
    with connection(pg_url) as conn:
        buyers, orders = conn.execute(
            "SELECT count(DISTINCT customer_id), count(*) FROM warehouse.fact_order"
        ).fetchone()
    assert ours == buyers  # customers with at least one order, each counted once
    assert views_cube.load(query).rows[0]["customer_orders.buyer_count"] == orders  # Cube 0.33: one per order

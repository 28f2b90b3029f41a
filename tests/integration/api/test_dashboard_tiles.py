"""Dashboard tiles over the real API: a question becomes a Cube query (/v1/nl2cube) that a dashboard stores
and runs again without the question, through cubesage's /v1/cube/load (Cube REST here, the built-in
compiler without Cube) or directly through Cube's own /cubejs-api/v1/load, as the README shows."""

from __future__ import annotations

import time
from typing import Any

import httpx
import jwt
import pytest

from cubesage_core import db
from tests.live_api import LiveApi, api_settings, running_api

pytestmark = pytest.mark.integration
EAST_2024 = (
    "SELECT round(sum(i.amount), 2) FROM warehouse.fact_order_item i JOIN warehouse.fact_order o "
    "USING (order_id) JOIN warehouse.dim_region r USING (region_id) WHERE o.status = 'completed' "
    "AND r.region_code = 'east' AND o.order_ts >= %s AND o.order_ts < %s"
)


def nl2cube(api: LiveApi, question: str) -> dict[str, Any]:
    resp = httpx.post(f"{api.url}/v1/nl2cube", json={"question": question}, timeout=60)
    assert resp.status_code == 200, resp.text
    return resp.json()


def load(api: LiveApi, body: dict[str, Any]) -> dict[str, Any]:
    resp = httpx.post(f"{api.url}/v1/cube/load", json=body, timeout=60)
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_a_tile_refreshes_through_cube_without_the_question(live_api: LiveApi, cube: Any, pg_url: str) -> None:
    query = nl2cube(live_api, "GMV in East China in 2024")["cube_query"]
    with db.connection(pg_url) as conn:
        expected = float(conn.execute(EAST_2024, ("2024-01-01", "2025-01-01")).fetchone()[0])
        answered_before = conn.execute("SELECT count(*) FROM semlayer.query_log").fetchone()[0]
    tile = load(live_api, {"cube_query": query})
    with db.connection(pg_url) as conn:  # every answered question is logged: the tile asked none
        assert conn.execute("SELECT count(*) FROM semlayer.query_log").fetchone()[0] == answered_before
    assert tile["backend"] == "cube" and tile["table"]["rows"][0][0] == pytest.approx(expected)
    assert tile["chart"]["usermeta"]["shape"] == "kpi" and tile["table"]["display"][0][0] == f"{expected:,.2f}"
    # the same stored query straight to Cube's REST API, as an existing Cube dashboard sends it
    token = jwt.encode({"iat": int(time.time()), "exp": int(time.time()) + 600}, cube.secret, algorithm="HS256")
    direct = httpx.post(
        f"{cube.url}/cubejs-api/v1/load", json={"query": query}, headers={"Authorization": token}, timeout=60
    )
    assert direct.status_code == 200, direct.text
    assert float(direct.json()["data"][0]["order_items.gmv"]) == pytest.approx(expected)


def test_compared_periods_are_one_tile_of_every_period(live_api: LiveApi, pg_url: str) -> None:
    answer = nl2cube(live_api, "GMV in East China 2024 vs 2023")
    assert [q["label"] for q in answer["cube_queries"]] == ["2024", "2023"]
    tile = load(live_api, {"cube_queries": answer["cube_queries"]})
    with db.connection(pg_url) as conn:
        expected = {
            year: float(conn.execute(EAST_2024, (f"{year}-01-01", f"{year + 1}-01-01")).fetchone()[0])
            for year in (2023, 2024)
        }
    got = {int(row[0]): row[1] for row in tile["table"]["rows"]}
    assert got == pytest.approx(expected) and tile["table"]["columns"][0] == "period"
    assert tile["chart"]["usermeta"]["shape"] == "compare"
    assert tile["chart"]["encoding"]["x"]["sort"] == ["2023", "2024"]


def test_single_number_tiles_get_their_trend(live_api: LiveApi) -> None:
    query = nl2cube(live_api, "GMV in East China last month")["cube_query"]
    card = load(live_api, {"cube_query": query, "today": "2025-06-30"})["chart"]["hconcat"][0]["vconcat"]
    assert card[2]["data"]["values"][0]["text"].endswith("vs 2025-04")  # May against April
    assert [p["period"] for p in card[3]["data"]["values"]][-1] == "2025-05"


def test_without_cube_the_builtin_compiler_runs_the_tile(demo_ready: Any, pg_url: str) -> None:
    with running_api(api_settings(pg_url), pg_url) as api:
        query = nl2cube(api, "GMV by sales channel in 2024")["cube_query"]
        tile = load(api, {"cube_query": query, "language": "zh"})
        bad = httpx.post(f"{api.url}/v1/cube/load", json={"cube_query": {"measures": ["orders.nope"]}}, timeout=30)
    assert tile["backend"] == "builtin" and tile["table"]["labels"] == ["渠道", "GMV"]
    assert tile["chart"]["usermeta"]["shape"] == "bars" and tile["table"]["row_count"] == 3
    assert bad.status_code == 422 and "orders.nope" in bad.json()["detail"]

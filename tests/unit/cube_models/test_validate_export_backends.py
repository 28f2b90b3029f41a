"""Query validation with suggestions, asset building for export, and the Cube->builtin fallback."""

from __future__ import annotations

from datetime import date

from cube_models.backends import FallbackBackend, LoadResult, SemanticBackend
from cube_models.errors import CubeUnavailableError, CubeUserError
from cube_models.export import build_assets, main_table
from cube_models.model import load_model
from cube_models.validate import validate
from cubesage_core.embeddings import get_embedder
from cubesage_core.settings import REPO_ROOT

MODEL = load_model(REPO_ROOT / "demo" / "model")
EMB = get_embedder("hash")


def _codes(query: object) -> dict[str, object]:
    return {p.code: p for p in validate(query, MODEL, row_cap=50_000, embedder=EMB)}


def test_valid_query_has_no_problems() -> None:
    assert (
        validate(
            {
                "measures": ["order_items.gmv"],
                "dimensions": ["regions.name_zh"],
                "timeDimensions": [
                    {"dimension": "orders.order_ts", "granularity": "month", "dateRange": "this quarter"}
                ],
            },
            MODEL,
            today=date(2025, 6, 30),
            embedder=EMB,
        )
        == []
    )


def test_problems_with_suggestions() -> None:
    found = _codes(
        {
            "measures": ["orders.cuont"],
            "dimensions": ["orders.count"],
            "limit": 60_000,
            "timeDimensions": [{"dimension": "orders.status", "dateRange": "sometime"}],
        }
    )
    assert "orders.count" in found["unknown_member"].suggestions
    assert found["wrong_kind"].member == "orders.count"
    assert (
        found["not_time_dimension"].suggestions[0] == "orders.order_ts"
        or "orders.order_ts" in found["not_time_dimension"].suggestions
    )
    assert "bad_date_range" in found and "limit_over_cap" in found
    assert "did you mean" in str(found["unknown_member"])


def test_malformed_and_unjoinable() -> None:
    assert "malformed" in _codes("{oops")
    assert "no_join_path" in _codes({"measures": ["products.count"], "dimensions": ["regions.name_en"]})


def test_embedding_suggestions_find_members_by_meaning() -> None:
    problems = validate({"measures": ["orders.refund_ratio"]}, MODEL, embedder=EMB)
    assert "orders.refund_rate" in problems[0].suggestions


def test_count_distinct_approx_compiles_to_count_distinct(tmp_path) -> None:
    from cube_models.compiler import compile_query
    from tests.unit.cube_models.helpers import base_doc, write_model

    doc = base_doc()
    doc["cubes"][0]["measures"].append({"name": "approx_b", "type": "count_distinct_approx", "sql": "b_id"})
    model = load_model(write_model(tmp_path / "m", doc))
    assert 'COUNT(DISTINCT "a".b_id)' in compile_query({"measures": ["a.approx_b"]}, model).sql


def test_build_assets_ids_meta_and_edges() -> None:
    assets, edges = build_assets(MODEL)
    by_id = {a.asset_id: a for a in assets}
    assert by_id["table:orders"].meta["sql_table"] == "warehouse.fact_order"
    assert by_id["table:order_items"].meta["sql_table"] == "warehouse.fact_order_item"  # main FROM of its SQL
    assert by_id["table:order_items"].meta["time_dimension"] == "orders.order_ts"
    gmv = by_id["metric:order_items.gmv"]
    assert gmv.certified and gmv.parent_id == "table:order_items" and gmv.meta["agg"] == "sum"
    assert gmv.meta["time_dimension"] == "orders.order_ts" and gmv.meta["filters"]
    assert by_id["dimension:orders.order_id"].meta["primary_key"] is True
    assert "segment:orders.completed" in by_id
    risks = {e.edge_id: (e.relationship, e.fanout_risk) for e in edges}
    assert risks["orders->order_items"] == ("one_to_many", "high")
    assert risks["orders->customers"] == ("many_to_one", "low")
    assert by_id["join:orders->order_items"].asset_type == "join"
    assert edges[0].on_sql and "{" not in edges[0].on_sql
    assert len({a.content_hash for a in assets}) == len(assets)
    assert main_table(MODEL.cubes["revenue"]) == "warehouse.fact_order_item"


class _Fake(SemanticBackend):
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.name = "builtin" if error is None else "cube"
        self.calls = 0

    def load(self, query, today=None) -> LoadResult:
        self.calls += 1
        if self.error:
            raise self.error
        return LoadResult(rows=[{"x": 1}], sql="SELECT 1", backend=self.name)

    async def aload(self, query, today=None) -> LoadResult:
        return self.load(query, today)

    def sql(self, query, today=None) -> str:
        return self.load(query, today).sql

    def close(self) -> None:
        self.closed = True


async def test_fallback_only_when_cube_is_unreachable() -> None:
    dead = _Fake(CubeUnavailableError("refused"))
    fallback = FallbackBackend(dead, _Fake(), cooldown_s=60)
    result = fallback.load({"measures": ["orders.count"]})
    assert result.backend == "builtin" and "Cube unreachable" in result.fallback_reason
    assert "refused" in (await fallback.aload({"measures": ["orders.count"]})).fallback_reason
    assert dead.calls == 1  # cooling down: the dead server is not asked again at once
    fallback.cooldown_s, fallback._down_until = 0, 0.0
    fallback.load({"measures": ["orders.count"]})
    assert dead.calls == 2
    user_error = FallbackBackend(_Fake(CubeUserError("bad member", 400)), _Fake())
    try:
        user_error.load({"measures": ["orders.count"]})
    except CubeUserError:
        pass
    else:
        raise AssertionError("a 400 from Cube must not fall back")

"""Four-engine retrieval on the demo semantic layer (real PostgreSQL + pgvector, USE embeddings)."""

from __future__ import annotations

import json

import pytest

from cubesage_core.db import connection
from fourengine.models import RetrievalResult, TermBinding
from fourengine.retrieve import RetrievalError, Retriever

pytestmark = pytest.mark.integration


def _bound(result: RetrievalResult, asset_id: str) -> list[TermBinding]:
    return [b for b in result.term_bindings if b.mapped_asset_id == asset_id]


@pytest.mark.parametrize("question", ["What was GMV last month?", "上个月的成交总额是多少", "交易额按渠道"])
def test_gmv_terms_bind_to_the_gmv_metric(retriever: Retriever, question: str) -> None:
    result = retriever.retrieve_sync(question)
    assert _bound(result, "metric:order_items.gmv"), result.term_bindings
    top = result.assets[0]
    assert top.asset.asset_id == "metric:order_items.gmv" and top.bound
    assert result.tables()[0] == "table:order_items"


def test_east_china_resolves_to_region_east(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("华东地区本月GMV是多少")
    east = _bound(result, "dimension:regions.region_code")
    assert [b.filter_value for b in east] == ["east"]
    assert "table:regions" in result.join_plan.tables
    assert {b.mapped_asset_id for b in result.term_bindings} >= {"metric:order_items.gmv"}
    assert "'east'" in result.context.text


def test_orders_customers_regions_join_tree_uses_the_right_keys(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("VIP customers order count by region", ["vip customers", "order count", "region"])
    plan = result.join_plan
    assert set(plan.tables) == {"table:orders", "table:customers", "table:regions"}
    assert len(plan.edges) == 2 and not plan.unreachable
    on = {frozenset((e.left, e.right)): e.on_sql for e in plan.edges}
    assert on[frozenset(("table:orders", "table:customers"))] == "orders.customer_id = customers.customer_id"
    assert on[frozenset(("table:orders", "table:regions"))] == "orders.region_id = regions.region_id"
    assert plan.risk == "low"


def test_gmv_by_category_bridges_through_order_items_with_low_fanout(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("GMV by product category in 华南")
    plan = result.join_plan
    assert {"table:order_items", "table:products", "table:regions"} <= set(plan.tables)
    assert "table:orders" in plan.bridge_tables  # order_items -> orders -> regions
    assert all(e.fanout_risk == "low" for e in plan.edges)


def test_low_quality_question_takes_the_corrective_path(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("zxqv blorp wibble")
    assert result.crag.grade == "low"
    assert any(a.startswith("lower_threshold") for a in result.crag.actions)
    assert any(a.startswith("raise_top_k") for a in result.crag.actions)
    assert "V_corrective" in result.timings_ms and "R_corrective" in result.timings_ms
    assert result.crag.grade_after is not None


def test_well_bound_question_is_not_graded_low(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("refund rate by region")
    assert result.crag.grade in {"medium", "high"}
    assert "V_corrective" not in result.timings_ms


def test_result_is_json_serialisable_with_timings_per_engine(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("Refund amount by refund reason")
    data = json.loads(json.dumps(result.to_dict(), ensure_ascii=False))
    for key in ("R", "V", "D", "G", "rerank", "budget", "retrieval"):
        assert key in data["timings_ms"]
    assert data["crag"]["grade"] in {"high", "medium", "low"}
    assert data["context"]["text"].startswith("## ")
    assert sum(data["context"]["tokens"].values()) <= data["context"]["budget"]


def test_few_shot_cache_hit_is_counted(retriever: Retriever, fe_url: str) -> None:
    question = "Refund rate by region"  # an approved example of demo/few_shots.yaml
    with connection(fe_url) as conn:
        before = conn.execute(
            "SELECT hits FROM semlayer.dynamic_few_shot_cache WHERE question = %s", (question,)
        ).fetchone()[0]
    result = retriever.retrieve_sync(question)
    hits = [f for f in result.few_shots if f.cache_hit]
    assert hits and hits[0].question == question and hits[0].cube_query["measures"] == ["orders.refund_rate"]
    with connection(fe_url) as conn:
        after = conn.execute(
            "SELECT hits FROM semlayer.dynamic_few_shot_cache WHERE question = %s", (question,)
        ).fetchone()[0]
    assert after == before + 1


def test_scope_restricts_to_a_namespace(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("GMV by region", scope="no-such-namespace")
    assert result.assets == [] and result.term_bindings == []


def test_empty_question_is_a_typed_error(retriever: Retriever) -> None:
    with pytest.raises(RetrievalError):
        retriever.retrieve_sync("   ")
    with pytest.raises(RetrievalError):
        retriever.retrieve_sync("GMV", complexity="galactic")


def test_business_rules_of_bound_assets_join_the_context(retriever: Retriever) -> None:
    result = retriever.retrieve_sync("GMV by channel")
    rules = [r for r in result.assets if r.asset.asset_type == "business_rule"]
    assert "business_rule:gmv_completed_only" in [r.asset.asset_id for r in rules]
    assert "GMV only counts completed orders" in result.context.text


def test_wrong_embedding_shape_is_a_typed_error(retriever: Retriever) -> None:
    import numpy as np

    with pytest.raises(RetrievalError):
        retriever.retrieve_sync("GMV", embedding=np.zeros(3))


async def test_concurrent_async_retrievals_share_one_pool(fe_url: str) -> None:
    import asyncio

    from cubesage_core.embeddings import get_embedder

    r = Retriever(fe_url, embedder=get_embedder("use"))
    questions = ["GMV by region", "退款率按渠道", "new customers per month", "支付宝支付金额", "AOV of VIP customers"]
    try:
        results = await asyncio.gather(*(r.retrieve(q) for q in questions))
    finally:
        await r.aclose()
    assert [res.question for res in results] == questions
    assert all(res.term_bindings for res in results)

"""The four rule stages and the pluggable model reranker, on hand-made candidates."""

import pytest

from fourengine.bindings import build_bindings
from fourengine.models import Asset, JoinEdge, JoinPlan, RankedAsset, TermBinding, TermHit, VectorHit
from fourengine.rerank import ModelReranker, RerankContext, RuleReranker
from fourengine.rerank.binding_boost import BindingBoost
from fourengine.rerank.column_pruning import ColumnPruning
from fourengine.rerank.join_simplification import JoinSimplification
from fourengine.settings import RetrievalSettings

TABLES = {f"table:{n}": Asset(f"table:{n}", "table", n, n.title()) for n in ("orders", "regions", "products")}


def _ctx(
    candidates: list[RankedAsset], bindings: list[TermBinding] | None = None, plan: JoinPlan | None = None
) -> RerankContext:
    return RerankContext(
        "q",
        [],
        {r.asset.asset_id: r for r in candidates},
        bindings or [],
        plan or JoinPlan(),
        RetrievalSettings(),
        dict(TABLES),
    )


def _ranked(asset_id: str, kind: str, score: float, parent: str | None = None, **meta: object) -> RankedAsset:
    r = RankedAsset(Asset(asset_id, kind, asset_id.split(":")[1], parent_id=parent, meta=dict(meta)), score)
    r.features["v"] = score
    return r


def test_binding_boost_uses_the_seed_numbers() -> None:
    metric = _ranked("metric:orders.gmv", "metric", 0.4, "table:orders")
    products = _ranked("table:products", "table", 0.5)
    ctx = _ctx([metric, products], [TermBinding("gmv", "GMV", "metric", "metric:orders.gmv")])
    BindingBoost().apply(ctx)
    assert metric.score == pytest.approx(0.95) and metric.bound
    assert ctx.candidates["table:orders"].score == pytest.approx(0.25)  # added from the catalog, +0.25
    assert products.score == pytest.approx(0.40)  # unbound table -0.10


def test_rule_reranker_puts_the_bound_table_first() -> None:
    metric = _ranked("metric:orders.gmv", "metric", 0.4, "table:orders")
    products = _ranked("table:products", "table", 0.55)
    ranked = RuleReranker().rerank(_ctx([metric, products], [TermBinding("gmv", "GMV", "metric", "metric:orders.gmv")]))
    tables = [r.asset.asset_id for r in ranked if r.asset.asset_type == "table"]
    assert tables[0] == "table:orders"
    assert ranked[0].asset.asset_id == "metric:orders.gmv" and ranked[0].reasons


def test_column_pruning_keeps_structural_and_relevant_columns_of_used_tables() -> None:
    orders = _ranked("table:orders", "table", 0.9)
    keep_pk = _ranked("column:orders.order_id", "column", 0.1, "table:orders", primary_key=True)
    keep_time = _ranked("column:orders.order_ts", "column", 0.1, "table:orders", type="time")
    drop_weak = _ranked("column:orders.note", "column", 0.1, "table:orders")
    drop_far = _ranked("column:products.brand", "column", 0.6, "table:products")
    ctx = _ctx([orders, keep_pk, keep_time, drop_weak, drop_far])
    ColumnPruning().apply(ctx)
    assert set(ctx.candidates) == {"table:orders", "column:orders.order_id", "column:orders.order_ts"}


def test_column_pruning_keeps_a_confident_metric_of_an_unused_table() -> None:
    orders = _ranked("table:orders", "table", 0.9)
    threshold = RetrievalSettings().threshold
    asked = _ranked("metric:products.max_price", "metric", threshold + 0.05, "table:products")
    weak = _ranked("metric:products.min_price", "metric", threshold - 0.05, "table:products")
    column = _ranked("column:products.brand", "column", threshold + 0.05, "table:products")
    ctx = _ctx([orders, asked, weak, column])
    ColumnPruning().apply(ctx)
    assert set(ctx.candidates) == {"table:orders", "metric:products.max_price"}


def test_join_simplification_keeps_the_low_fanout_join_of_the_plan() -> None:
    low = _ranked(
        "join:items->orders", "join", 0.5, None, left_table="table:items", right_table="table:orders", fanout_risk="low"
    )
    high = _ranked(
        "join:orders->items",
        "join",
        0.6,
        None,
        left_table="table:orders",
        right_table="table:items",
        fanout_risk="high",
    )
    other = _ranked(
        "join:orders->regions",
        "join",
        0.6,
        None,
        left_table="table:orders",
        right_table="table:regions",
        fanout_risk="low",
    )
    plan = JoinPlan(
        tables=["table:items", "table:orders"],
        edges=[JoinEdge("e", "table:items", "table:orders", "x", "many_to_one", "low")],
    )
    ctx = _ctx([low, high, other], plan=plan)
    JoinSimplification().apply(ctx)
    assert set(ctx.candidates) == {"join:items->orders"}


def test_bindings_need_an_unambiguous_strong_match() -> None:
    exact = TermHit("gmv", "GMV", "gmv", "exact", 1.0, "metric", "metric:o.gmv")
    fuzzy = TermHit("rev", "revenue", "revenu", "trigram", 0.7, "metric", "metric:r.revenue")
    ambiguous = TermHit("name", "name", "name", "exact", 1.0, "column", "column:a.name", ambiguity=2)
    term_asset = Asset(
        "term:aov",
        "term",
        "aov",
        "AOV",
        meta={"mapped_asset_id": "metric:o.aov", "mapped_asset_type": "metric", "term_id": "aov"},
    )
    bindings = build_bindings([exact, fuzzy, ambiguous], [VectorHit(term_asset, 0.93)], 0.9)
    assert [(b.term_id, b.source) for b in bindings] == [("gmv", "R"), ("aov", "V")]
    assert build_bindings([], [VectorHit(term_asset, 0.8)], 0.9) == []


class _Model:
    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def score(self, question: str, texts: list[str]) -> list[float]:
        return self.scores[: len(texts)]


def test_model_reranker_blends_model_scores() -> None:
    a, b = _ranked("table:orders", "table", 0.9), _ranked("table:regions", "table", 0.8)
    ranked = ModelReranker(_Model([0.0, 1.0]), weight=0.9).rerank(_ctx([a, b]))
    assert ranked[0].asset.asset_id == "table:regions"
    with pytest.raises(ValueError):
        ModelReranker(_Model([]), weight=2.0)
    with pytest.raises(ValueError):
        ModelReranker(_Model([0.5]), weight=0.5).rerank(
            _ctx([_ranked("table:orders", "table", 0.9), _ranked("table:regions", "table", 0.8)])
        )


def test_tail_orders_graph_neighbours_before_sub_threshold_similar_tables() -> None:
    orders = _ranked("table:orders", "table", 0.9)
    ctx = _ctx([orders], plan=JoinPlan(tables=["table:orders"], neighbours={"table:orders": 0, "table:regions": 1}))
    ctx.similarity = {"table:products": 0.4}
    ranked = RuleReranker().rerank(ctx)
    assert [r.asset.asset_id for r in ranked] == ["table:orders", "table:regions", "table:products"]
    assert ranked[1].score < 0 and ranked[2].score < ranked[1].score

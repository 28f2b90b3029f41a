"""Aggregate path, fast mode: slot filling over the demo model, guardrails, corrective retry (fake backend)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from cube_models.backends.base import LoadResult
from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate import (
    AggregateContext,
    AggregateError,
    AggregateResult,
    CubeQueryDraft,
    build_cube_query,
    check,
    run_aggregate,
)
from router.understanding import understand

TODAY = date(2025, 6, 30)
MODEL = load_model(REPO_ROOT / "demo" / "model")


def metric(term: str, member: str) -> dict[str, Any]:
    return {
        "term_id": term,
        "canonical_term": term,
        "mapped_asset_type": "metric",
        "mapped_asset_id": f"metric:{member}",
    }


def value(term: str, member: str, filter_value: str) -> dict[str, Any]:
    return {
        "term_id": term,
        "canonical_term": term,
        "mapped_asset_type": "dimension",
        "mapped_asset_id": f"dimension:{member}",
        "filter_value": filter_value,
    }


GMV = metric("GMV", "order_items.gmv")
COUNT = metric("order count", "orders.count")
EAST = value("华东", "regions.region_code", "east")
NORTH = value("华北", "regions.region_code", "north")


def draft(question: str, *bindings: dict[str, Any], **extra: Any) -> CubeQueryDraft:
    context = {"bindings": list(bindings), **extra}
    return build_cube_query(understand(question, TODAY, use_llm=False), context, MODEL, use_llm=False)


def test_measure_filter_and_date_range() -> None:
    d = draft("What was GMV in East China in March 2024?", GMV, EAST)
    assert d.query == {
        "measures": ["order_items.gmv"],
        "filters": [{"member": "regions.region_code", "operator": "equals", "values": ["east"]}],
        "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": ["2024-03-01", "2024-03-31"]}],
    }
    assert d.mode == "fast" and d.notes


@pytest.mark.parametrize(
    ("question", "dimension"),
    [
        ("GMV by region this quarter", "regions.name_en"),
        ("各地区本月GMV", "regions.name_zh"),
        ("GMV by channel", "orders.channel"),
        ("GMV by category in 2024", "products.category"),
        ("按支付方式统计GMV", "payments.method"),
        ("GMV by customer segment", "customers.segment"),
    ],
)
def test_dimensions_named_in_the_question(question: str, dimension: str) -> None:
    d = draft(question, GMV)
    assert d.query["dimensions"] == [dimension]
    assert d.query["order"] == [["order_items.gmv", "desc"]]


def test_time_dimension_follows_the_measure() -> None:
    new = draft("new customers last month", metric("new customers", "customers.new_customers"))
    assert new.query["timeDimensions"][0]["dimension"] == "customers.signup_date"
    revenue = draft("revenue by channel in 2024", metric("revenue", "revenue.revenue"))
    assert revenue.query["timeDimensions"][0]["dimension"] == "revenue.ts"
    assert revenue.query["dimensions"] == ["revenue.channel"]


def test_granularity_top_n_and_order() -> None:
    trend = draft("monthly GMV trend in 2024", GMV)
    assert trend.query["timeDimensions"] == [
        {"dimension": "orders.order_ts", "granularity": "month", "dateRange": ["2024-01-01", "2024-12-31"]}
    ]
    assert trend.query["order"] == [["orders.order_ts", "asc"]]
    top = draft("top 5 products by GMV", GMV)
    assert top.query["dimensions"] == ["products.product_name"]
    assert (top.query["order"], top.query["limit"]) == ([["order_items.gmv", "desc"]], 5)
    assert top.query["filters"] == [{"member": "order_items.gmv", "operator": "set"}]  # no NULL group on top
    low = draft("哪个渠道退款率最低", metric("退款率", "orders.refund_rate"))
    assert (low.query["order"], low.query["limit"]) == ([["orders.refund_rate", "asc"]], 1)
    best_month = draft("which month had the highest GMV in 2024", GMV)
    assert best_month.query["timeDimensions"][0]["granularity"] == "month" and best_month.query["limit"] == 1


def test_comparisons_make_one_query_per_period() -> None:
    d = draft("今年GMV同比去年同期", GMV)
    assert d.comparison == "yoy" and len(d.queries) == 2
    assert [q["timeDimensions"][0]["dateRange"] for q in d.queries] == [
        ["2025-01-01", "2025-06-30"],
        ["2024-01-01", "2024-06-30"],
    ]
    assert d.labels[0] == "今年" and d.labels[1]


def test_member_comparison_groups_by_the_compared_member() -> None:
    d = draft("compare GMV of 华东 and 华北 by month", GMV, EAST, NORTH)
    assert d.query["filters"] == [{"member": "regions.region_code", "operator": "equals", "values": ["east", "north"]}]
    assert d.query["dimensions"] == ["regions.name_en"]  # the readable name of the compared member's cube
    zh = draft("华东和华北的GMV对比", GMV, EAST, NORTH)
    assert zh.query["dimensions"] == ["regions.name_zh"]
    assert d.query["timeDimensions"][0]["granularity"] == "month"


def test_two_measures_one_query() -> None:
    d = draft("GMV and order count in March 2024", GMV, COUNT)
    assert d.query["measures"] == ["order_items.gmv", "orders.count"] and len(d.queries) == 1


def test_count_of_a_bound_table_without_a_metric() -> None:
    orders = {
        "term_id": "orders",
        "canonical_term": "orders",
        "mapped_asset_type": "table",
        "mapped_asset_id": "table:orders",
    }
    cancelled = value("cancelled", "orders.status", "cancelled")
    d = draft("How many orders were cancelled last year?", orders, cancelled)
    assert d.measures == ["orders.cancelled_count"]  # the model's own "Cancelled orders" measure
    assert d.query["filters"] == [{"member": "orders.status", "operator": "equals", "values": ["cancelled"]}]


def test_count_of_a_bound_table_with_a_grain() -> None:
    orders = {
        "term_id": "orders",
        "canonical_term": "orders",
        "mapped_asset_type": "table",
        "mapped_asset_id": "table:orders",
    }
    d = draft("daily orders last 7 days", orders)
    assert d.measures == ["orders.count"] and d.query["timeDimensions"][0]["granularity"] == "day"


def test_share_of_a_filtered_value_groups_by_its_member() -> None:
    app = value("app channel", "orders.channel", "app")
    d = draft("what share of GMV came from the app channel last year", GMV, app)
    assert d.query["dimensions"] == ["orders.channel"] and "filters" not in d.query and d.post == ["share"]


def test_dimension_binding_groups_only_with_a_group_by_cue() -> None:
    category = {
        "term_id": "category",
        "canonical_term": "category",
        "mapped_asset_type": "dimension",
        "mapped_asset_id": "dimension:products.category",
    }
    assert "dimensions" not in draft("今年电子品类的GMV", GMV, category).query
    assert draft("各品类的GMV", GMV, category).query["dimensions"] == ["products.category"]


def test_chinese_ranked_noun_is_the_dimension() -> None:
    d = draft("上个月GMV最多的3个地区", GMV)
    assert (d.query["dimensions"], d.query["limit"]) == (["regions.name_zh"], 3)


def test_segment_bindings() -> None:
    online = {
        "term_id": "seg_online",
        "canonical_term": "online orders",
        "mapped_asset_type": "segment",
        "mapped_asset_id": "segment:orders.online",
    }
    d = draft("online orders GMV last month", GMV, online)
    assert d.query["segments"] == ["orders.online"]
    assert check(d.query, {"bindings": [GMV, online]}, MODEL) == []


def test_measures_dated_by_different_times_are_separate_queries() -> None:
    refunds = metric("refund amount", "refunds.total_amount")
    d = draft("GMV and refund amount in 2024", GMV, refunds)
    assert d.groups == 2 and d.measures == ["order_items.gmv", "refunds.total_amount"]
    assert [(q["measures"], q["timeDimensions"][0]["dimension"]) for q in d.queries] == [
        (["order_items.gmv"], "orders.order_ts"),
        (["refunds.total_amount"], "refunds.refund_ts"),
    ]
    assert check(d.queries[1], {"bindings": [GMV, refunds]}, MODEL, draft_measures=d.measures) == []
    yoy = draft("今年GMV和退款金额同比", GMV, refunds)
    assert len(yoy.queries) == 4 and yoy.labels[0] == yoy.labels[1] != yoy.labels[2]


def test_share_is_marked_for_post_processing() -> None:
    assert draft("share of GMV by channel last quarter", GMV).post == ["share"]


def test_context_from_a_retrieval_result_object() -> None:
    class Retrieved:  # the shape of fourengine's RetrievalResult.to_dict()
        def to_dict(self) -> dict[str, Any]:
            return {
                "term_bindings": [GMV, EAST],
                "assets": [{"id": "metric:order_items.gmv", "type": "metric", "name": "gmv", "score": 0.95}],
                "few_shots": [],
                "context": {"text": "budgeted context"},
            }

    ctx = AggregateContext.of(Retrieved())
    assert [b.mapped_asset_id for b in ctx.bindings] == ["metric:order_items.gmv", "dimension:regions.region_code"]
    assert ctx.bindings[1].filter_value == "east" and ctx.context_text == "budgeted context"
    u = understand("GMV in East China", TODAY, use_llm=False)
    assert build_cube_query(u, Retrieved(), MODEL, use_llm=False).query["filters"][0]["values"] == ["east"]
    with pytest.raises(TypeError):
        AggregateContext.of(42)


def test_measure_from_assets_or_few_shots_without_bindings() -> None:
    d = draft("how much did we sell", assets=[{"id": "metric:order_items.units_sold", "type": "metric", "score": 0.9}])
    assert d.measures == ["order_items.units_sold"]
    shots = [{"question": "订单量", "cube_query": {"measures": ["orders.count"]}}]
    assert draft("单量", few_shots=shots).measures == ["orders.count"]
    with pytest.raises(AggregateError, match="no measure"):
        draft("sparkle please")


def test_injection_stays_a_filter_value() -> None:
    evil = value("evil", "regions.region_code", "east'; DROP TABLE warehouse.fact_order; --")
    d = draft("GMV; drop table warehouse.fact_order", GMV, evil)
    assert d.query["filters"][0]["values"] == ["east'; DROP TABLE warehouse.fact_order; --"]
    assert check(d.query, {"bindings": [GMV, evil]}, MODEL) == []


def test_guardrails() -> None:
    context = {"bindings": [GMV], "assets": [{"id": "metric:orders.count", "type": "metric", "score": 0.7}]}
    assert check({"measures": ["order_items.gmv"]}, context, MODEL) == []
    codes = {p.code for p in check({"measures": ["orders.count"]}, context, MODEL)}
    assert "unused_binding" in codes  # the bound GMV is missing
    unbound = check({"measures": ["order_items.gmv", "payments.total_amount"]}, context, MODEL)
    assert [p.code for p in unbound] == ["unbound_measure"] and unbound[0].member == "payments.total_amount"
    unknown = check({"measures": ["order_items.gmv"], "dimensions": ["regions.nope"]}, context, MODEL)
    assert any("regions.nope" in p.message for p in unknown)
    assert check({"measures": "x"}, context, MODEL)[0].code == "invalid"


class FakeBackend:
    """Records queries; fails the first ``failures`` loads with ``error``."""

    name = "fake"

    def __init__(self, rows: list[list[dict[str, Any]]], failures: int = 0, error: Exception | None = None) -> None:
        self.rows, self.failures, self.error = rows, failures, error
        self.queries: list[dict[str, Any]] = []

    def load(self, query: dict[str, Any], today: date | None = None) -> LoadResult:
        self.queries.append(query)
        if self.failures:
            self.failures -= 1
            raise self.error or RuntimeError("boom")
        return LoadResult(rows=self.rows[(len(self.queries) - 1) % len(self.rows)], sql="SELECT ...", backend="fake")


def run(question: str, backend: FakeBackend, *bindings: dict[str, Any]) -> AggregateResult:
    u = understand(question, TODAY, use_llm=False)
    return run_aggregate(u, {"bindings": list(bindings)}, MODEL, backend, today=TODAY, use_llm=False)


def test_run_simple() -> None:
    backend = FakeBackend([[{"order_items.gmv": 123.5}]])
    result = run("GMV in March 2024", backend, GMV)
    assert result.rows == [{"order_items.gmv": 123.5}] and result.retries == 0 and result.problems == []
    assert result.cube_query == backend.queries[0] and result.backend == "fake" and "total_ms" in result.timings_ms


def test_run_comparison_rows_and_growth() -> None:
    backend = FakeBackend([[{"order_items.gmv": 150.0}], [{"order_items.gmv": 100.0}]])
    result = run("今年GMV同比去年同期", backend, GMV)
    assert [r["period"] for r in result.rows] == result.labels and len(result.cube_queries) == 2
    change = result.derived["changes"][0]
    assert (change["current"], change["previous"], change["change_pct"]) == (150.0, 100.0, 0.5)


def test_compared_periods_change_from_the_earlier_to_the_later_in_any_order() -> None:
    backend = FakeBackend([[{"orders.count": 6943}], [{"orders.count": 7921}]])
    result = run("Compare orders in Q1 and Q2 2025", backend, COUNT)
    change = result.derived["changes"][0]
    assert (change["previous"], change["current"]) == (6943, 7921) and change["change_pct"] > 0


def test_run_merges_measure_groups_on_dimension_values() -> None:
    revenue = metric("revenue", "revenue.revenue")
    gmv_rows = [
        {"regions.name_en": "East China", "order_items.gmv": 10.0},
        {"regions.name_en": "North China", "order_items.gmv": 8.0},
    ]
    revenue_rows = [
        {"regions.name_en": "North China", "revenue.revenue": 7.0},
        {"regions.name_en": "East China", "revenue.revenue": 9.0},
    ]
    backend = FakeBackend([gmv_rows, revenue_rows])
    result = run("GMV and revenue by region last quarter", backend, GMV, revenue)
    assert result.rows == [
        {"regions.name_en": "East China", "order_items.gmv": 10.0, "revenue.revenue": 9.0},
        {"regions.name_en": "North China", "order_items.gmv": 8.0, "revenue.revenue": 7.0},
    ]
    assert len(backend.queries) == 2 and result.retries == 0


def test_run_share() -> None:
    rows = [{"orders.channel": "web", "order_items.gmv": "30"}, {"orders.channel": "app", "order_items.gmv": "10"}]
    result = run("share of GMV by channel", FakeBackend([rows]), GMV)
    assert [r["order_items.gmv.share"] for r in result.rows] == [0.75, 0.25]


def test_execution_error_gets_one_corrective_retry() -> None:
    backend = FakeBackend(
        [[{"order_items.gmv": 1.0}]],
        failures=1,
        error=RuntimeError("Can't find join path to join 'payments' for payments.method"),
    )
    result = run("按支付方式统计GMV", backend, GMV)
    assert result.retries == 1 and [p.code for p in result.problems] == ["execution"]
    assert "payments.method" in str(backend.queries[0]) and "payments.method" not in str(backend.queries[1])


def test_second_failure_raises_with_problems() -> None:
    backend = FakeBackend([[{}]], failures=5, error=RuntimeError("Can't find join path for payments.method"))
    with pytest.raises(AggregateError) as info:
        run("按支付方式统计GMV", backend, GMV)
    assert len(backend.queries) == 2 and info.value.problems


def test_guardrail_problem_fixed_before_execution() -> None:
    ghost = metric("ghost", "orders.ghost_metric")  # bound to a member the model lacks
    backend = FakeBackend([[{"order_items.gmv": 1.0}]])
    result = run("GMV in 2024", backend, GMV, ghost)
    assert result.problems and result.problems[0].code == "unknown_binding"
    assert backend.queries and backend.queries[0]["measures"] == ["order_items.gmv"]


def test_compared_values_of_a_plain_dimension_group_by_that_dimension() -> None:
    web, store = value("web channel", "orders.channel", "web"), value("store channel", "orders.channel", "store")
    d = draft("compare GMV of web and store channels in 2024", GMV, web, store)
    assert d.query["dimensions"] == ["orders.channel"]
    assert d.query["filters"] == [{"member": "orders.channel", "operator": "equals", "values": ["web", "store"]}]


VIP = {
    "term_id": "vip",
    "canonical_term": "VIP customers",
    "mapped_asset_type": "segment",
    "mapped_asset_id": "segment:customers.vip",
}
METHOD = {
    "term_id": "method",
    "canonical_term": "payment method",
    "mapped_asset_type": "dimension",
    "mapped_asset_id": "dimension:payments.method",
}


def test_how_many_of_a_segment_counts_the_segments_rows() -> None:
    d = draft("how many VIP customers do we have?", VIP)
    assert d.query["measures"] == ["customers.count"] and d.query["segments"] == ["customers.vip"]
    assert not check(d.query, {"bindings": [VIP]}, MODEL)


@pytest.mark.parametrize("question", ["which payment method is used most?", "最常用的支付方式"])
def test_the_most_used_value_counts_the_rows_of_its_cube(question: str) -> None:
    matched = "支付方式" if "支付" in question else "payment method"
    d = draft(question, {**METHOD, "matched": matched})
    assert d.query["measures"] == ["payments.count"] and d.query["dimensions"] == ["payments.method"]
    assert d.query["order"] == [["payments.count", "desc"]]
    assert not check(d.query, {"bindings": [METHOD]}, MODEL)


def test_a_dimension_alone_is_no_measure() -> None:
    with pytest.raises(AggregateError, match="no measure"):
        draft("payment method", METHOD)


def table(term: str, cube: str) -> dict[str, Any]:
    return {"term_id": term, "canonical_term": term, "mapped_asset_type": "table", "mapped_asset_id": f"table:{cube}"}


def test_the_count_counts_the_table_named_after_the_count_words() -> None:
    d = draft("top 10 customers by number of orders", table("customers", "customers"), table("orders", "orders"))
    assert d.query["measures"] == ["orders.count"] and d.query["limit"] == 10


def test_the_most_of_a_segment_counts_its_rows() -> None:
    d = draft("which region has the most VIP customers?", VIP)
    assert d.query["measures"] == ["customers.count"] and d.query["segments"] == ["customers.vip"]
    assert d.query["limit"] == 1 and d.query["order"] == [["customers.count", "desc"]]


REFUND_AMOUNT = metric("refund amount", "refunds.total_amount")


def test_an_average_of_a_sum_uses_the_cubes_average_of_the_same_column() -> None:
    d = draft("average refund amount by reason", REFUND_AMOUNT)
    assert d.query["measures"] == ["refunds.avg_amount"]
    assert not check(d.query, {"bindings": [REFUND_AMOUNT]}, MODEL, draft_measures=d.measures)


def test_an_average_the_model_cannot_compute_is_refused_not_answered_with_the_total() -> None:
    with pytest.raises(AggregateError, match="no average of GMV"):
        draft("average GMV per month in 2024", GMV)
    with pytest.raises(AggregateError, match=r"orders\.count is a count_distinct"):
        draft("average items per order", ORDERS)
    mixed = draft("GMV and average discount by category", GMV, metric("average discount", "order_items.avg_discount"))
    assert set(mixed.query["measures"]) == {"order_items.gmv", "order_items.avg_discount"}  # already an average


def matched(binding: dict[str, Any], words: str) -> dict[str, Any]:
    return {**binding, "matched": words}


CUSTOMERS, ORDERS = table("customers", "customers"), table("orders", "orders")


@pytest.mark.parametrize(
    ("question", "bindings", "op"),
    [
        ("customers with more than 15 orders", [CUSTOMERS, ORDERS], "gt"),
        ("超过15笔订单的客户", [matched(CUSTOMERS, "客户"), matched(ORDERS, "订单")], "gt"),
        ("下单至少15笔的客户", [matched(ORDERS, "下单"), matched(CUSTOMERS, "客户")], "gte"),
    ],
)
def test_a_bound_on_a_count_keeps_the_groups_that_pass_it(
    question: str, bindings: list[dict[str, Any]], op: str
) -> None:
    d = draft(question, *bindings)
    assert d.query["measures"] == ["orders.count"]
    assert d.query["dimensions"] == ["customers.customer_name"]
    assert {"member": "orders.count", "operator": op, "values": ["15"]} in d.query["filters"]
    assert "limit" not in d.query  # a bound, not a ranking


def test_which_rows_a_measure_ranks_groups_by_their_name() -> None:
    spend = metric("spent", "order_items.gmv")
    d = draft("which customers spent the most last year?", spend, CUSTOMERS)
    assert d.query["dimensions"] == ["customers.customer_name"]
    assert d.query["limit"] == 10 and d.query["order"] == [["order_items.gmv", "desc"]]  # the top ten, not all


PRODUCTS, REFUNDS = table("product", "products"), table("refunds", "refunds")


@pytest.mark.parametrize(
    ("question", "bindings"),
    [
        ("哪些商品的退款最多", [matched(PRODUCTS, "商品"), matched(REFUNDS, "退款")]),
        ("退款最多的3个商品", [matched(REFUNDS, "退款"), matched(PRODUCTS, "商品")]),
        ("which product has the most refunds", [PRODUCTS, REFUNDS]),
    ],
)
def test_the_most_of_a_second_table_counts_it_per_row_of_the_first(
    question: str, bindings: list[dict[str, Any]]
) -> None:
    d = draft(question, *bindings)
    assert d.query["measures"] == ["refunds.count"] and d.query["dimensions"] == ["products.product_name"]


@pytest.mark.parametrize("question", ["which products have never been refunded?", "从未退款的商品有多少"])
def test_questions_about_what_did_not_happen_are_refused(question: str) -> None:
    with pytest.raises(AggregateError, match="did not happen"):
        draft(question, table("products", "products"))


def test_a_member_that_picks_the_rows_is_never_dropped_to_make_a_query_run() -> None:
    """ "before 1900" with a bad period, or a filter on a member the model lacks: dropping it would answer for
    every row (all-time home runs labelled 'before 1900'), so the fix gives up and the reply refuses."""
    from router.aggregate.correct import fix
    from router.aggregate.types import Problem

    model = load_model(REPO_ROOT / "demo" / "model")
    dated = {
        "measures": ["orders.count"],
        "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": ["1900-01-01", "1899-12-31"]}],
    }
    assert fix(dated, [Problem("bad_date_range", "starts after it ends", "orders.order_ts")], model, []) is None
    filtered = {
        "measures": ["orders.count"],
        "filters": [{"member": "orders.nope", "operator": "equals", "values": ["x"]}],
    }
    assert fix(filtered, [Problem("unknown_member", "no such member", "orders.nope")], model, []) is None
    grouped = {"measures": ["orders.count"], "dimensions": ["orders.nope"]}
    assert fix(grouped, [Problem("unknown_member", "no such member", "orders.nope")], model, []) == {
        "measures": ["orders.count"]
    }  # a group-by the model lacks is still dropped

"""Intent classification: fast rules over EN/ZH cues and warehouse signals; DSPy Literal classifier."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import pytest

from router.intent import IntentSignals, RowHit, classify_intent
from router.understanding import understand
from tests.llm_stub import dspy_reply
from tests.unit.router._llm_mode import llm_mode

TODAY = date(2025, 6, 30)
GMV = ["metric:order_items.gmv"]
COUNT = ["metric:orders.count"]
RATE = ["metric:orders.refund_rate"]

CASES = [
    ("What was GMV in East China in March 2024?", {"metric_bindings": GMV, "value_bindings": ["east"]}, "aggregate"),
    ("华东地区本月GMV", {"metric_bindings": GMV}, "aggregate"),
    ("GMV by region this quarter", {"metric_bindings": GMV}, "aggregate"),
    ("top 5 products by GMV", {"metric_bindings": GMV}, "aggregate"),
    ("Which region had the highest refund rate last quarter?", {"metric_bindings": RATE}, "aggregate"),
    ("各渠道订单量", {"metric_bindings": COUNT}, "aggregate"),
    ("2024年每月订单量趋势", {"metric_bindings": COUNT, "bound_words": ["订单量"]}, "aggregate"),
    (
        "How many orders did 王芳 place in 2024?",
        {"metric_bindings": COUNT, "row_hits": [RowHit("王芳", "customer")]},
        "aggregate",
    ),
    (
        "list the refunded orders of customer Li Wei last week",
        {"row_hits": [RowHit("Li Wei", "customer")], "table_words": ["refunded", "order", "customer"]},
        "detail",
    ),
    ("王芳的订单", {"row_hits": [RowHit("王芳", "customer")], "table_words": ["订单"]}, "detail"),
    (
        "refund reasons for Aurora X1 headphones",
        {"row_hits": [RowHit("Aurora X1 headphones", "product")], "dimension_bindings": ["dimension:refunds.reason"]},
        "detail",
    ),
    ("列出上个月华东地区的退款订单", {"value_bindings": ["east"], "table_words": ["退款", "订单"]}, "detail"),
    ("show order 12345", {"table_words": ["order"]}, "detail"),
    (
        "show me the invoices of Leonie Köhler",
        {"table_words": ["invoice"], "row_hits": [RowHit("Leonie Köhler", "customer")]},
        "detail",
    ),
    ("invoice 98", {"table_words": ["invoice"]}, "detail"),
    ("How many employees do we have?", {"table_words": ["employee"]}, "aggregate"),
    ("how many songs are longer than 5 minutes", {"table_words": ["song"]}, "aggregate"),
    ("which products drove the drop in GMV in 华东, and show their refund reasons", {"metric_bindings": GMV}, "mixed"),
    ("top products by GMV and their refund reasons", {"metric_bindings": GMV}, "mixed"),
    ("华东GMV最高的产品以及退款原因明细", {"metric_bindings": GMV}, "mixed"),
    ("GMV前5的商品和退款原因", {"metric_bindings": GMV}, "mixed"),
    ("How many invoices came in above $15, and which ones were they?", {"table_words": ["invoice"]}, "mixed"),
    (
        "What's the total order value for customer 10, and which orders make it up?",
        {"metric_bindings": ["metric:orders.total"]},
        "mixed",
    ),
    ("阿根廷有多少个余额为负的客户？把名单也列一下", {"table_words": ["客户"], "value_bindings": ["ar"]}, "mixed"),
    ("本季度总销售额是多少？顺便把这些发票列出来", {"metric_bindings": GMV}, "mixed"),
    ("What was GMV last month? And the refund rate?", {"metric_bindings": [*GMV, *RATE]}, "aggregate"),
    ("订单量和退款率 按渠道 2024年", {"metric_bindings": [*COUNT, *RATE]}, "aggregate"),
    ("what's the weather in Shanghai tomorrow", {}, "unsupported"),
    (
        "what's the weather in Shanghai tomorrow",
        {"value_bindings": ["上海"], "bound_words": ["shanghai"]},
        "unsupported",
    ),  # a city value binds, the weather does not
    ("who won the world cup", {}, "unsupported"),
    ("AAPL stock price today", {}, "unsupported"),
    ("明天北京天气怎么样", {}, "unsupported"),
    ("tell me a joke", {}, "unsupported"),
    ("what is the meaning of life", {}, "unsupported"),
    ("how are we doing?", {}, "clarify"),
    ("show me the data", {}, "clarify"),
    ("销售怎么样", {}, "unsupported"),  # nothing in this model is called 销售
    ("销售怎么样", {"metric_bindings": ["metric:revenue.revenue"]}, "clarify"),  # a metric but no period
]


@pytest.mark.parametrize(("question", "signals", "expected"), CASES)
def test_fast_intent(question: str, signals: dict, expected: str) -> None:
    decision = classify_intent(understand(question, TODAY), IntentSignals(**signals), use_llm=False)
    assert decision.intent == expected, decision.reasons
    assert decision.mode == "fast" and decision.reasons and 0.0 < decision.confidence <= 1.0


def test_vague_question_with_metric_and_period_is_answered() -> None:
    u = understand("本月销售额怎么样", TODAY)
    decision = classify_intent(u, IntentSignals(metric_bindings=["metric:revenue.revenue"]), use_llm=False)
    assert decision.intent == "aggregate"


def test_signals_raise_confidence() -> None:
    u = understand("王芳的订单", TODAY)
    weak = classify_intent(u, IntentSignals(table_words=["订单"], bound_words=["王芳"]), use_llm=False)
    strong = classify_intent(
        u, IntentSignals(table_words=["订单"], row_hits=[RowHit("王芳", "customer")]), use_llm=False
    )
    assert weak.intent == strong.intent == "detail" and strong.confidence > weak.confidence
    assert any("entity row" in r for r in strong.reasons)


def test_row_hits_accept_dicts_and_low_scores_are_ignored() -> None:
    u = understand("王芳的订单", TODAY)
    hit = IntentSignals(row_hits=[{"label": "王芳", "type": "customer"}], table_words=["订单"])
    assert classify_intent(u, hit).intent == "detail"
    weak = IntentSignals(row_hits=[RowHit("王芳", "customer", score=0.2)], table_words=["订单"])
    assert not any("entity row" in r for r in classify_intent(u, weak, use_llm=False).reasons)


def test_llm_mode_with_few_shot_demos(monkeypatch: pytest.MonkeyPatch) -> None:
    shots = [
        {"question": "GMV by region this quarter", "cube_query": {"measures": ["order_items.gmv"]}},
        {"question": "orders of 王芳", "sql": "SELECT 1"},
    ]
    reply = dspy_reply(intent="detail", confidence=0.8, reason="names one customer's rows")
    with llm_mode(monkeypatch, [reply]) as stub:
        decision = classify_intent(understand("王芳的订单", TODAY, use_llm=False), IntentSignals(few_shots=shots))
    assert (decision.intent, decision.mode, decision.confidence) == ("detail", "llm", 0.8)
    prompt = str(stub.requests[0]["messages"])
    assert "GMV by region this quarter" in prompt and "aggregate" in prompt and "orders of 王芳" in prompt


def test_llm_mode_invalid_label_falls_back_to_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = dspy_reply(intent="banana", confidence=0.9, reason="?")
    with llm_mode(monkeypatch, [reply]):
        u = understand("GMV by region this quarter", TODAY, use_llm=False)
        decision = classify_intent(u, IntentSignals(metric_bindings=GMV))
    assert decision.mode == "fast" and decision.intent == "aggregate" and decision.fallback_reason


def test_table_hits_are_not_evidence_and_weather_beats_a_city_row() -> None:
    tables = ["table:orders", "table:refunds", "table:customers"]
    vague = classify_intent(understand("这个呢", TODAY), IntentSignals(table_hits=tables), use_llm=False)
    assert vague.intent == "clarify"
    weather = IntentSignals(table_hits=tables, row_hits=[RowHit("上海 Shanghai", "city")])
    u = understand("what's the weather in Shanghai tomorrow", TODAY)
    assert classify_intent(u, weather, use_llm=False).intent == "unsupported"


@pytest.mark.parametrize("question", ["Orders by status in 2024", "customers per region", "refunds by reason"])
def test_entity_rows_grouped_by_a_dimension_are_counts(question: str) -> None:
    signals = IntentSignals(table_words=[question.split()[0].lower()])
    decision = classify_intent(understand(question, TODAY), signals, use_llm=False)
    assert decision.intent == "aggregate", decision.reasons
    if "per" not in question:  # "per" is an aggregation word of its own
        assert any("counts per group" in r for r in decision.reasons)


def test_listing_entity_rows_by_a_dimension_stays_detail() -> None:
    decision = classify_intent(
        understand("list orders by status", TODAY), IntentSignals(table_words=["order"]), use_llm=False
    )
    assert decision.intent == "detail"


def test_the_llm_demos_are_the_few_shots_the_budget_kept() -> None:
    """The intent prompt's demos come from the budgeted context (its few-shot cap follows complexity)."""
    from fourengine.budget import build_context
    from fourengine.models import FewShot, JoinPlan
    from fourengine.settings import RetrievalSettings
    from router.signals import intent_signals

    shots = [FewShot(i, f"approved question {i}", {"measures": ["c.m"]}, None, 0.9 - i / 100, False) for i in range(5)]
    main = SimpleNamespace(
        term_bindings=[],
        few_shots=shots,  # what retrieval found, what its budget rendered
        context=build_context([], [], shots, JoinPlan(), RetrievalSettings(token_budget=20_000), "simple"),
    )

    signals = intent_signals(understand("how many orders", TODAY), {"result": main}, [], [])
    assert [s["question"] for s in signals.few_shots] == ["approved question 0", "approved question 1"]


@pytest.mark.parametrize(
    ("question", "clause"),
    [
        ("How much did we sell this year, and what invoices made it up?", "and what invoices made it up?"),
        ("Which nation had the most orders, and which orders were they?", "and which orders were they?"),
        ("total refunded for damaged goods in Q1, and the refunds behind that number", ", and the refunds behind"),
    ],
)
def test_a_clause_asking_what_or_which_rows_follows_the_aggregate(question: str, clause: str) -> None:
    from router.intent import rows_clause

    found = rows_clause(question, [])
    assert found is not None and found[1].strip(", ").startswith(clause.strip(", "))
    assert rows_clause("How much did we sell this year, and what was the average?", []) is None
    assert rows_clause("revenue in Q1, and the average order value", ["order"]) is None


def test_a_table_named_only_as_what_is_counted_after_a_question_mark_is_no_rows_clause() -> None:
    from router.intent import rows_clause

    assert rows_clause("what % of payments went through card vs cash? by number of payments pls", ["payments"]) is None
    assert rows_clause("how many payments in May? list the payments", ["payments"]) is not None


def test_a_clause_ranking_rows_of_a_table_asks_for_those_rows() -> None:
    from router.intent import ranked_tables, rows_clause

    question = "Which clerk booked the highest order value in Q2, and what were that clerk's 10 largest orders?"
    assert ranked_tables(question, ["order"]) == ["order"]
    found = rows_clause(question, ["order"])
    assert found is not None and found[1].startswith("and what were")
    assert rows_clause(question, []) is None  # no table named: "10 largest" may be a top 10 of the groups
    assert ranked_tables("the 10 largest customers by revenue", ["order"]) == []

"""Query understanding: language, normalisation, errors, terms, comparisons, ranking, group-by, LLM mode."""

from __future__ import annotations

from datetime import date

import pytest

from router.understanding import QuestionError, understand
from router.understanding.language import detect_language, normalize
from tests.llm_stub import dspy_reply
from tests.unit.router._llm_mode import llm_mode

TODAY = date(2025, 6, 30)


def test_language_and_normalisation() -> None:
    assert detect_language("华东地区本月GMV") == "zh"
    assert detect_language("GMV by region") == "en"
    assert detect_language("GMV of 华东 and 华北 by month in East China") == "en"
    assert normalize("  ＧＭＶ，  本月？ ") == "GMV, 本月?"


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("?", "too_short"),
        ("a", "too_short"),
        ("x" * 1001, "too_long"),
    ],
)
def test_bad_questions_raise_typed_errors(question: str, code: str) -> None:
    with pytest.raises(QuestionError) as info:
        understand(question, TODAY)
    assert info.value.code == code and info.value.message


def test_non_text_question() -> None:
    with pytest.raises(QuestionError, match="text"):
        understand(None, TODAY)  # type: ignore[arg-type]


def test_limit_is_configurable() -> None:
    with pytest.raises(QuestionError, match="limit is 20"):
        understand("What was GMV in East China in March 2024?", TODAY, max_chars=20)


def test_search_terms_exclude_time_words_and_keep_phrases() -> None:
    u = understand("refund rate and average order value by channel last month", TODAY)
    assert {"refund rate", "average order value", "channel"} <= set(u.search_terms)
    assert not {"last", "month", "last month"} & {t.lower() for t in u.search_terms}
    zh = understand("华东地区本月成交总额是多少", TODAY)
    assert "成交总额" in zh.search_terms and "华东地区" in zh.search_terms
    assert "本月" not in zh.search_terms
    names = understand("refunds for product Aurora X1 headphones", TODAY)
    assert "Aurora X1 headphones" in names.search_terms


def test_injection_text_is_just_text() -> None:
    u = understand("GMV; drop table warehouse.fact_order", TODAY)
    assert u.normalized == "GMV; drop table warehouse.fact_order" and "GMV" in u.search_terms


@pytest.mark.parametrize(
    ("question", "kind", "ranges"),
    [
        ("今年GMV同比", "yoy", [("2025-01-01", "2025-06-30"), ("2024-01-01", "2024-06-30")]),
        ("本月GMV和去年同期相比", "yoy", [("2025-06-01", "2025-06-30"), ("2024-06-01", "2024-06-30")]),
        ("GMV year over year for Q1 2025", "yoy", [("2025-01-01", "2025-03-31"), ("2024-01-01", "2024-03-31")]),
        ("上个月GMV环比", "pop", [("2025-05-01", "2025-05-31"), ("2025-04-01", "2025-04-30")]),
        ("Q1 2025 GMV quarter over quarter", "pop", [("2025-01-01", "2025-03-31"), ("2024-10-01", "2024-12-31")]),
        ("GMV 2024 vs 2023", "versus", [("2024-01-01", "2024-12-31"), ("2023-01-01", "2023-12-31")]),
        ("GMV growth vs last year", "yoy", [("2025-01-01", "2025-06-30"), ("2024-01-01", "2024-06-30")]),
        ("今年GMV比去年增长了多少", "yoy", [("2025-01-01", "2025-12-31"), ("2024-01-01", "2024-12-31")]),
        (
            "revenue last quarter vs the quarter before",
            "pop",
            [("2025-01-01", "2025-03-31"), ("2024-10-01", "2024-12-31")],
        ),
        ("compare GMV of 华东 and 华北 by month", "members", []),
    ],
)
def test_comparisons(question: str, kind: str, ranges: list[tuple[str, str]]) -> None:
    comparison = understand(question, TODAY).comparison
    assert comparison is not None and comparison.kind == kind
    assert [(r.start.isoformat(), r.end.isoformat()) for r in comparison.ranges] == ranges


def test_no_comparison() -> None:
    assert understand("GMV by region this quarter", TODAY).comparison is None
    assert understand("GMV the year before last", TODAY).comparison is None


@pytest.mark.parametrize(
    ("question", "direction", "limit"),
    [
        ("top 5 products by GMV", "desc", 5),
        ("GMV前10的产品", "desc", 10),
        ("销量前三名的品类", "desc", 3),
        ("bottom 3 regions by GMV", "asc", 3),
        ("Which region has the highest GMV?", "desc", 1),
        ("哪个渠道退款率最低", "asc", 1),
        ("上个月订单量最多的3个地区", "desc", 3),
        ("退款率最低的2个渠道", "asc", 2),
        ("regions with the lowest AOV", "asc", None),
        ("top products by GMV", "desc", 10),
        ("best selling 5 products by GMV in 2024", "desc", 5),
        ("the 3 worst performing regions by refund rate", "asc", 3),
    ],
)
def test_ranking(question: str, direction: str, limit: int | None) -> None:
    ranking = understand(question, TODAY).ranking
    assert ranking is not None and (ranking.direction, ranking.limit) == (direction, limit)


def test_rolling_days_are_not_top_n() -> None:
    assert understand("前7天的订单量", TODAY).ranking is None


@pytest.mark.parametrize(
    ("question", "grain"),
    [
        ("GMV by month in 2024", "month"),
        ("2024年按月的订单量", "month"),
        ("每周订单量", "week"),
        ("daily GMV", "day"),
        ("GMV trend in 2024", "month"),
        ("最近30天GMV趋势", "day"),
        ("quarterly revenue", "quarter"),
        ("which month had the highest GMV in 2024", "month"),
        ("GMV by region", None),
    ],
)
def test_granularity(question: str, grain: str | None) -> None:
    assert understand(question, TODAY).granularity == grain


@pytest.mark.parametrize(
    ("question", "concepts"),
    [
        ("GMV by region this quarter", ["region"]),
        ("top 5 products by GMV", ["product", "gmv"]),
        ("Which region had the highest refund rate?", ["region"]),
        ("按地区统计GMV", ["地区"]),
        ("各渠道订单量", ["渠道"]),
        ("按支付方式统计支付金额", ["支付方式"]),
        ("2024年GMV前10的商品", ["商品"]),
        ("今年GMV最高的3个客户和他们的订单", ["客户"]),
        ("best selling 5 products by GMV", ["product", "gmv"]),
        ("refund rate by channel and by product category", ["channel", "product category"]),
    ],
)
def test_dimension_mentions(question: str, concepts: list[str]) -> None:
    assert [d.concept for d in understand(question, TODAY).dimensions] == concepts


def test_llm_mode_terms_then_fast_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    with llm_mode(monkeypatch, [dspy_reply(search_terms=["gross merchandise value", "East China"])]) as stub:
        u = understand("What was GMV in East China in March 2024?", TODAY)
    assert u.mode == "llm" and u.search_terms[:2] == ["gross merchandise value", "East China"]
    assert "GMV" in u.search_terms and len(stub.requests) == 1
    assert u.time_range is not None and u.time_range.start == date(2024, 3, 1)


def test_llm_mode_bad_reply_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    with llm_mode(monkeypatch, ["no fields here"]):
        u = understand("GMV by region", TODAY)
    assert u.mode == "fast" and u.fallback_reason and "GMV" in u.search_terms


def test_fast_mode_makes_no_llm_call(monkeypatch: pytest.MonkeyPatch) -> None:
    with llm_mode(monkeypatch, [dspy_reply(search_terms=["x"])]) as stub:
        u = understand("GMV by region", TODAY, use_llm=False)
    assert u.mode == "fast" and stub.requests == []


def test_one_period_named_twice_is_no_comparison() -> None:
    u = understand("who bought the most this year, and what did they buy this year?", date(2024, 6, 30))
    assert u.comparison is None and u.time_ranges


def test_chat_shorthand_is_written_out() -> None:
    assert normalize("flights w/ route, w/o refunds") == "flights with route, without refunds"
    assert normalize("and/or w/x 1/2") == "and/or w/x 1/2"
    assert normalize("can u list last yr's top brands this qtr") == "can you list last year's top brands this quarter"
    assert normalize("U2 albums by YR, u-turns") == "U2 albums by YR, u-turns"  # capitals and compounds stay


def test_a_hash_after_a_noun_in_a_list_is_its_number_and_a_hash_inside_a_code_stays() -> None:
    assert normalize("date, flight #, delay") == "date, flight number, delay"
    assert normalize("Supplier#000000010 parts") == "Supplier#000000010 parts"


def test_a_percent_sign_after_a_word_is_its_rate_and_what_percent_of_stays() -> None:
    assert normalize("on-time % by airline") == "on-time rate by airline"
    assert normalize("what % of payments") == "what % of payments"

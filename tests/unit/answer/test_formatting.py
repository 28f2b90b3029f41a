"""Answer formatting: percents of percent measures, Chinese value/measure names, periods by granularity."""

from __future__ import annotations

from datetime import date

import pytest

from answer.formatting import (
    filter_numbers,
    fmt_percent,
    fmt_period,
    label,
    question_numbers,
    stray_numbers,
    table_numbers,
)
from answer.synthesizer import synthesize
from answer.vocabulary import vocabulary
from router.aggregate.types import AggregateResult
from router.intent import IntentDecision
from router.pipeline import PipelineResult
from router.tables import ResultTable
from router.understanding import understand

TODAY = date(2025, 6, 30)
RATES = ResultTable(
    ["orders.channel", "orders.refund_rate"], [["web", 0.06636451926189706], ["store", 0.06489], ["app", 0.0667747]]
)
MONTHLY = ResultTable(
    ["orders.order_ts.month", "orders.count"],
    [["2024-01-01T00:00:00.000", 2752], ["2024-02-01T00:00:00.000", 3001], ["2024-03-01T00:00:00.000", 2999]],
)


def answer(question: str, table: ResultTable, filters: list[dict] | None = None):
    agg = None
    if filters is not None:
        rows = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
        agg = AggregateResult(
            cube_query={"measures": [table.columns[-1]], "filters": filters}, rows=rows, sql="SELECT 1", backend="test"
        )
    res = PipelineResult(
        question=question,
        understanding=understand(question, TODAY),
        intent=IntentDecision("aggregate", 0.9, ["test"]),
        sub_queries=[],
        retrieval={},
        sag={},
        table=table,
        aggregate=agg,
    )
    return synthesize(res, use_llm=False)


def test_model_formats_and_glossary_names_are_loaded() -> None:
    vocab = vocabulary()
    assert vocab.member_format("orders.refund_rate") == "percent"
    assert vocab.member_format("orders.count") is None
    assert vocab.value_label("regions.region_code", "south", "zh") == "华南"
    assert vocab.value_label("regions.name_en", "East China", "zh") == "华东"
    assert vocab.value_label("orders.channel", "store", "zh") == "门店"
    assert vocab.value_label("orders.channel", "store", "en") == "store"
    assert vocab.value_label("orders.channel", "nowhere", "zh") is None


@pytest.mark.parametrize(
    ("column", "zh", "en"),
    [
        ("refunds.total_amount", "退款金额", "refund amount"),
        ("orders.count", "订单量", "order count"),
        ("refunds.count", "退款笔数", "number of refunds"),
        ("order_items.gmv", "GMV", "GMV"),
        ("orders.refund_rate", "退款率", "refund rate"),
    ],
)
def test_measure_labels_in_both_languages(column: str, zh: str, en: str) -> None:
    assert label(column, "zh") == zh and label(column, "en") == en


def test_percent_check_is_strict() -> None:
    allowed = table_numbers(RATES.columns, RATES.rows, [None, "percent"])
    assert fmt_percent(0.06636451926189706) == "6.64%"
    assert stray_numbers("web 6.64%, store 6.49%", allowed) == []
    assert stray_numbers("web 0.06636", allowed) == []  # the raw value as fmt_number writes it
    assert stray_numbers("web 6.64", allowed) == ["6.64"]  # a percent without its sign is no table number
    assert stray_numbers("web 6.6%", allowed) == ["6.6%"]  # nor a percent rounded another way
    assert stray_numbers("web 6.64%", table_numbers(RATES.columns, RATES.rows)) == ["6.64%"]  # not a percent column


@pytest.mark.parametrize(
    ("question", "expected", "absent"),
    [
        ("refund rate by channel in 2024", ["web 6.64%", "store 6.49%", "app 6.68%"], ["0.066"]),
        ("2024年各渠道的退款率", ["网页 6.64%", "门店 6.49%", "移动端 6.68%", "退款率"], ["0.066", "web", "store"]),
    ],
)
def test_percent_measures_read_as_percents(question: str, expected: list[str], absent: list[str]) -> None:
    out = answer(question, RATES)
    assert all(e in out.text for e in expected), out.text
    assert not any(a in out.text for a in absent), out.text
    assert out.table["rows"][0][1] == pytest.approx(0.06636451926189706)  # raw value kept for the comparator
    assert out.table["formats"] == [None, "percent"]
    allowed = table_numbers(out.table["columns"], out.table["rows"], out.table["formats"])
    assert stray_numbers(out.text, allowed, ("2024", "2024年")) == []
    assert out.chart["encoding"]["x"]["axis"]["format"] == ".1~%"  # horizontal bars: the measure runs along x


def test_chinese_answer_names_filter_values_and_measure_in_chinese() -> None:
    table = ResultTable(["refunds.total_amount"], [[284526.14]])
    out = answer(
        "上个季度华南地区的退款金额是多少",
        table,
        [{"member": "regions.region_code", "operator": "equals", "values": ["south"]}],
    )
    assert "华南" in out.text and "退款金额" in out.text and "284,526.14" in out.text, out.text
    assert "south" not in out.text and "total amount" not in out.text
    en = answer(
        "refund amount in South China last quarter",
        table,
        [{"member": "regions.region_code", "operator": "equals", "values": ["south"]}],
    )
    assert "South China" in en.text and en.text.startswith("Refund amount "), en.text


@pytest.mark.parametrize(
    ("grain", "lang", "expected"),
    [
        ("month", "en", "2024-01"),
        ("month", "zh", "2024年1月"),
        ("quarter", "en", "2024-Q2"),
        ("quarter", "zh", "2024年Q2"),
        ("year", "en", "2024"),
        ("year", "zh", "2024年"),
        ("day", "en", "2024-04-01"),
        (None, "en", "2024-04-01"),
    ],
)
def test_periods_by_granularity(grain: str | None, lang: str, expected: str) -> None:
    month = {"month": "2024-01-01T00:00:00.000"}.get(grain or "", "2024-04-01T00:00:00.000")
    assert fmt_period(month, grain, lang) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Monthly order count in 2024", ["(2024-01)", "(2024-03)", "in 2024-02"]),
        ("2024年每月的订单量", ["2024年1月", "2024年3月", "2024年2月（3,001）", "订单量"]),
    ],
)
def test_series_text_shows_periods_and_chart_axis_by_granularity(question: str, expected: list[str]) -> None:
    out = answer(question, MONTHLY)
    assert all(e in out.text for e in expected), out.text
    assert "T00:00" not in out.text and "2024-01-01" not in out.text
    assert out.table["rows"][0][0] == "2024-01-01T00:00:00.000"  # table keeps comparable ISO values
    x = out.chart["encoding"]["x"]
    assert x["type"] == "ordinal" and [r[x["field"]] for r in out.chart["data"]["values"]] == [
        "2024-01",
        "2024-02",
        "2024-03",
    ]
    allowed = table_numbers(out.table["columns"], out.table["rows"], out.table["formats"])
    assert stray_numbers(out.text, allowed, ("2024", "2024年")) == []


def test_llm_answer_with_the_table_percent_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from cubesage_core.settings import Settings
    from tests.llm_stub import dspy_reply, openai_stub

    replies = [
        dspy_reply(answer="The app channel had the highest refund rate in 2024, 6.68%."),
        dspy_reply(answer="The app channel had the highest refund rate in 2024, 6.7%."),
    ]
    res = PipelineResult(
        question="refund rate by channel in 2024",
        understanding=understand("refund rate by channel in 2024", TODAY),
        intent=IntentDecision("aggregate", 0.9, ["test"]),
        sub_queries=[],
        retrieval={},
        sag={},
        table=RATES,
    )
    with openai_stub(replies) as stub:
        monkeypatch.setattr(
            "cubesage_core.llm.get_settings", lambda: Settings(llm_url=stub.url, llm_model="openai/stub")
        )
        kept = synthesize(res)
        dropped = synthesize(res)
    assert kept.provenance["answer_mode"] == "llm" and "6.68%" in kept.text
    assert dropped.provenance["answer_mode"] == "fast" and "6.7%" not in dropped.text


@pytest.mark.parametrize(
    ("text", "labels", "stray"),
    [
        ("订单量从 2024年1月 的 2,752 变为 2024年3月 的 2,999", ("2024",), []),
        ("2024年第1季度，GMV 2,752", ("2024年第1季度",), []),
        ("GMV 2,752 in 2024; 7 regions", ("2024",), ["7"]),
        ("GMV 2,752 (2024-01) to 2,999 (2024-Q3)", (), []),
        ("2024年第1季度，GMV 2,752", (), ["1"]),
    ],
)
def test_stray_numbers_takes_out_dates_and_period_labels_only(text: str, labels: tuple, stray: list) -> None:
    assert stray_numbers(text, {"2,752", "2,999"}, labels) == stray


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("revenue by year in 2024", "Revenue 76,608,469.14 (2024)."),
        ("2024年每年的销售额", "2024年，销售额 76,608,469.14。"),
    ],
)
def test_one_period_series_states_the_value_not_a_change(question: str, expected: str) -> None:
    out = answer(
        question, ResultTable(["revenue.ts.year", "revenue.revenue"], [["2024-01-01T00:00:00.000", 76608469.14]])
    )
    assert out.text == expected


def test_filter_numbers_are_the_values_an_answer_filtered_by() -> None:
    queries = [
        {
            "filters": [
                {"member": "p.price", "operator": "lt", "values": ["500"]},
                {"member": "p.brand", "operator": "equals", "values": ["Vertex"]},
            ]
        },
        None,
    ]
    assert filter_numbers(queries) == {"500"}


def test_question_numbers_are_the_numbers_the_question_wrote() -> None:
    assert question_numbers("show order 7 and the 1,200 lines over 5.5") == {"7", "1,200", "5.5"}


def test_a_key_is_a_table_number_as_written_and_a_plain_number_is_not() -> None:
    allowed = table_numbers(["orders.order_id", "orders.count"], [[96647, 12345]], ["id", None])
    assert stray_numbers("Found 1 order for 96647.", allowed) == []
    assert stray_numbers("12345 orders", allowed) == ["12345"]  # a count is written 12,345

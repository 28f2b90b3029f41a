"""Synthesizer: template text in the question's language whose numbers are all numbers of the table."""

from __future__ import annotations

import re
from datetime import date

import pytest

from answer.formatting import change_numbers, cut_numbers, stray_numbers, table_numbers
from answer.synthesizer import _bound_text, synthesize
from router.detail import DetailResult
from router.intent import IntentDecision
from router.pipeline import PipelineResult
from router.tables import ResultTable
from router.understanding import understand

TODAY = date(2025, 6, 30)


def result(question: str, intent: str, table: ResultTable, **kw) -> PipelineResult:
    return PipelineResult(
        question=question,
        understanding=understand(question, TODAY),
        intent=IntentDecision(intent, 0.9, ["test"]),
        sub_queries=[],
        retrieval={},
        sag={},
        table=table,
        **kw,
    )


def assert_numbers_from_table(text: str, shown: dict, period: str = "") -> None:
    """Every number of the text (dates and the period label aside) is a table number, formatted alike
    (percent columns may also be written as percents)."""
    allowed = table_numbers(shown["columns"], shown["rows"], shown["formats"])
    stray = stray_numbers(text, allowed, (period,))
    assert not stray, f"{stray} in {text!r} are not table numbers"


CASES = [
    ("What was GMV in East China in March 2024?", ResultTable(["order_items.gmv"], [[1445445.94]])),
    (
        "2024年各地区的GMV",
        ResultTable(
            ["regions.name_zh", "order_items.gmv"], [["华东", 14252322.15], ["华北", 9876543.21], ["华南", 8765.4321]]
        ),
    ),
    (
        "Monthly order count in 2024",
        ResultTable(
            ["orders.order_ts.month", "orders.count"],
            [["2024-01-01T00:00:00.000", 2752], ["2024-02-01T00:00:00.000", 3001], ["2024-03-01T00:00:00.000", 2999]],
        ),
    ),
    ("上季度的退款率", ResultTable(["orders.refund_rate"], [[0.06503571909960911]])),
    (
        "Yearly order count",  # a yearly trend names its years ("from 87 (2021) to 127 (2024)")
        ResultTable(
            ["orders.order_ts.year", "orders.count"],
            [["2021-01-01T00:00:00.000", 87], ["2022-01-01T00:00:00.000", 155], ["2023-01-01T00:00:00.000", 127]],
        ),
    ),
]


@pytest.mark.parametrize(("question", "table"), CASES)
def test_numbers_in_text_are_table_numbers(question: str, table: ResultTable) -> None:
    res = result(question, "aggregate", table)
    out = synthesize(res, use_llm=False)
    assert out.text
    period = res.understanding.time_range.label if res.understanding.time_range else ""
    assert_numbers_from_table(out.text, out.table, period)
    assert bool(re.search(r"[\u4e00-\u9fff]", out.text)) == bool(re.search(r"[\u4e00-\u9fff]", question))


def test_chart_line_for_series_bar_for_breakdown_kpi_card_for_single_value() -> None:
    series = synthesize(result(CASES[2][0], "aggregate", CASES[2][1]), use_llm=False)
    assert series.chart["mark"]["type"] == "line"
    assert series.chart["$schema"].endswith("vega-lite/v6.json")
    bars = synthesize(result(CASES[1][0], "aggregate", CASES[1][1]), use_llm=False)
    assert bars.chart["mark"]["type"] == "bar" and len(bars.chart["data"]["values"]) == 3
    kpi = synthesize(result(CASES[0][0], "aggregate", CASES[0][1]), use_llm=False).chart
    assert kpi["usermeta"]["shape"] == "kpi"


def test_detail_text_counts_rows_and_names_entities() -> None:
    from router.detail.entities import EntityMatch

    table = ResultTable(["order_id", "status"], [[1, "refunded"], [2, "refunded"]])
    detail = DetailResult(
        plan={"kind": "rows", "target": "fact_order", "limit": 100},
        columns=table.columns,
        rows=table.rows,
        sql="SELECT 1",
        params={},
        tables=["fact_order"],
        entities=[EntityMatch("dim_customer", "customer_id", 3, "王芳", "customer", "directory")],
    )
    out = synthesize(result("王芳最近的订单", "detail", table, detail=detail), use_llm=False)
    assert "王芳" in out.text and "2" in out.text
    assert out.provenance["sql"] == ["SELECT 1"] and out.provenance["tables"] == ["fact_order"]


def test_unsupported_and_clarify_have_no_table_numbers() -> None:
    empty = ResultTable([])
    assert "warehouse" in synthesize(result("What's the weather tomorrow?", "unsupported", empty)).text
    assert "具体" in synthesize(result("数据怎么样", "clarify", empty)).text


def test_llm_text_with_foreign_number_falls_back_to_template(monkeypatch: pytest.MonkeyPatch) -> None:
    from cubesage_core.settings import Settings, get_settings
    from tests.llm_stub import dspy_reply, openai_stub

    table = CASES[0][1]
    with openai_stub([dspy_reply(answer="GMV was 999 in March 2024.")]) as stub:
        monkeypatch.setattr(
            "cubesage_core.llm.get_settings", lambda: Settings(llm_url=stub.url, llm_model="openai/stub")
        )
        out = synthesize(result(CASES[0][0], "aggregate", table))
    get_settings.cache_clear()
    assert out.provenance["answer_mode"] == "fast" and "999" not in out.text
    assert "not in the table" in out.provenance["answer_fallback_reason"]


def test_llm_text_with_table_numbers_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from cubesage_core.settings import Settings
    from tests.llm_stub import dspy_reply, openai_stub

    table = CASES[0][1]
    with openai_stub([dspy_reply(answer="East China GMV in March 2024 was 1,445,445.94.")]) as stub:
        monkeypatch.setattr(
            "cubesage_core.llm.get_settings", lambda: Settings(llm_url=stub.url, llm_model="openai/stub")
        )
        out = synthesize(result(CASES[0][0], "aggregate", table))
    assert out.provenance["answer_mode"] == "llm" and "1,445,445.94" in out.text


def test_compared_periods_name_both_values_and_the_change() -> None:
    from router.aggregate import AggregateResult
    from router.tables import table_from_rows

    rows = [{"period": "2024", "order_items.gmv": "81025800.61"}, {"period": "2023", "order_items.gmv": "26982467.69"}]
    derived = {
        "comparison": "versus",
        "periods": [{"label": "2024"}, {"label": "2023"}],
        "changes": [
            {
                "measure": "order_items.gmv",
                "current": 81025800.61,
                "previous": 26982467.69,
                "change": 54043332.92,
                "change_pct": 54043332.92 / 26982467.69,
            }
        ],
    }
    agg = AggregateResult(
        cube_query={"measures": ["order_items.gmv"]}, rows=rows, sql="", backend="test", derived=derived
    )
    table = table_from_rows(rows)
    assert table.rows[0][0] == "2024"  # a period label stays text
    out = synthesize(result("GMV growth from 2023 to 2024", "aggregate", table, aggregate=agg), use_llm=False)
    assert out.text == "GMV went from 26,982,467.69 (2023) to 81,025,800.61 (2024), +200.29%."
    assert out.provenance["changes"] == derived["changes"]  # the change is traceable to the two numbers
    allowed = table_numbers(out.table["columns"], out.table["rows"])
    assert stray_numbers(out.text, allowed, ("2024", "2023")) == ["200.29%"]  # the change is no table number,
    assert not stray_numbers(out.text, allowed | change_numbers(out.provenance["changes"]), ("2024", "2023"))


def test_shares_are_stated_next_to_their_values() -> None:
    table = ResultTable(
        ["orders.channel", "order_items.gmv", "order_items.gmv.share"], [["web", 600.0, 0.6], ["app", 400.0, 0.4]]
    )
    out = synthesize(result("GMV share by channel", "aggregate", table), use_llm=False)
    assert "web 600.00 (60.00%)" in out.text and "app 400.00 (40.00%)" in out.text  # GMV is a currency
    assert out.table["formats"][2] == "percent"
    assert_numbers_from_table(out.text, out.table)


def test_the_combined_share_of_a_limited_ranking_is_stated() -> None:
    from router.aggregate import AggregateResult

    columns = ["orders.channel", "order_items.gmv", "order_items.gmv.share"]
    table = ResultTable(columns, [["web", 30.0, 0.15], ["app", 20.0, 0.1]])
    res = result("top 2 channels by GMV and their share", "aggregate", table)
    together = {"share": {"totals": {"order_items.gmv": 200.0}, "together": {"order_items.gmv": 0.25}, "shown": 2}}
    rows = [dict(zip(columns, row, strict=True)) for row in table.rows]
    res.aggregate = AggregateResult(cube_query={}, rows=rows, sql="", backend="cube", derived=together)
    assert "Together these 2 hold 25.00% of the total GMV" in synthesize(res, use_llm=False).text


def test_how_many_groups_pass_a_bound_is_answered_with_their_number() -> None:
    from router.aggregate import AggregateResult

    query = {
        "measures": ["orders.count"],
        "dimensions": ["customers.customer_name"],
        "filters": [{"member": "orders.count", "operator": "gt", "values": ["10"]}],
    }
    rows = [
        {"customers.customer_name": "Owen Lee", "orders.count": "16"},
        {"customers.customer_name": "陈娟思", "orders.count": "15"},
        {"customers.customer_name": "潘红辉", "orders.count": "16"},
    ]
    agg = AggregateResult(cube_query=query, rows=rows, sql="", backend="test")
    table = ResultTable(
        ["customers.customer_name", "orders.count"],
        [[r["customers.customer_name"], int(r["orders.count"])] for r in rows],
    )
    out = synthesize(
        result("How many customers placed more than 10 orders?", "aggregate", table, aggregate=agg), use_llm=False
    )
    assert out.text == "3 customers have order count > 10: Owen Lee 16, 潘红辉 16, 陈娟思 15."
    zh = synthesize(result("有多少客户下单超过10笔", "aggregate", table, aggregate=agg), use_llm=False)
    assert zh.text.startswith("共 3 个客户满足 ")


def test_each_series_gets_its_own_clause() -> None:
    rows = [
        ["East China", m, e]
        for m, e in (("2024-01-01T00:00:00.000", 1261051.24), ("2024-12-01T00:00:00.000", 2333899.62))
    ]
    rows += [
        ["South China", m, s]
        for m, s in (("2024-01-01T00:00:00.000", 783144.39), ("2024-12-01T00:00:00.000", 1597241.66))
    ]
    table = ResultTable(["regions.name_en", "orders.order_ts.month", "order_items.gmv"], rows)
    out = synthesize(result("GMV by month in 2024 for East China vs South China", "aggregate", table), use_llm=False)
    clauses = out.text.split(": ", 1)[1].rstrip(".").split("; ")
    assert clauses == [
        "East China went from 1,261,051.24 (2024-01) to 2,333,899.62 (2024-12), peaking at 2,333,899.62 in 2024-12",
        "South China went from 783,144.39 (2024-01) to 1,597,241.66 (2024-12), peaking at 1,597,241.66 in 2024-12",
    ]
    assert_numbers_from_table(out.text, out.table, "2024")
    zh = synthesize(result("2024年华东和华南每月的GMV", "aggregate", table), use_llm=False)
    assert "华东从 2024年1月 的 1,261,051.24 变为 2024年12月 的 2,333,899.62" in zh.text
    assert "；华南从 2024年1月 的 783,144.39" in zh.text


def test_several_measures_over_time_are_one_clause_each() -> None:
    table = ResultTable(
        ["orders.order_ts.month", "order_items.gmv", "orders.count"],
        [["2024-01-01T00:00:00.000", 100.0, 5], ["2024-02-01T00:00:00.000", 150.0, 4]],
    )
    out = synthesize(result("GMV and order count by month in 2024", "aggregate", table), use_llm=False)
    assert out.text == (
        "GMV went from 100.00 (2024-01) to 150.00 (2024-02), peaking at 150.00 in 2024-02; "
        "order count went from 5 (2024-01) to 4 (2024-02), peaking at 5 in 2024-01."
    )


def test_compared_periods_by_group_and_by_measure_go_from_earlier_to_later() -> None:
    from router.aggregate import AggregateResult
    from router.tables import table_from_rows

    def change(measure: str, cur: float, prev: float, **dims: str) -> dict:
        return {
            **dims,
            "measure": measure,
            "current": cur,
            "previous": prev,
            "change": cur - prev,
            "change_pct": (cur - prev) / prev,
            "current_period": "2024",
            "previous_period": "2023",
        }

    periods = [
        {"label": "2024", "dateRange": ["2024-01-01", "2024-12-31"]},
        {"label": "2023", "dateRange": ["2023-01-01", "2023-12-31"]},
    ]
    rows = [
        {"period": "2024", "order_items.gmv": "81.0", "orders.count": "48880"},
        {"period": "2023", "order_items.gmv": "27.0", "orders.count": "16321"},
    ]
    agg = AggregateResult(
        cube_query={},
        rows=rows,
        sql="",
        backend="test",
        derived={
            "comparison": "versus",
            "periods": periods,
            "changes": [change("order_items.gmv", 81.0, 27.0), change("orders.count", 48880, 16321)],
        },
    )
    out = synthesize(
        result("GMV and order count 2024 vs 2023", "aggregate", table_from_rows(rows), aggregate=agg), use_llm=False
    )
    assert out.text == (
        "GMV went from 27.00 (2023) to 81.00 (2024), +200.00%; "
        "order count went from 16,321 (2023) to 48,880 (2024), +199.49%."
    )
    assert out.chart["usermeta"]["shape"] == "compare"
    assert out.chart["hconcat"][0]["encoding"]["x"]["sort"] == ["2023", "2024"]  # earlier period first
    grouped = [
        {"period": p, "regions.name_en": r, "order_items.gmv": str(v)}
        for p, r, v in (
            ("2024", "East China", 21.0),
            ("2024", "North China", 14.0),
            ("2023", "East China", 7.0),
            ("2023", "North China", 5.0),
        )
    ]
    agg = AggregateResult(
        cube_query={},
        rows=grouped,
        sql="",
        backend="test",
        derived={
            "comparison": "versus",
            "periods": periods,
            "changes": [
                change("order_items.gmv", 21.0, 7.0, **{"regions.name_en": "East China"}),
                change("order_items.gmv", 14.0, 5.0, **{"regions.name_en": "North China"}),
            ],
        },
    )
    by_region = synthesize(
        result("GMV by region 2024 vs 2023", "aggregate", table_from_rows(grouped), aggregate=agg), use_llm=False
    )
    assert by_region.text.startswith(
        "GMV by region, from 2023 to 2024: East China from 7.00 to 21.00 (+200.00%), "
        "North China from 5.00 to 14.00 (+180.00%)"
    )
    allowed = table_numbers(by_region.table["columns"], by_region.table["rows"], by_region.table["formats"])
    assert not stray_numbers(by_region.text, allowed | change_numbers(agg.derived["changes"]), ("2024", "2023"))


def test_cuts_found_by_the_pipeline_are_stated_shown_n_of_m() -> None:
    from router.aggregate import AggregateResult
    from router.cuts import Cut

    rows = [{"customers.customer_name": f"c{i}", "orders.count": "1"} for i in range(3)]
    agg = AggregateResult(
        cube_query={"measures": ["orders.count"], "dimensions": ["customers.customer_name"]},
        rows=rows,
        sql="",
        backend="test",
    )
    table = ResultTable(["customers.customer_name", "orders.count"], [[r["customers.customer_name"], 1] for r in rows])
    out = synthesize(
        result("order count by customer", "aggregate", table, aggregate=agg, cuts=[Cut("aggregate", 3, 7, 3)]),
        use_llm=False,
    )
    assert out.table["truncated"] is True and out.table["total_rows"] == 7
    assert "3 of 7 rows are shown" in out.text
    assert out.provenance["truncation"] == [
        {"part": "aggregate", "truncated": True, "shown": 3, "total": 7, "limit": 3}
    ]
    uncut = synthesize(result("order count by customer", "aggregate", table, aggregate=agg), use_llm=False)
    assert uncut.table["truncated"] is False and uncut.provenance["truncation"] == []
    assert "row limit" not in uncut.text


def test_a_mixed_answer_states_the_cut_of_its_detail_and_of_its_entities() -> None:
    from router.cuts import Cut

    table = ResultTable(["products.product_name", "order_items.gmv", "detail_rows"], [["a", 5.0, 9]])
    cuts = [Cut("detail", 5000, 5872, 5000), Cut("entities", 20, 35, 20)]
    out = synthesize(result("top products by GMV and their refunds", "mixed", table, cuts=cuts), use_llm=False)
    assert out.table["truncated"] is False  # the joined table itself is whole
    assert "5,000 of 5,872 are shown" in out.text and "first 20 of 35 rows" in out.text
    assert [c["part"] for c in out.provenance["truncation"]] == ["detail", "entities"]
    allowed = table_numbers(out.table["columns"], out.table["rows"], out.table["formats"])
    assert stray_numbers(out.text, allowed) and not stray_numbers(
        out.text, allowed | cut_numbers(out.provenance["truncation"])
    )  # the text's numbers: the table's and the counted cuts'
    zh = synthesize(
        result("GMV最高的产品及其退款", "mixed", table, cuts=[Cut("detail", 5000, None, 5000)]), use_llm=False
    )
    assert "显示 5,000 条，总数未能统计" in zh.text


def test_a_refusal_crag_found_insufficient_names_the_missing_words() -> None:
    from fourengine.models import CragResult

    class Retrieved:
        crag = CragResult("low", 0.1, 0, decision="insufficient", missing=["world", "cup"])

    res = result("Who won the World Cup?", "unsupported", ResultTable([]))
    res.retrieval = {"result": Retrieved()}
    assert synthesize(res, use_llm=False).text.endswith("Nothing in it matches “world”, “cup”.")
    res.retrieval["result"].crag.decision = "corrected"
    assert "Nothing in it matches" not in synthesize(res, use_llm=False).text


def test_a_mixed_answer_whose_rows_were_refused_says_so_and_why() -> None:
    table = ResultTable(["orders.max_total"], [[450789.68]])
    problems = [{"code": "detail_failed", "message": "the rows behind a maximum are not listed"}]
    out = synthesize(
        result("largest order in 1997, and who placed it?", "mixed", table, problems=problems), use_llm=False
    )
    assert "The rows were not listed: the rows behind a maximum are not listed" in out.text
    plain = synthesize(result("largest order in 1997, and who placed it?", "mixed", table), use_llm=False)
    assert "not listed" not in plain.text


def test_the_segments_of_the_query_are_named_in_the_answer() -> None:
    from router.aggregate import AggregateResult

    query = {"measures": ["order_items.gmv"], "segments": ["customers.vip"]}
    agg = AggregateResult(cube_query=query, rows=[{"order_items.gmv": "120.5"}], sql="", backend="test")
    table = ResultTable(["order_items.gmv"], [[120.5]])
    out = synthesize(result("GMV of vip customers", "aggregate", table, aggregate=agg), use_llm=False)
    assert "vip" in out.text.lower() and "120.5" in out.text


def test_a_listing_bound_is_written_as_the_answer_writes_numbers() -> None:
    from answer.formatting import fmt_bound

    assert (fmt_bound("3000"), fmt_bound(8000), fmt_bound("2025-01-01")) == ("3,000", "8,000", "2025-01-01")


def test_a_bound_writes_numbers_as_answers_do_and_a_year_columns_year_as_a_year() -> None:
    assert _bound_text("orders.amount", "gt", "3000", "en") == "amount > 3,000"
    assert _bound_text("planes.year_built", "lte", "1989", "en") == "year built <= 1989"


def test_groups_are_named_by_their_label_and_the_key_beside_it_stays_in_the_table() -> None:
    table = ResultTable(
        ["customers.customer_id", "customers.customer_name", "order_items.gmv"],
        [[7, "Li Wei", 300.0], [9, "Li Wei", 200.0]],
    )
    out = synthesize(result("top 2 customers by GMV", "aggregate", table), use_llm=False)
    assert "Li Wei 300.00" in out.text and "7 / Li Wei" not in out.text
    assert out.table["columns"] == table.columns  # the key is still shown


def test_a_ranking_from_the_lowest_is_stated_from_its_first_rows() -> None:
    rows = [["Ana", 1.7], ["Bo", 1.89], ["Cy", 2.21], ["Di", 2.37], ["Ed", 2.52]]
    table = ResultTable(["people.name", "pitching.era"], rows)
    out = synthesize(result("which five players had the lowest ERA?", "aggregate", table), use_llm=False)
    assert "Ana 1.7, Bo 1.89, Cy 2.21" in out.text  # the lowest, not the three highest of the five
    table = ResultTable(["people.name", "pitching.era"], [["Ed", 2.52], ["Ana", 1.7], ["Bo", 1.89]])
    out = synthesize(result("ERA by player", "aggregate", table), use_llm=False)
    assert "Ed 2.52, Bo 1.89, Ana 1.7" in out.text  # rows in no order: the highest first

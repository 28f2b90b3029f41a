"""Regression runner: suite loading and splits, the five outcomes, mixed halves, the summary."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from answer.regress import (
    Case,
    CaseResult,
    SuiteError,
    check_case,
    cube_members,
    judge,
    language_of,
    load_suite,
    summarize,
)
from answer.regress_compare import Gold, gold_query, gold_result

REPO = Path(__file__).resolve().parents[3]
AGG_SQL = "SELECT SUM(amount) FROM t"
TOP_SQL = "SELECT p.product_name, SUM(i.amount) AS gmv FROM t GROUP BY 1 ORDER BY gmv DESC LIMIT 2"
KEYS_SQL = "SELECT refund_id FROM r"
GOLD = {AGG_SQL: [[100]], TOP_SQL: [["A", 30], ["B", 20]], KEYS_SQL: [[7], [8]]}


def run_gold(sql: str) -> list[Gold]:
    return [gold_result(gold_query(sql), [list(r) for r in GOLD[sql]])]


def payload(intent: str, rows: list[list[Any]], columns: list[str] | None = None, **provenance: Any) -> dict[str, Any]:
    columns = columns or [f"c{i}" for i in range(len(rows[0]) if rows else 0)]
    return {
        "intent": intent,
        "text": "",
        "table": {"columns": columns, "rows": rows},
        "provenance": {"tables": [], "sql": [], **provenance},
    }


def case(intent: str = "aggregate", **kw: Any) -> Case:
    return Case(kw.pop("id", "c1"), kw.pop("question", "GMV?"), intent, kw.pop("split", "dev"), **kw)


def outcome(c: Case, answer: dict[str, Any] | None, error: str | None = None) -> str:
    return judge(c, answer, error, run_gold)[0]


# -- suite -----------------------------------------------------------------------------------------------


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text("today: 2025-06-30\n" + body, encoding="utf-8")
    return path


def test_shipped_suite_has_dev_and_blind_test_parts_with_mixed_gold_for_both_halves() -> None:
    suite = load_suite(REPO / "demo" / "regress" / "suite.yaml")
    assert suite.today == dt.date(2025, 6, 30) and suite.name == "demo"
    dev = suite.select("dev").cases
    assert len(dev) == 329 and len(suite.select("test").cases) == 210  # 106 first + 2 x 40 + 7 x 20 blind, 3 moved
    assert sum(c.id.startswith("d2-") for c in dev) == 40 and sum(c.id.startswith("d8-") for c in dev) == 21
    assert sum(c.id.startswith("d9-") for c in dev) == 20
    assert sum(c.id.startswith(("d10-", "d11-", "d12-", "d13-", "d14-")) for c in dev) == 100
    mixed = [c for c in suite.cases if c.intent == "mixed" and c.answer_sql]
    assert mixed and all(c.detail_sql for c in mixed)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("cases:\n  - {id: x, split: dev, question: q, expect: {intent: maybe}}\n", r"expect\.intent"),
        ("cases:\n  - {id: x, question: q, expect: {intent: aggregate}}\n", "needs split"),
        ("cases:\n  - {id: x, split: train, question: q, expect: {intent: aggregate}}\n", "needs split"),
        (
            "cases:\n  - {id: x, split: dev, question: q, expect: {intent: aggregate}}\n"
            "  - {id: x, split: dev, question: q, expect: {intent: aggregate}}\n",
            "duplicate",
        ),
        (
            "cases:\n  - {id: x, split: dev, question: q, expect: {intent: mixed, answer_sql: 'SELECT 1'}}\n",
            "both answer_sql and detail_sql",
        ),
        (
            "cases:\n  - {id: x, split: dev, question: q, expect: {intent: detail, detail_sql: 'SELECT 1'}}\n",
            "mixed case's detail half",
        ),
        (
            "cases:\n  - {id: x, split: dev, question: q, expect: {intent: clarify, answer_sql: 'SELECT 1'}}\n",
            "no answer gold",
        ),
        ("warehouse: [a]\ncases: []\n", "pack name"),
        ("cases: 3\n", "list 'cases'"),
    ],
)
def test_malformed_suite_is_a_clear_error(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        load_suite(write(tmp_path, body))


def test_splits_and_warehouse(tmp_path: Path) -> None:
    suite = load_suite(
        write(
            tmp_path,
            "warehouse: retail\ncases:\n"
            "  - {id: a, split: dev, question: q, expect: {intent: clarify}}\n"
            "  - {id: b, split: test, question: q, expect: {intent: clarify}}\n",
        )
    )
    assert suite.warehouse == "retail" and suite.name == "retail" and suite.split == "all"
    assert [c.id for c in suite.select("dev").cases] == ["a"]
    assert [c.id for c in suite.select("test").cases] == ["b"] and suite.select("test").split == "test"
    assert len(suite.select("all").cases) == 2
    with pytest.raises(SuiteError, match="unknown split"):
        suite.select("train")


# -- outcomes --------------------------------------------------------------------------------------------


def test_five_outcomes_for_an_aggregate_case() -> None:
    c = case(answer_sql=AGG_SQL)
    assert outcome(c, payload("aggregate", [[100.0]])) == "passed"
    assert outcome(c, payload("aggregate", [[99.0]])) == "wrong"
    assert outcome(c, payload("clarify", [])) == "refused"
    assert outcome(c, payload("aggregate", [], error={"type": "SqlGuardError", "message": "no"})) == "refused"
    assert outcome(c, None, "RuntimeError: boom") == "failed"
    assert outcome(c, payload("aggregate", [])) == "failed"  # no rows: not an answer, not a refusal
    assert outcome(case(), payload("aggregate", [[100.0]])) == "unchecked"


def test_wrong_intent_with_the_right_rows_fails_and_wrong_rows_are_wrong() -> None:
    c = case(answer_sql=AGG_SQL)
    assert outcome(c, payload("detail", [[100.0]])) == "failed"
    assert outcome(c, payload("detail", [[5.0]])) == "wrong"


def test_missing_member_fails_even_with_the_right_number() -> None:
    c = case(answer_sql=AGG_SQL, members=["order_items.gmv"])
    ok = payload("aggregate", [[100.0]], cube_query={"measures": ["order_items.gmv"]})
    assert outcome(c, ok) == "passed"
    assert outcome(c, payload("aggregate", [[100.0]], cube_query={"measures": ["orders.count"]})) == "failed"


def test_unchecked_never_passes_and_is_not_checked() -> None:
    c = case("detail", question="列出华东地区的VIP客户")
    result = check_case(c, payload("detail", [[1]]), None, run_gold, 5.0)
    assert result.outcome == "unchecked" and not result.passed and result.language == "zh"
    summary = summarize([result], 1.0, 0.0)
    assert summary["passed"] == 0 and summary["unchecked"] == 1 and summary["checked"] == 0
    assert summary["pass_rate"] is None


def test_detail_keys_and_tables_gold() -> None:
    keys = case("detail", answer_sql=KEYS_SQL)
    assert outcome(keys, payload("detail", [[1, 8], [2, 7]], ["order_id", "refund_id"])) == "passed"
    assert outcome(keys, payload("detail", [[1, 8]], ["order_id", "refund_id"])) == "wrong"
    tables = case("detail", tables=["fact_refund"])
    assert outcome(tables, payload("detail", [["fact_refund"]], tables=["fact_refund"])) == "passed"
    assert outcome(tables, payload("detail", [["fact_order"]], tables=["fact_order"])) == "wrong"


def test_refusal_cases() -> None:
    clarify = case("clarify")
    assert outcome(clarify, payload("clarify", [])) == "passed"
    assert judge(clarify, payload("unsupported", []), None, run_gold) == (
        "passed",
        "unsupported reply to a clarify case (both are refusals)",
    )
    assert outcome(clarify, payload("aggregate", [[42]])) == "wrong"
    assert outcome(case("unsupported"), payload("aggregate", [], error={"type": "X", "message": "m"})) == "failed"
    assert outcome(case("unsupported"), None, "boom") == "failed"


def mixed_answer(agg: list[list[Any]], detail: list[list[Any]] | None) -> dict[str, Any]:
    sections = [{"kind": "aggregate", "columns": ["product_name", "gmv"], "rows": agg}]
    if detail is not None:
        sections.append({"kind": "detail", "columns": ["refund_id", "product_name"], "rows": detail})
    joined = [[*row, 1] for row in agg]
    return payload("mixed", joined, ["product_name", "gmv", "detail_rows"], sections=sections)


def test_mixed_checks_both_halves() -> None:
    c = case("mixed", answer_sql=TOP_SQL, detail_sql=KEYS_SQL)
    good_agg, good_detail = [["A", 30], ["B", 20]], [[7, "A"], [8, "B"]]
    assert outcome(c, mixed_answer(good_agg, good_detail)) == "passed"
    assert outcome(c, mixed_answer(good_agg, [[7, "A"]])) == "wrong"  # detail half wrong
    assert outcome(c, mixed_answer([["B", 20], ["A", 30]], good_detail)) == "wrong"  # aggregate order wrong
    result = check_case(c, mixed_answer(good_agg, None), None, run_gold, 1.0)
    assert result.outcome == "failed" and "no detail rows" in result.reason


TOP1_SQL = (
    "SELECT c.name, COUNT(*) AS orders FROM o JOIN c ON c.id = o.cid GROUP BY c.name ORDER BY orders DESC LIMIT 1"
)
TIED_DETAIL_SQL = (
    "SELECT o.order_id FROM o WHERE o.cid = (SELECT cid FROM o GROUP BY cid ORDER BY COUNT(*) DESC LIMIT 1)"
)


def tied_gold(sql: str) -> list[Gold]:
    """Ann and Bo tie at 2 orders: the aggregate WITH TIES, and the detail once per tied customer and both."""
    if sql == TOP1_SQL:
        return [gold_result(gold_query(sql), [["Ann", 2], ["Bo", 2]])]
    return [Gold([[1], [2]], None), Gold([[3], [4]], None), Gold([[1], [2], [3], [4]], None)]


def test_mixed_top_one_tied_passes_with_either_choice_but_not_a_row_outside_the_tie() -> None:
    c = case("mixed", answer_sql=TOP1_SQL, detail_sql=TIED_DETAIL_SQL)

    def answer(agg: list[list[Any]], keys: list[int]) -> dict[str, Any]:
        sections = [
            {"kind": "aggregate", "columns": ["name", "orders"], "rows": agg},
            {"kind": "detail", "columns": ["order_id"], "rows": [[k] for k in keys]},
        ]
        return payload("mixed", agg, ["name", "orders"], sections=sections)

    assert judge(c, answer([["Bo", 2]], [3, 4]), None, tied_gold)[0] == "passed"
    assert judge(c, answer([["Ann", 2]], [1, 2]), None, tied_gold)[0] == "passed"
    assert judge(c, answer([["Ann", 2], ["Bo", 2]], [1, 2, 3, 4]), None, tied_gold)[0] == "passed"
    outcome_, reason = judge(c, answer([["Bo", 2]], [2, 3]), None, tied_gold)  # rows of no one choice
    assert outcome_ == "wrong" and "each of the 3 choices" in reason
    assert judge(c, answer([["Cy", 2]], [3, 4]), None, tied_gold)[0] == "wrong"  # Cy is not in the tie


# -- summary ---------------------------------------------------------------------------------------------


def result(
    outcome_: str, intent: str = "aggregate", question: str = "q", got: str | None = None, ms: float = 10.0
) -> CaseResult:
    got = got or intent
    return CaseResult("x", question, "dev", language_of(question), intent, got, got == intent, outcome_, "", ms)


def test_summary_counts_per_intent_and_language() -> None:
    results = [
        result("passed", ms=10.0),
        result("wrong", question="上个月GMV", ms=30.0),
        result("unchecked", "detail"),
        result("refused", "detail", got="clarify"),
        result("passed", "clarify", got="unsupported"),
    ]
    s = summarize(results, 1.0, 5.0, suite="demo", split="dev")
    assert (s["suite"], s["split"], s["cases"], s["checked"]) == ("demo", "dev", 5, 4)
    assert [s[o] for o in ("passed", "wrong", "refused", "failed", "unchecked")] == [2, 1, 1, 0, 1]
    assert s["pass_rate"] == 0.5 and s["intent_accuracy"] == 0.6 and s["refusal_kind_mismatch"] == 1
    assert s["by_intent"]["detail"]["checked"] == 1 and s["by_intent"]["detail"]["pass_rate"] == 0.0
    assert s["by_intent"]["aggregate"]["pass_rate"] == 0.5 and "mixed" not in s["by_intent"]
    assert s["by_language"]["zh"]["wrong"] == 1 and s["by_language"]["en"]["cases"] == 4
    assert s["latency_p50_ms"] == 10.0 and s["latency_p95_ms"] == 30.0


def test_llm_mode_cases_carry_their_llm_cost_and_the_summary_averages_it_by_intent() -> None:
    steps = [{"step": "intent", "mode": "llm"}, {"step": "answer", "mode": "fast (deadline: 8.0 s used)"}]
    answer = payload(
        "aggregate", [[100]], llm={"calls": 3, "prompt_tokens": 900, "completion_tokens": 60, "steps": steps}
    )
    llm = check_case(case(answer_sql=AGG_SQL), answer, None, run_gold, 5.0, mode="llm")
    fast = check_case(case(answer_sql=AGG_SQL), payload("aggregate", [[100]]), None, run_gold, 5.0)
    assert (llm.mode, llm.outcome, fast.mode, fast.llm) == ("llm", "passed", "fast", None)
    assert llm.llm == {"calls": 3, "prompt_tokens": 900, "completion_tokens": 60, "fallbacks": 1}
    detail = CaseResult(
        "d",
        "q",
        "dev",
        "en",
        "detail",
        "detail",
        True,
        "passed",
        "",
        1.0,
        "llm",
        {"calls": 5, "prompt_tokens": 100, "completion_tokens": 10, "fallbacks": 0},
    )
    s = summarize([llm, detail], 1.0, 0.0)["llm"]
    assert (s["questions"], s["calls_per_question"], s["fallback_steps"]) == (2, 4.0, 1)
    assert s["by_intent"]["detail"]["prompt_tokens_per_question"] == 100.0
    assert "llm" not in summarize([fast], 1.0, 0.0)


def test_language_and_members() -> None:
    assert language_of("Aurora X1 headphones的退款记录") == "zh" and language_of("GMV by region") == "en"
    q = {
        "measures": ["order_items.gmv"],
        "dimensions": ["regions.name_en"],
        "timeDimensions": [{"dimension": "orders.order_ts"}],
        "filters": [{"member": "regions.region_code"}],
    }
    assert cube_members(q) == {"order_items.gmv", "regions.name_en", "orders.order_ts", "regions.region_code"}


def test_cli_exits_2_on_a_malformed_suite_before_starting_anything(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from answer.cli import app

    path = write(tmp_path, "cases:\n  - {id: x, question: q, expect: {intent: aggregate}}\n")
    result = CliRunner().invoke(app, ["regress", str(path), "--split", "dev"])
    assert result.exit_code == 2
    bad_split = write(tmp_path, "cases: []\n")
    assert CliRunner().invoke(app, ["regress", str(bad_split), "--split", "train"]).exit_code == 2


def test_cli_refuses_an_unknown_mode_and_llm_mode_without_an_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both are exit code 2 with the reason, before any database is started."""
    from typer.testing import CliRunner

    from answer.cli import app
    from cubesage_core.settings import get_settings

    path = write(tmp_path, "cases:\n  - {id: x, question: q, split: dev, expect: {intent: clarify}}\n")
    monkeypatch.delenv("CUBESAGE_LLM_URL", raising=False)
    monkeypatch.setenv("CUBESAGE_DATA_DIR", str(tmp_path / "no-data"))  # would be created by a started database
    get_settings.cache_clear()
    try:
        bogus = CliRunner().invoke(app, ["regress", str(path), "--mode", "smart"])
        without = CliRunner().invoke(app, ["regress", str(path), "--mode", "both"])
    finally:
        get_settings.cache_clear()
    assert bogus.exit_code == 2 and "--mode must be fast, llm or both, got 'smart'" in bogus.output
    assert without.exit_code == 2 and "needs an LLM endpoint: set CUBESAGE_LLM_URL" in without.output
    assert not (tmp_path / "no-data").exists()


def test_a_measure_shown_as_a_percent_matches_a_gold_percentage() -> None:
    c = case(answer_sql=AGG_SQL)  # gold 100: a percentage the gold SQL computed as 100.0 * part / whole
    shown = payload("aggregate", [[1.0]])
    assert outcome(c, shown) == "wrong"  # a plain 1.0 is not 100
    shown["table"]["formats"] = ["percent"]  # the answer shows 1.0 as 100.00%
    assert outcome(c, shown) == "passed"

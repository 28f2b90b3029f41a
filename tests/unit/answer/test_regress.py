"""Regression runner pieces: suite loading, gold/answer comparison, member extraction, summary."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from answer.regress import CaseResult, SuiteError, compare, cube_members, load_suite, summarize

REPO = Path(__file__).resolve().parents[3]


def test_shipped_suite_loads_and_is_balanced() -> None:
    suite = load_suite(REPO / "demo" / "regress" / "suite.yaml")
    assert len(suite.cases) >= 100 and suite.today == dt.date(2025, 6, 30)
    assert len({c.id for c in suite.cases}) == len(suite.cases)


def test_bad_suite_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text("today: 2025-06-30\ncases:\n  - id: x\n    question: q\n    expect: {intent: maybe}\n")
    with pytest.raises(SuiteError, match=r"expect\.intent"):
        load_suite(bad)


def test_compare_numbers_dates_and_counts() -> None:
    gold = [[dt.date(2024, 3, 1), Decimal("1445445.94")], [dt.date(2024, 4, 1), Decimal("10")]]
    answer = [["2024-04-01T00:00:00.000", "10.0000001"], ["2024-03-01T00:00:00.000", 1445445.94]]
    assert compare(gold, answer) is None
    assert "row count" in compare(gold, answer[:1])
    assert "not in answer" in compare(gold, [["2024-03-01", 1445445.94], ["2024-04-01", 11]])


def test_gold_subset_of_columns_matches_wider_answer() -> None:
    assert compare([[8579]], [[8579, "2024-05-01 10:00:00", "Li Wei", "refunded"]]) is None
    assert compare([["王芳"]], [["Wang Fang"]]) is not None


def test_cube_members() -> None:
    q = {"measures": ["order_items.gmv"], "dimensions": ["regions.name_en"],
         "timeDimensions": [{"dimension": "orders.order_ts"}], "filters": [{"member": "regions.region_code"}]}
    assert cube_members(q) == {"order_items.gmv", "regions.name_en", "orders.order_ts", "regions.region_code"}


def test_summary() -> None:
    results = [CaseResult("a", "q", "detail", "detail", True, True, True, "ok", 10.0),
               CaseResult("b", "q", "detail", "aggregate", False, None, False, "intent", 30.0)]
    s = summarize(results, 1.0, 5.0)
    assert s["intent_accuracy"] == 0.5 and s["answer_accuracy"] == 1.0 and s["failed"] == 1
    assert s["latency_p50_ms"] == 20.0 and s["latency_p95_ms"] == 30.0

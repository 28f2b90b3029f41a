"""RAG-Fusion decomposition rules, the DSPy mode, and reciprocal-rank fusion."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pytest

from router.decompose import SubQuery, decompose, rrf_fuse
from router.understanding import understand
from tests.llm_stub import dspy_reply
from tests.unit.router._llm_mode import llm_mode

TODAY = date(2025, 6, 30)


def parts(question: str) -> list[SubQuery]:
    return decompose(understand(question, TODAY, use_llm=False), use_llm=False)


def test_member_comparison_splits_per_member() -> None:
    subs = parts("compare GMV of 华东 and 华北 by month")
    assert [s.text for s in subs] == ["GMV of 华东 by month", "GMV of 华北 by month"]
    assert [s.focus for s in subs] == ["华东", "华北"] and all(s.kind == "aggregate" for s in subs)
    assert "华东" in subs[0].search_terms and "华北" not in subs[0].search_terms


def test_chinese_member_comparison() -> None:
    assert [s.text for s in parts("华东和华北的GMV对比")] == ["华东的GMV", "华北的GMV"]


def test_named_entities_compared() -> None:
    subs = parts("Compare Emma Johnson and Oliver Smith order counts")
    assert [s.focus for s in subs] == ["Emma Johnson", "Oliver Smith"]


def test_aggregate_and_detail_clauses() -> None:
    subs = parts("top products by GMV and their refund reasons")
    assert [(s.kind, s.text, s.depends_on) for s in subs] == [
        ("aggregate", "top products by GMV", None),
        ("detail", "refund reasons", 0),
    ]
    subs = parts("which products drove the drop in GMV in 华东, and show their refund reasons")
    assert [s.kind for s in subs] == ["aggregate", "detail"] and "their" not in subs[1].text
    zh = parts("华东GMV最高的产品以及退款原因")
    assert [(s.kind, s.text) for s in zh] == [("aggregate", "华东GMV最高的产品"), ("detail", "退款原因")]


@pytest.mark.parametrize(
    "question",
    [
        "GMV and order count in March 2024",
        "GMV 2024 vs 2023",
        "What was GMV in East China in March 2024?",
        "王芳的订单",
    ],
)
def test_not_compound_is_one_sub_query(question: str) -> None:
    subs = parts(question)
    assert len(subs) == 1 and subs[0].source == "whole" and subs[0].text == understand(question, TODAY).normalized


def test_llm_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = dspy_reply(
        sub_queries=["GMV of East China by month", "GMV of North China by month"], kinds=["aggregate", "aggregate"]
    )
    with llm_mode(monkeypatch, [reply]):
        subs = decompose(understand("compare GMV of 华东 and 华北 by month", TODAY, use_llm=False))
    assert [s.text for s in subs] == ["GMV of East China by month", "GMV of North China by month"]
    assert all(s.source == "llm" for s in subs) and subs[0].search_terms


def test_llm_mode_failure_uses_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    with llm_mode(monkeypatch, [dspy_reply(sub_queries=[], kinds=[])]):
        subs = decompose(understand("compare GMV of 华东 and 华北 by month", TODAY, use_llm=False))
    assert [s.source for s in subs] == ["rule", "rule"]


def test_rrf_scores_and_order() -> None:
    fused = rrf_fuse([["a", "b", "c"], ["b", "c", "d"]], k=60)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert [i for i, _ in fused] == ["b", "c", "a", "d"]


def test_rrf_item_shapes_duplicates_and_ties() -> None:
    @dataclass
    class Hit:
        asset_id: str

    fused = rrf_fuse([[{"id": "x"}, {"id": "x"}, {"id": "y"}], [Hit("y")]], k=0)
    assert dict(fused) == {"x": 1.0, "y": pytest.approx(1 / 3 + 1.0)}
    assert [i for i, _ in rrf_fuse([["p"], ["q"]])] == ["p", "q"]  # tie keeps first-seen order
    assert rrf_fuse([]) == []
    with pytest.raises(ValueError):
        rrf_fuse([["a"]], k=-1)
    with pytest.raises(TypeError):
        rrf_fuse([[object()]])

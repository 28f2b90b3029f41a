"""CRAG by the LLM on the demo semantic layer: the budgeted context is graded before generation; a low
grade runs the corrective retrieval with what the LLM says is missing; fast mode keeps the rule grade."""

from __future__ import annotations

import pytest

from cubesage_core.llm import question_budget, using_settings
from cubesage_core.settings import Settings
from fourengine.retrieve import Retriever
from tests.llm_stub import dspy_reply, openai_stub

pytestmark = pytest.mark.integration


def _graded(retriever: Retriever, question: str, reply: str) -> tuple[object, list[dict]]:
    with openai_stub([reply]) as stub:
        settings = Settings(llm_url=stub.url, llm_model="openai/crag")
        with using_settings(settings), question_budget(settings):
            result = retriever.retrieve_sync(question, grade_with_llm=True)
    return result, stub.requests


def test_a_high_grade_keeps_the_context(retriever: Retriever) -> None:
    result, requests = _graded(retriever, "refund rate by region", dspy_reply(grade="high", missing=[]))
    crag = result.crag
    assert (crag.grade, crag.mode) == ("high", "llm") and crag.rule_grade in ("high", "medium")
    assert "V_corrective" not in result.timings_ms and "crag_llm" in result.timings_ms
    assert result.context.text[:200] in requests[0]["messages"][-1]["content"]  # graded the budgeted context


def test_a_low_grade_runs_the_corrective_retrieval_with_the_missing_terms(retriever: Retriever) -> None:
    plain = retriever.retrieve_sync("refund rate by region")
    result, _ = _graded(retriever, "refund rate by region", dspy_reply(grade="low", missing=["refund reason"]))
    assert result.crag.grade == "low" and result.crag.rule_grade == plain.crag.grade != "low"
    assert result.crag.missing == ["refund reason"] and "V_corrective" in result.timings_ms
    assert any(a.startswith("lower_threshold") for a in result.crag.actions)
    assert "dimension:refunds.reason" in {a.asset.asset_id for a in result.assets}


def test_fast_mode_and_llm_failures_keep_the_rule_grade(retriever: Retriever) -> None:
    fast = retriever.retrieve_sync("refund rate by region", grade_with_llm=True)  # no endpoint: fast mode
    failed, _ = _graded(retriever, "refund rate by region", "not a grade")
    assert fast.crag.mode == "fast" and fast.crag.rule_grade is None
    assert failed.crag.mode.startswith("fast (llm error: ") and failed.crag.grade == fast.crag.grade

"""LLM mode through DSPy against the OpenAI-compatible stub: extraction, NER and selection."""

from __future__ import annotations

from cubesage_core.llm import get_lm, using_settings
from cubesage_core.settings import Settings
from sag_index.llm_processor import LlmProcessor
from sag_index.llm_steps import candidate_lines, llm_ner, llm_selector
from sag_index.loaders import make_chunk
from sag_index.retrieval import Candidate
from tests.llm_stub import dspy_reply, openai_stub


def _lm(url: str):
    return get_lm(Settings(llm_url=url, llm_model="openai/stub", llm_timeout_s=5.0))


CHUNK = make_chunk("wiki", "Refunds of orders with a reason such as damaged or late_delivery.", heading="fact_refund")


def test_llm_processor_produces_one_event_with_entities() -> None:
    reply = dspy_reply(
        title="Refund records",
        content="fact_refund stores refunds and their reasons.",
        entities=[
            {"name": "fact_refund", "type": "table", "description": "the refund table"},
            {"name": "late_delivery", "type": "reason", "description": "a reason"},
        ],
    )
    with openai_stub([reply]) as stub:
        extraction = LlmProcessor(_lm(stub.url)).extract(CHUNK)
    assert extraction.mode == "llm" and extraction.fallback_reason is None
    assert extraction.title == "Refund records"
    names = [e.name for e in extraction.entities]
    assert names[0] == "fact_refund" and extraction.entities[0].role == "subject"  # heading subject first
    assert "late_delivery" in names
    assert "Refunds of orders" in stub.requests[0]["messages"][-1]["content"]


def test_llm_processor_retries_then_falls_back_to_fast() -> None:
    with openai_stub(["no fields here at all"]) as stub:
        extraction = LlmProcessor(_lm(stub.url), retries=1).extract(CHUNK)
    assert extraction.mode == "fast"
    assert extraction.fallback_reason
    assert len(stub.requests) >= 2  # the first attempt and one retry
    assert extraction.title == "fact_refund"


def test_llm_processor_retry_recovers() -> None:
    good = dspy_reply(title="T", content="C", entities=[{"name": "X"}])
    calls = {"n": 0}

    def script(body: dict) -> str:  # a parse failure first (DSPy may try two adapters), then good replies
        calls["n"] += 1
        return good if calls["n"] > 2 else "garbage"

    with openai_stub(script) as stub:
        extraction = LlmProcessor(_lm(stub.url), retries=2).extract(CHUNK)
        assert len(stub.requests) >= 2
    assert extraction.mode == "llm" and extraction.title == "T"


def _llm(url: str):
    return using_settings(Settings(llm_url=url, llm_model="openai/stub", llm_timeout_s=5.0))


def test_llm_ner_resolves_known_names_and_falls_back() -> None:
    dictionary = {"王芳": "en_1", "fact_refund": "en_2"}
    with openai_stub([dspy_reply(entities=["王芳", "Unknown Person"])]) as stub, _llm(stub.url):
        exact, free, mode = llm_ner()("王芳 的退款 Unknown Person", dictionary)
    assert (exact, free, mode) == (["en_1"], ["Unknown Person"], "llm")
    with openai_stub(["nonsense"]) as stub, _llm(stub.url):
        exact, _, mode = llm_ner()("refunds of 王芳", dictionary)
    assert mode.startswith("fast (llm error: AdapterParseError") and exact == ["en_1"]
    exact, _, mode = llm_ner()("refunds of 王芳", dictionary)  # no endpoint: the fast step, no call
    assert (exact, mode) == (["en_1"], "fast")


def test_llm_selector_picks_by_index_within_the_token_budget_and_falls_back() -> None:
    pool = [Candidate("a", score=0.9), Candidate("b", score=0.5), Candidate("c", score=0.1)]
    details = {k: {"title": k.upper(), "content": f"content {k}"} for k in "abc"}

    def fast(p: list[Candidate], k: int) -> list[str]:
        return [c.event_id for c in p][:k]

    with openai_stub([dspy_reply(selected=[2, 0])]) as stub, _llm(stub.url):
        chosen, mode = llm_selector(fast)("q", pool, details, 2)
    assert (chosen, mode) == (["c", "a"], "llm")
    assert "[2] C: content c" in stub.requests[0]["messages"][-1]["content"]
    with openai_stub([dspy_reply(selected=[5])]) as stub, _llm(stub.url):
        chosen, mode = llm_selector(fast)("q", pool, details, 2)
    assert chosen == ["a", "b"] and "outside 0..2" in mode
    assert [line for _, line in candidate_lines(pool, details, budget=16)] == ["[0] A: content a", "[1] B: content b"]

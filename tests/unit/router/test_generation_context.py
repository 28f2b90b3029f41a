"""The aggregate path's retrieval context in LLM mode: the fused context, without building the LM (building it
may raise for a model name dspy refuses; the step that calls it falls back, the question does not fail)."""

from __future__ import annotations

from cubesage_core.llm import question_budget, using_settings
from cubesage_core.settings import Settings
from router.semantic import generation_context

RETRIEVAL = {
    "result": {
        "bindings": [
            {"term_id": "t", "canonical_term": "t", "mapped_asset_type": "metric", "mapped_asset_id": "metric:a.total"}
        ]
    },
    "context": {"assets": [{"id": "dimension:a.kind", "type": "dimension"}], "context_text": "wide"},
}


def test_a_model_the_lm_refuses_still_gets_the_fused_context() -> None:
    refused = Settings(llm_url="http://127.0.0.1:9/v1", llm_model="openai/")  # dspy.LM: prefix without a model id
    with using_settings(refused):
        context = generation_context(RETRIEVAL, None)
    assert context.context_text == "wide" and [a.id for a in context.assets] == ["dimension:a.kind"]


def test_fast_mode_keeps_the_main_questions_context() -> None:
    with using_settings(Settings(llm_url="http://127.0.0.1:9/v1")):
        asked_fast = generation_context(RETRIEVAL, False)
        with question_budget(Settings(llm_url="http://127.0.0.1:9/v1"), use_llm=False):
            question_fast = generation_context(RETRIEVAL, None)
    with using_settings(Settings(llm_url=None)):
        no_endpoint = generation_context(RETRIEVAL, None)
    assert asked_fast.context_text == question_fast.context_text == no_endpoint.context_text == ""

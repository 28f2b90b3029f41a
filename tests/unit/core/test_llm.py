"""LLM wiring: fast mode without an endpoint, the LM of the active settings, fallback on failure."""

from __future__ import annotations

from cubesage_core.llm import get_lm, two_mode, using_settings
from cubesage_core.settings import Settings
from tests.llm_stub import STALL, openai_stub


def test_no_endpoint_means_fast_mode() -> None:
    with using_settings(Settings(llm_url=None)):
        assert get_lm() is None
        result = two_mode(lambda: "llm", lambda: "fast")
    assert (result.value, result.mode) == ("fast", "fast")


def test_active_settings_select_the_lm_and_failures_fall_back() -> None:
    with openai_stub([STALL]) as stub:
        settings = Settings(llm_url=stub.url, llm_model="openai/stub", llm_timeout_s=0.5)
        with using_settings(settings):
            lm = get_lm()
            assert lm is not None and lm.kwargs.get("api_base") == stub.url

            def ask_llm() -> str:
                import dspy

                return dspy.settings.lm("say hi")[0]

            result = two_mode(ask_llm, lambda: "fast answer")
    assert result.mode == "fast" and result.value == "fast answer"
    assert result.fallback_reason
    assert get_lm(Settings(llm_url=None)) is None

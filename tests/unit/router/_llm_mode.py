"""Run a block in LLM mode against the in-test OpenAI-compatible stub (shared by the router tests)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cubesage_core.settings import Settings
from tests.llm_stub import Script, Stub, openai_stub


@contextmanager
def llm_mode(monkeypatch: pytest.MonkeyPatch, script: Script) -> Iterator[Stub]:
    with openai_stub(script) as stub:
        settings = Settings(llm_url=stub.url, llm_model="openai/stub", llm_timeout_s=5.0)
        monkeypatch.setattr("cubesage_core.llm.get_settings", lambda: settings)
        yield stub

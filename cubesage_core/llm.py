"""LLM wiring through DSPy: one configured ``dspy.LM`` when an endpoint is set, else fast mode.

Every LLM step in cubesage has a deterministic fast implementation; ``two_mode``
runs the DSPy one when an endpoint is configured and falls back to the fast one
on timeout, transport or parse errors, reporting which mode answered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

from cubesage_core.settings import Settings, get_settings

T = TypeVar("T")
log = logging.getLogger(__name__)
_ACTIVE_SETTINGS: ContextVar[Settings | None] = ContextVar("cubesage_llm_settings", default=None)


@contextmanager
def using_settings(settings: Settings) -> Iterator[None]:
    """Make ``settings`` the LLM configuration of every step run inside the block (this context only)."""
    token = _ACTIVE_SETTINGS.set(settings)
    try:
        yield
    finally:
        _ACTIVE_SETTINGS.reset(token)


@lru_cache(maxsize=8)
def _build_lm(url: str, model: str, key: str, timeout: float):
    import dspy

    return dspy.LM(
        model=model, api_base=url, api_key=key or "none", timeout=timeout, num_retries=0,
        cache=False, temperature=0.0, max_tokens=1024,
    )


def get_lm(settings: Settings | None = None):
    """The DSPy LM of ``settings`` (else of the active ``using_settings`` block, else the process's), or None."""
    settings = settings or _ACTIVE_SETTINGS.get() or get_settings()
    if not settings.llm_url:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
    return _build_lm(settings.llm_url, settings.llm_model, key, settings.llm_timeout_s)


@dataclass
class ModeResult(Generic[T]):
    value: T
    mode: str  # "llm" | "fast"
    fallback_reason: str | None = None


def two_mode(
    llm_step: Callable[[], T], fast_step: Callable[[], T], *, use_llm: bool | None = None
) -> ModeResult[T]:
    """Run ``llm_step`` under the configured LM (if any and wanted), else/on failure ``fast_step``."""
    lm = get_lm() if use_llm is not False else None
    if lm is None:
        return ModeResult(fast_step(), "fast")
    import dspy

    try:
        with dspy.context(lm=lm):
            return ModeResult(llm_step(), "llm")
    except Exception as err:
        log.warning("LLM step failed, using fast mode: %s", err)
        return ModeResult(fast_step(), "fast", fallback_reason=f"{type(err).__name__}: {err}"[:300])

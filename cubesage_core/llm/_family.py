"""LM settings per model family: what ``dspy.LM`` accepts for each kind of model.

DSPy 3.4 (``dspy/clients/lm.py``) refuses OpenAI reasoning models (o1/o3/o4/o5 and every ``gpt-5*`` but
the ``-chat`` variants, whatever the provider prefix) unless ``temperature`` is 1.0 or None and
``max_tokens`` is None or at least 16,000; it sends their budget as ``max_completion_tokens`` and passes
``reasoning_effort`` through. Chat models take ``temperature`` and ``max_tokens`` as given.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from cubesage_core.settings import Settings

Family = Literal["reasoning", "chat"]
_REASONING = re.compile(r"^(?:o[1345](?:-(?:mini|nano|pro))?(?:-\d{4}-\d{2}-\d{2})?|gpt-5(?:\.\d+)*(?!-chat)(?:-.*)?)$")


def model_family(model: str) -> Family:
    """``reasoning`` for the names DSPy treats as OpenAI reasoning models, else ``chat``."""
    name = model.rsplit("/", 1)[-1].lower()
    return "reasoning" if _REASONING.match(name) else "chat"


def lm_kwargs(settings: Settings) -> dict[str, Any]:
    """Sampling and length parameters of ``settings.llm_model`` for ``dspy.LM``."""
    if model_family(settings.llm_model) == "reasoning":
        out: dict[str, Any] = {"temperature": None, "max_tokens": settings.llm_reasoning_max_tokens}
        if settings.llm_reasoning_effort:
            out["reasoning_effort"] = settings.llm_reasoning_effort
        return out
    return {"temperature": settings.llm_temperature, "max_tokens": settings.llm_max_tokens}

"""CRAG by the LLM: before any query is written, the LLM grades how relevant the retrieved (budgeted)
context is to the question — high / medium / low — and names what it lacks.

``llm_grade(question, context_text)`` runs through ``cubesage_core.llm.two_mode`` (step ``crag``); it is
None in fast mode or when the LLM fails, and the rule grade of ``fourengine.crag`` stands. A low grade
from the LLM starts the corrective retrieval (lower threshold, larger top_k, fuzzier terms), with the
missing items as extra search terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from cubesage_core.llm import two_mode
from cubesage_core.tokens import truncate_to_tokens

CONTEXT_TOKENS = 2500  # the budgeted context is ~4,000 tokens at most; the grade needs its head
MAX_MISSING = 5


@lru_cache(maxsize=1)
def grade_signature() -> type:
    """The DSPy signature (built on first use: fast mode never imports dspy here)."""
    import dspy

    class GradeContext(dspy.Signature):
        """Grade how well the retrieved schema context covers what the question needs, before a query is
        written. high: the metrics, dimensions, tables or rows the question needs are all there; medium: some
        are; low: nothing relevant, or the question asks about something this context does not describe."""

        question: str = dspy.InputField()
        context: str = dspy.InputField(desc="retrieved schema context: tables, columns, metrics, joins, bindings")
        grade: Literal["high", "medium", "low"] = dspy.OutputField()
        missing: list[str] = dspy.OutputField(desc="short names of what the question needs and the context lacks")

    return GradeContext


@dataclass(frozen=True)
class LlmGrade:
    grade: str
    missing: list[str] = field(default_factory=list)


def _ask(question: str, context: str) -> LlmGrade:
    import dspy

    prediction = dspy.Predict(grade_signature())(
        question=question, context=truncate_to_tokens(context, CONTEXT_TOKENS) or "(empty)"
    )
    missing = [str(m).strip() for m in prediction.missing or [] if str(m).strip()][:MAX_MISSING]
    return LlmGrade(str(prediction.grade), missing)


def llm_grade(question: str, context: str) -> tuple[LlmGrade | None, str]:
    """(the LLM's grade or None, the step's mode label)."""
    result = two_mode(lambda: _ask(question, context), lambda: None, step="crag")
    return result.value, result.label

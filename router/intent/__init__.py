"""Intent classification: detail / aggregate / mixed, plus unsupported and clarify.

``classify_intent(understanding, signals)`` runs the DSPy classifier when an LM is configured (and
``use_llm`` is not False), else — or when the LLM fails — the deterministic rules in ``_fast``.
"""

from __future__ import annotations

from cubesage_core.llm import two_mode
from router.intent._fast import classify_fast, ranked_tables, rows_clause, without_join
from router.intent.types import INTENTS, Intent, IntentDecision, IntentSignals, RowHit
from router.understanding.types import Understanding

__all__ = [
    "INTENTS",
    "Intent",
    "IntentDecision",
    "IntentSignals",
    "RowHit",
    "classify_intent",
    "ranked_tables",
    "rows_clause",
    "without_join",
]


def classify_intent(
    understanding: Understanding, signals: IntentSignals | None = None, *, use_llm: bool | None = None
) -> IntentDecision:
    """The intent of the question, with confidence, reasons and the mode that decided."""
    signals = signals or IntentSignals()

    def llm() -> IntentDecision:
        from router.intent._llm import classify_llm

        return classify_llm(understanding, signals)

    result = two_mode(llm, lambda: classify_fast(understanding, signals), step="intent", use_llm=use_llm)
    decision = result.value
    decision.mode = result.mode
    decision.fallback_reason = result.fallback_reason
    return decision

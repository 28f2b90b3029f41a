"""LLM mode of intent classification: a DSPy Predict with a Literal output and few-shot demos."""

from __future__ import annotations

from typing import Any, Literal

import dspy

from router.intent.types import IntentDecision, IntentSignals
from router.understanding.types import Understanding

MAX_DEMOS = 6


class ClassifyIntent(dspy.Signature):
    """Classify a question about the data of the warehouse described. aggregate: numbers computed over many
    rows (totals, rates, trends, rankings, comparisons); detail: specific rows or entities (the rows of a
    named entity, their attributes); mixed: both in one question; unsupported: not answerable from this
    warehouse (general knowledge, or a subject the warehouse does not hold); clarify: too vague to answer
    (no metric, no entity, no subject named)."""

    question: str = dspy.InputField()
    warehouse: str = dspy.InputField(desc="what the warehouse holds, from its semantic model")
    signals: str = dspy.InputField(desc="warehouse evidence: bound metrics, dimensions, values, entity rows, tables")
    intent: Literal["detail", "aggregate", "mixed", "unsupported", "clarify"] = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="0..1")
    reason: str = dspy.OutputField(desc="one short sentence")


def _demo_intent(shot: dict[str, Any]) -> str | None:
    if shot.get("intent"):
        return str(shot["intent"])
    if shot.get("cube_query"):
        return "aggregate"
    if shot.get("sql"):
        return "detail"
    return None


def demos(few_shots: list[dict[str, Any]]) -> list[dspy.Example]:
    out = []
    for shot in few_shots:
        intent = _demo_intent(shot)
        if intent and shot.get("question"):
            out.append(
                dspy.Example(
                    question=shot["question"],
                    warehouse="(as below)",
                    signals="(not shown)",
                    intent=intent,
                    confidence=0.95,
                    reason="approved example",
                ).with_inputs("question", "warehouse", "signals")
            )
    return out[:MAX_DEMOS]


def classify_llm(u: Understanding, s: IntentSignals) -> IntentDecision:
    predict = dspy.Predict(ClassifyIntent)
    predict.demos = demos(s.few_shots)
    prediction = predict(question=u.normalized, warehouse=s.warehouse or "(not described)", signals=s.summary())
    confidence = float(prediction.confidence)
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence {confidence} outside 0..1")
    return IntentDecision(prediction.intent, round(confidence, 3), [f"llm: {prediction.reason}"], mode="llm")

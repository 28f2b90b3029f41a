"""LLM mode of query understanding: one DSPy call extracting search terms (time stays rule-based)."""

from __future__ import annotations

import dspy


class ExtractSearchTerms(dspy.Signature):
    """Extract the search terms of a data question: metrics, dimensions, names of rows (people, things,
    places), table-like nouns. Keep multi-word names whole, keep the question's language, drop dates and
    filler words."""

    question: str = dspy.InputField()
    search_terms: list[str] = dspy.OutputField(
        desc="up to 15 short terms, most important first; none for a question that names nothing"
    )


def llm_search_terms(question: str) -> list[str]:
    """The LLM's terms (none is an answer too: a vague question names nothing to search for)."""
    prediction = dspy.Predict(ExtractSearchTerms)(question=question)
    return [str(t).strip() for t in prediction.search_terms or [] if str(t).strip()][:20]

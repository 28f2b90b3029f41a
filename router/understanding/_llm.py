"""LLM mode of query understanding: one DSPy call extracting search terms (time stays rule-based)."""

from __future__ import annotations

import dspy


class ExtractSearchTerms(dspy.Signature):
    """Extract the search terms of a data question: metrics, dimensions, names of rows (people, things,
    places), table-like nouns. Keep multi-word names whole, keep the question's language, drop dates and
    filler words."""

    question: str = dspy.InputField()
    search_terms: list[str] = dspy.OutputField(desc="5-15 short terms, most important first")


def llm_search_terms(question: str) -> list[str]:
    prediction = dspy.Predict(ExtractSearchTerms)(question=question)
    terms = [str(t).strip() for t in prediction.search_terms if str(t).strip()]
    if not terms:
        raise ValueError("the LLM returned no search terms")
    return terms[:20]

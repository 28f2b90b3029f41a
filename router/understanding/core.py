"""``understand(question, today)``: the one entry point of query understanding (fast by default)."""

from __future__ import annotations

from datetime import date

from cubesage_core.llm import two_mode
from router.understanding.comparisons import extract_comparison, pop_series_grain
from router.understanding.dimensions import extract_dimensions
from router.understanding.granularity import extract_granularity
from router.understanding.language import MAX_CHARS, check_question, detect_language
from router.understanding.ranking import extract_ranking
from router.understanding.terms import extract_terms
from router.understanding.timeexpr import extract_time
from router.understanding.types import Understanding


def understand(question: str, today: date, *, use_llm: bool | None = None, max_chars: int = MAX_CHARS) -> Understanding:
    """Normalise, detect the language and extract terms, time ranges, granularity, comparison, ranking
    and group-by mentions. Raises ``QuestionError`` for empty, too short or too long questions.

    The LLM mode (when an LM is configured and ``use_llm`` is not False) replaces the rule-based search
    terms with one DSPy extraction (rule-based terms appended); everything else is deterministic.
    """
    text = check_question(question, max_chars=max_chars)
    time = extract_time(text, today)
    granularity, grain_spans = extract_granularity(text, time.ranges[0] if time.ranges else None)
    granularity = granularity or pop_series_grain(text, time.ranges)
    fast_terms = extract_terms(text, blank_spans=time.spans + grain_spans)

    def llm_terms() -> list[str]:
        from router.understanding._llm import llm_search_terms

        terms = llm_search_terms(text)
        known = {t.lower() for t in terms}
        return terms + [t for t in fast_terms if t.lower() not in known]

    terms = two_mode(llm_terms, lambda: fast_terms, step="understand", use_llm=use_llm)
    language = detect_language(text)
    return Understanding(
        question=question,
        normalized=text,
        language=language,
        today=today,
        search_terms=terms.value,
        time_ranges=time.ranges,
        granularity=granularity,
        comparison=extract_comparison(text, time.ranges, time.markers, today, language),
        ranking=extract_ranking(text),
        dimensions=extract_dimensions(text),
        mode=terms.mode,
        fallback_reason=terms.fallback_reason,
    )

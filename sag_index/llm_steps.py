"""LLM (DSPy) implementations of retrieval Step 1 (NER) and Step 7 (selection).

Both plug into ``Retriever(ner=..., selector=...)`` and fall back to the fast implementation
on any LLM failure (timeout, transport, unparsable output), reporting the mode they ran in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sag_index._ner import dictionary_mentions, surface_mentions
from sag_index._text import normalize_name
from sag_index.retrieval import Candidate

log = logging.getLogger(__name__)
MAX_CANDIDATE_CHARS = 300


def llm_ner(lm: Any) -> Callable[[str, dict[str, str]], tuple[list[str], list[str], str]]:
    """Step 1 by DSPy: entity names from the question; known names resolve exactly, others stay free."""
    import dspy

    from sag_index._dspy_programs import ExtractQueryEntities

    program = dspy.Predict(ExtractQueryEntities)

    def ner(question: str, dictionary: dict[str, str]) -> tuple[list[str], list[str], str]:
        try:
            with dspy.context(lm=lm):
                names = [str(n) for n in (program(question=question).entities or []) if str(n).strip()]
        except Exception as err:
            log.warning("LLM NER failed, using fast mode: %s", err)
            found = dictionary_mentions(question, dictionary)
            known = {m.text for m in found}
            free = [s for s in surface_mentions(question) if normalize_name(s) not in known]
            return [m.entity_id for m in found if m.entity_id], free, "fast"
        exact = [dictionary[normalize_name(n)] for n in names if normalize_name(n) in dictionary]
        free = [n for n in names if normalize_name(n) not in dictionary]
        return list(dict.fromkeys(exact)), free, "llm"

    return ner


def llm_selector(lm: Any, fast: Callable[[list[Candidate], int], list[str]]
                 ) -> Callable[[str, list[Candidate], dict[str, dict], int], tuple[list[str], str]]:
    """Step 7 by DSPy: the model sees the candidates (no scores) and picks the useful ones."""
    import dspy

    from sag_index._dspy_programs import SelectEvents

    program = dspy.Predict(SelectEvents)

    def select(question: str, pool: list[Candidate], details: dict[str, dict], top_k: int) -> tuple[list[str], str]:
        ordered = [c for c in pool if c.event_id in details]
        lines = [f"[{i}] {details[c.event_id]['title']}: {details[c.event_id]['content'][:MAX_CANDIDATE_CHARS]}"
                 for i, c in enumerate(ordered)]
        try:
            with dspy.context(lm=lm):
                picked = program(question=question, candidates=lines, top_k=top_k).selected or []
            chosen = [ordered[int(i)].event_id for i in picked if 0 <= int(i) < len(ordered)]
        except Exception as err:
            log.warning("LLM selection failed, using fast mode: %s", err)
            return fast(pool, top_k), "fast"
        if not chosen:
            return fast(pool, top_k), "fast"
        return list(dict.fromkeys(chosen))[:top_k], "llm"

    return select

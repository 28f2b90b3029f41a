"""LLM (DSPy) implementations of retrieval Step 1 (NER) and Step 7 (selection).

Both plug into ``SagRetriever(ner=..., selector=...)`` and run through ``cubesage_core.llm.two_mode``
(steps ``sag_ner`` and ``sag_select``): the fast implementation answers in fast mode and on any LLM
failure (timeout, transport, unparsable or out-of-range output), and the step reports its mode.
Step 7 shows the LLM the candidates (no scores), the fast formula's best first, cut to ``selection_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable

from cubesage_core.llm import two_mode
from cubesage_core.tokens import count_tokens
from sag_index._ner import fast_ner
from sag_index._text import normalize_name
from sag_index.steps.base import Candidate, Details

MAX_CANDIDATE_CHARS = 300
Ner = Callable[[str, dict[str, str]], tuple[list[str], list[str], str]]
Selector = Callable[[str, list[Candidate], Details, int], tuple[list[str], str]]


def llm_ner() -> Ner:
    """Step 1 by DSPy: entity names from the question; known names resolve exactly, others stay free."""

    def ask(question: str, dictionary: dict[str, str]) -> tuple[list[str], list[str]]:
        import dspy

        from sag_index._dspy_programs import ExtractQueryEntities

        names = [
            str(n) for n in (dspy.Predict(ExtractQueryEntities)(question=question).entities or []) if str(n).strip()
        ]
        exact = [dictionary[normalize_name(n)] for n in names if normalize_name(n) in dictionary]
        return list(dict.fromkeys(exact)), [n for n in names if normalize_name(n) not in dictionary]

    def ner(question: str, dictionary: dict[str, str]) -> tuple[list[str], list[str], str]:
        result = two_mode(lambda: ask(question, dictionary), lambda: fast_ner(question, dictionary), step="sag_ner")
        exact, free = result.value
        return exact, free, result.label

    return ner


def candidate_lines(
    pool: list[Candidate], details: Details, budget: int, rank: Callable[[Candidate], float] | None = None
) -> list[tuple[str, str]]:
    """(event id, '[i] title: content') of the candidates, best by ``rank`` first (else pool order), while they
    fit ``budget`` tokens: bridge events the fast formula lifts stay in view when the pool is cut."""
    ordered = sorted(pool, key=rank, reverse=True) if rank is not None else pool
    out: list[tuple[str, str]] = []
    used = 0
    for c in ordered:
        if c.event_id not in details:
            continue
        d = details[c.event_id]
        line = f"[{len(out)}] {d['title']}: {d['content'][:MAX_CANDIDATE_CHARS]}"
        used += count_tokens(line) + 1
        if out and used > budget:
            break
        out.append((c.event_id, line))
    return out


def llm_selector(
    fast: Callable[[list[Candidate], int], list[str]],
    budget: int = 1500,
    rank: Callable[[Candidate], float] | None = None,
) -> Selector:
    """Step 7 by DSPy: the model sees the candidates (no scores) and picks the useful ones."""

    def ask(question: str, pool: list[Candidate], details: Details, top_k: int) -> list[str]:
        import dspy

        from sag_index._dspy_programs import SelectEvents

        shown = candidate_lines(pool, details, budget, rank)
        picked = (
            dspy.Predict(SelectEvents)(question=question, candidates=[line for _, line in shown], top_k=top_k).selected
            or []
        )
        if any(not 0 <= int(i) < len(shown) for i in picked):
            raise ValueError(f"selected indices {picked} outside 0..{len(shown) - 1}")
        chosen = list(dict.fromkeys(shown[int(i)][0] for i in picked))[:top_k]
        if not chosen:
            raise ValueError("the LLM selected no candidate")
        return chosen

    def select(question: str, pool: list[Candidate], details: Details, top_k: int) -> tuple[list[str], str]:
        result = two_mode(lambda: ask(question, pool, details, top_k), lambda: fast(pool, top_k), step="sag_select")
        return result.value, result.label

    return select

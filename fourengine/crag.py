"""CRAG gate before generation: grade the retrieval high / medium / low, and say what corrective retrieval did.

high: term bindings hit and the best vector score above ``crag_high`` (used as is: corrective work and wiki
passages are skipped); low: no bindings and the best score below ``crag_low`` (corrective retrieval:
query rewrite from the bindings and near terms, wider V, wiki passages); medium: anything else (used after
reranking). The thresholds are calibrated to the embedder (``fourengine.calibration``); the seed's 0.65 /
0.8 hold only without a calibration. A grade still low after correction is *insufficient*: the words
nothing matched are listed as missing; the answering path refuses an aggregate so graded (``router.pipeline``).
"""

from __future__ import annotations

from fourengine.models import CragResult, TermHit
from fourengine.settings import RetrievalSettings
from fourengine.terms import STOPWORDS

MAX_MISSING = 5
MIN_MISSING_CHARS = 3


def grade(top_score: float, bindings: int, settings: RetrievalSettings) -> str:
    if bindings and top_score > settings.crag_high:
        return "high"
    if not bindings and top_score < settings.crag_low:
        return "low"
    return "medium"


def assess(top_score: float, bindings: int, settings: RetrievalSettings) -> CragResult:
    g = grade(top_score, bindings, settings)
    actions = {"high": ["use", "skip:corrective", "skip:wiki_passages"], "medium": ["rerank_then_use"], "low": []}[g]
    decision = {"high": "use", "medium": "rerank_then_use", "low": "corrective"}[g]
    return CragResult(
        grade=g,
        top_score=round(top_score, 4),
        bindings=bindings,
        actions=actions,
        decision=decision,
        thresholds={
            "v": settings.threshold,
            "crag_low": settings.crag_low,
            "crag_high": settings.crag_high,
            "d_hit": settings.few_shot_threshold,
        },
    )


def conclude(
    crag: CragResult, top_score: float, evidence: int, settings: RetrievalSettings, missing: list[str]
) -> None:
    """The grade after corrective retrieval (``evidence``: bindings plus tables wiki passages named)."""
    crag.grade_after = grade(top_score, evidence, settings)
    crag.top_score = round(max(crag.top_score, top_score), 4)
    if crag.grade_after == "low":
        crag.decision = "insufficient"
        crag.missing = missing
    else:
        crag.decision = "corrected"


def missing_terms(terms: list[str], hits: list[TermHit], question: str) -> list[str]:
    """Words of the question no term matched (longest first, none inside a longer one listed): what the index
    does not know."""
    matched = " ".join(h.matched for h in hits).lower()
    words = [
        t
        for t in terms
        if " " not in t
        and len(t) >= MIN_MISSING_CHARS
        and t not in STOPWORDS
        and t not in matched
        and t.lower() in question.lower()
    ]
    kept: list[str] = []
    for word in sorted(dict.fromkeys(words), key=lambda w: (-len(w), w)):
        if not any(word in longer for longer in kept):
            kept.append(word)
    return kept[:MAX_MISSING]


def rewrite(question: str, hits: list[TermHit]) -> str:
    """The question with the canonical names of the terms it (even loosely) matched: an embedding query that
    speaks the index's words ("query rewrite from bindings")."""
    names = [
        h.canonical_term
        for h in sorted(hits, key=lambda h: -h.score)
        if h.canonical_term and h.canonical_term.lower() not in question.lower()
    ]
    names += [
        h.asset.title
        for h in hits
        if h.asset is not None and h.asset.title and h.asset.title.lower() not in question.lower()
    ]
    extra = list(dict.fromkeys(names))[:6]
    return f"{question} ({', '.join(extra)})" if extra else question

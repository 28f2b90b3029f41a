"""CRAG gate before generation: grade the retrieval high / medium / low (seed thresholds).

high: term bindings hit and the best vector score > 0.8 (use as is);
low: no bindings and the best vector score < 0.65 (corrective retrieval);
medium: anything else (use after reranking).
"""

from __future__ import annotations

from fourengine.models import CragResult
from fourengine.settings import RetrievalSettings


def grade(top_score: float, bindings: int, settings: RetrievalSettings) -> str:
    if bindings and top_score > settings.crag_high:
        return "high"
    if not bindings and top_score < settings.crag_low:
        return "low"
    return "medium"


def assess(top_score: float, bindings: int, settings: RetrievalSettings) -> CragResult:
    g = grade(top_score, bindings, settings)
    actions = {"high": ["use"], "medium": ["rerank_then_use"], "low": []}[g]
    return CragResult(grade=g, top_score=round(top_score, 4), bindings=bindings, actions=actions)

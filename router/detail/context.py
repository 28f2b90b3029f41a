"""The detail path's retrieval context: SAG's recalled tables fused with the tables of the four-engine context.

The four-engine context a question's generation sees is the RAG-Fusion of the main question's retrieval and
its sub-queries' (``fourengine.fusion``). Its assets belong to tables (``table_id``); those the detail catalog
describes are ranked and fused with SAG's table recall by reciprocal rank, so a table only a sub-query found
reaches the detail planner (table lookups, the LLM prompt's recalled tables). :class:`DetailContext` says in
provenance which context that was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fourengine.models import TABLE_PREFIX, RetrievalResult
from router.detail.schema import DetailCatalog

RRF_K = 60
CONTEXT_EVIDENCE = "four-engine context"  # the evidence of a table only the four-engine context names


@dataclass(frozen=True)
class DetailContext:
    """The recalled tables the detail path plans with, and where they came from (provenance)."""

    recalled: list[tuple[str, str, float]]  # (table, evidence, score), best first
    source: str  # fused (main + sub-queries) | main (no sub-queries) | sag (no four-engine context)
    context_tables: list[str] = field(default_factory=list)  # the context's tables, ranked
    added: list[str] = field(default_factory=list)  # tables only the four-engine context named

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "context_tables": list(self.context_tables),
            "added": list(self.added),
            "recalled": [t for t, _, _ in self.recalled],
        }


def context_tables(context: RetrievalResult, catalog: DetailCatalog) -> list[str]:
    """The catalog tables the context's ranked assets belong to, in rank order (table asset ids name cubes)."""
    by_cube = {spec.cube: table for table, spec in catalog.tables.items()}
    included = set(context.context.included)
    found: list[str] = []
    for ranked in context.assets:
        asset = ranked.asset
        if included and asset.asset_id not in included:
            continue  # ranked, but cut by the token budget: not what generation sees
        cube = (asset.table_id or "").removeprefix(TABLE_PREFIX)
        if (table := by_cube.get(cube)) is not None and table not in found:
            found.append(table)
    return found


def detail_context(
    recalled: list[tuple[str, str, float]], context: RetrievalResult | None, catalog: DetailCatalog
) -> DetailContext:
    """SAG's ``recalled`` tables fused by reciprocal rank with ``context``'s tables."""
    if context is None:
        return DetailContext(list(recalled), "sag")
    ranked = context_tables(context, catalog)
    source = "fused" if "fusion" in context.timings_ms else "main"
    score: dict[str, float] = {}
    for ranking in ([t for t, _, _ in recalled], ranked):
        for rank, table in enumerate(ranking, start=1):
            score[table] = score.get(table, 0.0) + 1.0 / (RRF_K + rank)
    hits = {t: (evidence, s) for t, evidence, s in recalled}
    order = {t: i for i, t in enumerate(score)}
    fused = sorted(score, key=lambda t: (-score[t], order[t]))
    out = [(t, *hits.get(t, (CONTEXT_EVIDENCE, round(score[t], 6)))) for t in fused]
    return DetailContext(out, source, ranked, [t for t in ranked if t not in hits])

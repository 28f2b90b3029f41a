"""The reranker interface and the context its stages read and update."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from fourengine.models import Asset, JoinPlan, RankedAsset, TermBinding
from fourengine.settings import RetrievalSettings


@dataclass
class RerankContext:
    """Candidates (asset id -> ranked asset) plus the signals the stages use."""

    question: str
    search_terms: list[str]
    candidates: dict[str, RankedAsset]
    bindings: list[TermBinding]
    join_plan: JoinPlan
    settings: RetrievalSettings
    tables: dict[str, Asset] = field(default_factory=dict)  # catalog of table assets (for parents/bridges)
    # cosine of every asset engine V returned, also below the admission threshold: a candidate admitted
    # by another engine (R, G, a binding) is still scored by its similarity
    similarity: dict[str, float] = field(default_factory=dict)

    def add(self, asset: Asset, source: str, score: float = 0.0) -> RankedAsset:
        ranked = self.candidates.get(asset.asset_id)
        if ranked is None:
            ranked = self.candidates[asset.asset_id] = RankedAsset(asset, score)
            if asset.asset_id in self.similarity and source != "V":
                ranked.features["v"] = self.similarity[asset.asset_id]
                ranked.score = max(ranked.score, ranked.features["v"])
        ranked.sources.add(source)
        return ranked

    def table(self, table_id: str, source: str) -> RankedAsset | None:
        """The candidate for ``table_id``, added from the catalog when missing."""
        if table_id in self.candidates:
            return self.candidates[table_id]
        asset = self.tables.get(table_id)
        return self.add(asset, source) if asset is not None else None

    def children(self) -> dict[str, list[RankedAsset]]:
        out: dict[str, list[RankedAsset]] = {}
        for ranked in self.candidates.values():
            owner = ranked.asset.table_id
            if owner and ranked.asset.asset_type != "table":
                out.setdefault(owner, []).append(ranked)
        return out


class RerankStage(ABC):
    """One rule of the rule pipeline (sqlglot optimizer style: one job per module)."""

    name: str = "stage"

    @abstractmethod
    def apply(self, ctx: RerankContext) -> None:
        """Update scores, reasons or membership of ``ctx.candidates`` in place."""


class Reranker(ABC):
    """Orders the candidates of a retrieval; the rule pipeline is the default implementation."""

    @abstractmethod
    def rerank(self, ctx: RerankContext) -> list[RankedAsset]:
        """Candidates best first (pruned ones removed)."""

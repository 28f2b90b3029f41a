"""Rerankers: the rule pipeline of the seed (4 stages) and a pluggable model reranker on top of it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fourengine.models import RankedAsset
from fourengine.rerank.base import RerankContext, Reranker, RerankStage
from fourengine.rerank.binding_boost import BindingBoost
from fourengine.rerank.column_pruning import ColumnPruning
from fourengine.rerank.join_simplification import JoinSimplification
from fourengine.rerank.qu_signals import QuSignals

DEFAULT_STAGES: tuple[type[RerankStage], ...] = (BindingBoost, QuSignals, ColumnPruning, JoinSimplification)


def _ordered(ctx: RerankContext) -> list[RankedAsset]:
    return sorted(ctx.candidates.values(), key=lambda r: (-r.score, r.asset.asset_id))


class RuleReranker(Reranker):
    """Runs the stages in order; fast and explainable (every move leaves a reason)."""

    def __init__(self, stages: Sequence[RerankStage] | None = None) -> None:
        self.stages = list(stages) if stages is not None else [cls() for cls in DEFAULT_STAGES]

    def rerank(self, ctx: RerankContext) -> list[RankedAsset]:
        for stage in self.stages:
            stage.apply(ctx)
        return _ordered(ctx)


class ScoreModel(Protocol):
    """A relevance model (e.g. a cross-encoder): one score in [0, 1] per (question, text) pair."""

    def score(self, question: str, texts: Sequence[str]) -> Sequence[float]: ...


class ModelReranker(Reranker):
    """Blends a model's relevance with the rule score: ``(1 - weight) * rule + weight * model``."""

    def __init__(self, model: ScoreModel, weight: float = 0.5, base: Reranker | None = None) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"model weight must be in [0, 1], got {weight}")
        self.model, self.weight, self.base = model, weight, base or RuleReranker()

    def rerank(self, ctx: RerankContext) -> list[RankedAsset]:
        ranked = self.base.rerank(ctx)
        texts = [f"{r.asset.title or r.asset.name}: {r.asset.description}" for r in ranked]
        scores = list(self.model.score(ctx.question, texts)) if ranked else []
        if len(scores) != len(ranked):
            raise ValueError(f"score model returned {len(scores)} scores for {len(ranked)} assets")
        for item, model_score in zip(ranked, scores, strict=True):
            item.score = (1 - self.weight) * item.score + self.weight * float(model_score)
            item.reasons.append(f"model score {float(model_score):.3f} (weight {self.weight})")
        return sorted(ranked, key=lambda r: (-r.score, r.asset.asset_id))

"""Reranker: four rule stages (one per module) behind a pluggable ``Reranker`` interface."""

from fourengine.rerank.base import RerankContext, Reranker, RerankStage
from fourengine.rerank.pipeline import ModelReranker, RuleReranker, ScoreModel

__all__ = ["ModelReranker", "RerankContext", "RerankStage", "Reranker", "RuleReranker", "ScoreModel"]

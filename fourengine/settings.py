"""Knobs of the four-engine retrieval, with the seed's numbers as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

BUDGET_SHARES: dict[str, float] = {
    "tables": 0.30,
    "columns": 0.25,
    "metrics": 0.15,
    "few_shots": 0.10,
    "join_rules": 0.10,
    "business_rules": 0.10,
}
FEW_SHOTS_BY_COMPLEXITY: dict[str, int] = {"simple": 2, "medium": 4, "complex": 6}


@dataclass(frozen=True)
class RetrievalSettings:
    """Engine, reranker, CRAG and budget parameters (all configurable)."""

    # engine V
    top_k: int = 20
    threshold: float = 0.65
    vector_types: tuple[str, ...] = (
        "table",
        "column",
        "metric",
        "dimension",
        "segment",
        "join",
        "term",
        "business_rule",
    )
    # engine R
    trigram_threshold: float = 0.6
    # engine D
    few_shot_threshold: float = 0.95
    few_shot_example_threshold: float = 0.5
    few_shot_limit: int = 6
    # term bindings: V term assets at or above this cosine bind like R hits
    binding_vector_threshold: float = 0.9
    # engine G
    graph_depth: int = 3
    graph_cache_s: float = 60.0
    # reranker
    bound_score: float = 0.95
    parent_table_boost: float = 0.25
    unbound_table_penalty: float = 0.10
    certified_boost: float = 0.05
    # thresholds of V, D and CRAG fitted to the embedder (fourengine.calibration) replace the seed's when stored
    calibrated: bool = True
    # CRAG
    crag_high: float = 0.8
    crag_low: float = 0.65
    corrective_threshold_factor: float = 0.6  # the corrective pass admits V hits above threshold x factor
    corrective_top_k_factor: int = 3
    # token budget
    token_budget: int = 4000
    budget_shares: dict[str, float] = field(default_factory=lambda: dict(BUDGET_SHARES))
    few_shots_by_complexity: dict[str, int] = field(default_factory=lambda: dict(FEW_SHOTS_BY_COMPLEXITY))

    def with_(self, **changes: Any) -> RetrievalSettings:
        return replace(self, **changes)

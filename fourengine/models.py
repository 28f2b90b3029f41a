"""Plain data the four engines exchange: hits, bindings, join plans and the retrieval result.

Everything is a dataclass of JSON-friendly values so the router, the answer
synthesizer and the query log can carry it without importing engine code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

TABLE_PREFIX = "table:"


@dataclass
class Asset:
    """One semantic asset (table, column, metric, dimension, segment, join, term, business_rule)."""

    asset_id: str
    asset_type: str
    name: str
    title: str = ""
    description: str = ""
    parent_id: str | None = None
    certified: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def table_id(self) -> str | None:
        """The table asset this asset belongs to (itself for a table)."""
        return table_of(self.asset_id, self.asset_type, self.parent_id)


def table_of(asset_id: str, asset_type: str, parent_id: str | None) -> str | None:
    if asset_type == "table":
        return asset_id
    if parent_id and parent_id.startswith(TABLE_PREFIX):
        return parent_id
    if asset_type in {"column", "metric", "dimension", "segment"}:
        _, _, body = asset_id.partition(":")
        owner, dot, _ = body.rpartition(".")
        return f"{TABLE_PREFIX}{owner}" if dot else None
    return None


@dataclass
class TermHit:
    """Engine R: one business term matched by one search term."""

    term_id: str
    canonical_term: str
    matched: str
    match: str  # exact | contains | trigram
    score: float
    mapped_asset_type: str | None
    mapped_asset_id: str | None
    filter_value: str | None = None
    definition: str = ""
    asset: Asset | None = None
    ambiguity: int = 1  # distinct assets the matched lexeme maps to


@dataclass
class VectorHit:
    """Engine V: one asset near the question embedding."""

    asset: Asset
    score: float


@dataclass
class FewShot:
    """Engine D: an approved question -> Cube query / SQL pair near the question."""

    id: int
    question: str
    cube_query: dict[str, Any] | None
    sql: str | None
    similarity: float
    cache_hit: bool


@dataclass
class TermBinding:
    """A business term bound to a technical asset; carried to every later step."""

    term_id: str
    canonical_term: str
    mapped_asset_type: str
    mapped_asset_id: str
    filter_value: str | None = None
    source: str = "R"  # R (exact term match) or V (term asset above the binding threshold)
    matched: str = ""  # the words of the question the term matched (R), e.g. "发票" for term "invoices"

    def to_dict(self) -> dict[str, Any]:
        out = {
            k: v
            for k, v in asdict(self).items()
            if not (k == "filter_value" and v is None) and not (k == "matched" and not v)
        }
        return out


@dataclass
class JoinEdge:
    """An edge of ``semlayer.join_edge`` between two table asset ids."""

    edge_id: str
    left: str
    right: str
    on_sql: str
    relationship: str
    fanout_risk: str


@dataclass
class JoinPlan:
    """Engine G output: the tables a query needs and the join tree connecting them."""

    tables: list[str] = field(default_factory=list)
    edges: list[JoinEdge] = field(default_factory=list)
    bridge_tables: list[str] = field(default_factory=list)  # Steiner points added to connect the terminals
    unreachable: list[str] = field(default_factory=list)
    neighbours: dict[str, int] = field(default_factory=dict)  # table -> hops from the seeds (depth <= 3)

    @property
    def risk(self) -> str:
        order = {"low": 0, "medium": 1, "high": 2}
        worst = max((order.get(e.fanout_risk, 0) for e in self.edges), default=0)
        return ["low", "medium", "high"][worst]


@dataclass
class RankedAsset:
    """An asset after reranking, with the reasons its score moved."""

    asset: Asset
    score: float
    reasons: list[str] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)  # engines that found it: R V D G
    bound: bool = False
    features: dict[str, float] = field(default_factory=dict)  # evidence per signal (v, r, child, ...)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.asset.asset_id,
            "type": self.asset.asset_type,
            "name": self.asset.name,
            "title": self.asset.title,
            "score": round(self.score, 4),
            "reasons": list(self.reasons),
            "sources": sorted(self.sources),
            "bound": self.bound,
        }


@dataclass
class CragResult:
    """The retrieval-quality grade before generation and the corrective actions taken."""

    grade: str  # high | medium | low
    top_score: float
    bindings: int
    actions: list[str] = field(default_factory=list)
    grade_after: str | None = None  # the grade after corrective retrieval (low grades only)
    # use | rerank_then_use | corrected (low, then better) | insufficient (still low: an aggregate is refused)
    decision: str = ""
    missing: list[str] = field(default_factory=list)  # question words nothing matched (the LLM's: what it lacks)
    passages: list[dict[str, Any]] = field(default_factory=list)  # wiki passages corrective retrieval used
    thresholds: dict[str, float] = field(default_factory=dict)  # the V/D/CRAG thresholds in force
    calibration: str = "seed"  # calibrated | seed (no calibration stored) | stale (fitted for another embedder)
    rule_grade: str | None = None  # the seed's rule, when the LLM graded the context (``grade`` is the LLM's)
    mode: str = "rule"  # rule | llm | fast (<why the LLM did not grade>)

    @property
    def final(self) -> str:
        """The grade generation sees: after corrective retrieval when it ran."""
        return self.grade_after or self.grade


@dataclass
class ContextBlock:
    """The rendered, budgeted context a prompt embeds."""

    text: str
    budget: int
    tokens: dict[str, int]
    allocated: dict[str, int]
    dropped: dict[str, int]
    included: list[str] = field(default_factory=list)  # asset ids (and few_shot:<id>) rendered in ``text``


@dataclass
class RetrievalResult:
    question: str
    search_terms: list[str]
    assets: list[RankedAsset]
    term_bindings: list[TermBinding]
    few_shots: list[FewShot]
    join_plan: JoinPlan
    crag: CragResult
    context: ContextBlock
    timings_ms: dict[str, float]

    def tables(self) -> list[str]:
        """Table asset ids in ranked order."""
        return [r.asset.asset_id for r in self.assets if r.asset.asset_type == "table"]

    def to_dict(self) -> dict[str, Any]:
        plan = self.join_plan
        return {
            "question": self.question,
            "search_terms": list(self.search_terms),
            "assets": [a.to_dict() for a in self.assets],
            "term_bindings": [b.to_dict() for b in self.term_bindings],
            "few_shots": [asdict(f) for f in self.few_shots],
            "join_plan": {
                "tables": plan.tables,
                "bridge_tables": plan.bridge_tables,
                "unreachable": plan.unreachable,
                "risk": plan.risk,
                "edges": [asdict(e) for e in plan.edges],
            },
            "crag": asdict(self.crag),
            "context": asdict(self.context),
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }

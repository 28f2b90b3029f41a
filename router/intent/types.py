"""Intent signals (filled by the pipeline from fourengine and sag_index) and the intent decision."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Intent = Literal["detail", "aggregate", "mixed", "unsupported", "clarify"]
INTENTS: tuple[str, ...] = ("detail", "aggregate", "mixed", "unsupported", "clarify")


@dataclass
class RowHit:
    """An entity row a name in the question resolved to (supplier 欧阳澜, product Acme T9 drill)."""

    label: str
    type: str  # customer | product | region | order | ...
    score: float = 1.0


@dataclass
class IntentSignals:
    """Warehouse evidence for a question: bound metrics/dimensions/values, entity rows, recalled tables.

    ``few_shots`` are engine D's cached examples ({question, cube_query?, sql?, intent?}); the LLM mode
    shows them as demonstrations (cube_query -> aggregate, sql only -> detail).
    """

    metric_bindings: list[str] = field(default_factory=list)  # metric asset ids, e.g. metric:invoices.net_total
    dimension_bindings: list[str] = field(default_factory=list)  # dimension asset ids
    value_bindings: list[str] = field(default_factory=list)  # bound filter values ("DE", "德国")
    row_hits: list[RowHit] = field(default_factory=list)
    table_hits: list[str] = field(default_factory=list)  # confident table hits (asset ids or names)
    table_words: list[str] = field(default_factory=list)  # the question's words that bound a table or segment
    bound_words: list[str] = field(default_factory=list)  # the question's words that bound anything in the model
    few_shots: list[dict[str, Any]] = field(default_factory=list)
    warehouse: str = ""  # what the warehouse holds, in the model's words (the LLM classifier's only domain text)

    def __post_init__(self) -> None:
        self.row_hits = [h if isinstance(h, RowHit) else RowHit(**h) for h in self.row_hits]

    def summary(self) -> str:
        """A compact, prompt-friendly description."""
        parts = [
            f"metrics: {', '.join(self.metric_bindings) or 'none'}",
            f"dimensions: {', '.join(self.dimension_bindings) or 'none'}",
            f"values: {', '.join(self.value_bindings) or 'none'}",
            f"entity rows: {', '.join(f'{h.type} {h.label}' for h in self.row_hits) or 'none'}",
            f"tables: {', '.join(self.table_hits) or 'none'}",
        ]
        return "; ".join(parts)


@dataclass
class IntentDecision:
    intent: Intent
    confidence: float
    reasons: list[str]
    mode: str = "fast"  # fast | llm
    fallback_reason: str | None = None
    scores: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

"""Warehouse evidence for the intent classifier (``router.intent.IntentSignals``) from a question's retrieval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cube_models.model import SemanticModel
from router.aggregate.measure_match import match_measure
from router.detail.entities import EntityMatch
from router.intent import IntentSignals, RowHit
from router.understanding.types import Understanding

if TYPE_CHECKING:
    from sag_index.recall import TableHit


def intent_signals(
    understanding: Understanding,
    retrieval: dict[str, Any],
    entities: list[EntityMatch],
    table_hits: list[TableHit],
    model: SemanticModel | None = None,
) -> IntentSignals:
    """Warehouse evidence for the intent classifier: bindings, entity rows, confident SAG tables, few-shots,
    and a measure the question names in other words (``measure_match``, strong matches only)."""
    main = retrieval.get("result")
    bindings = list(getattr(main, "term_bindings", []) or [])
    metrics = [b.mapped_asset_id for b in bindings if b.mapped_asset_type == "metric"]
    named = match_measure(model, understanding.normalized) if model is not None and not metrics else None
    if named is not None and named.strong:
        metrics.append(f"metric:{named.path}")
    return IntentSignals(
        metric_bindings=metrics,
        dimension_bindings=[b.mapped_asset_id for b in bindings if b.mapped_asset_type == "dimension"],
        value_bindings=[b.filter_value for b in bindings if b.filter_value],
        row_hits=[RowHit(e.label, e.entity_type, e.score) for e in entities],
        table_hits=[str(h.table) for h in table_hits[:3]],
        table_words=[b.matched or b.canonical_term for b in bindings if b.mapped_asset_type in ("table", "segment")],
        bound_words=[b.matched or b.canonical_term for b in bindings],
        few_shots=[{"question": f.question, "cube_query": f.cube_query, "sql": f.sql} for f in _budgeted_shots(main)],
        warehouse=warehouse_text(model) if model is not None else "",
    )


def _budgeted_shots(main: Any) -> list[Any]:
    """The retrieval's few-shots its token budget kept (their number follows the question's complexity)."""
    shots = list(getattr(main, "few_shots", []) or [])
    rendered = getattr(getattr(main, "context", None), "included", None)
    return shots if rendered is None else [f for f in shots if f"few_shot:{f.id}" in rendered]


def warehouse_text(model: SemanticModel, subjects: int = 12, measures: int = 8) -> str:
    """What the warehouse holds, from the model: its subjects (cube titles) and some measures."""
    cubes = [c for c in model.cubes.values() if c.title]
    named = [m.title for c in cubes for m in c.measures.values() if m.title and m.public and m.type != "count"]
    return (
        f"subjects: {', '.join(c.title for c in cubes[:subjects])}; "
        f"measures such as: {', '.join(named[:measures]) or 'counts'}"
    )

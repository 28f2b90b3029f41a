"""Guardrails on a Cube query before it runs.

1. Shape and model validity: ``cube_models.query.CubeQuery.parse`` then ``cube_models.validate.validate``
   (unknown members, measure used as dimension, bad dateRange, limit over cap; with suggestions).
2. Term-binding consistency: every bound metric must be used as a measure; a measure that is neither
   bound nor retrieved (nor in a cached approved example) is rejected.
Filter values are only ever values (Cube and the built-in compiler parameterise them).
"""

from __future__ import annotations

from typing import Any

from cube_models.errors import CubeModelsError
from cube_models.model import SemanticModel
from cube_models.query import CubeQuery
from cube_models.validate import Problem as ModelProblem
from cube_models.validate import validate
from router.aggregate.context import AggregateContext, ContextLike, member_path
from router.aggregate.members import row_count, same_column_averages
from router.aggregate.types import Problem

METRIC_TYPES = ("metric", "measure")


def _validate(query: dict[str, Any], model: SemanticModel) -> list[Problem]:
    try:
        parsed = CubeQuery.parse(query)
    except CubeModelsError as err:
        return [Problem("invalid", str(err))]
    return [_problem(p) for p in validate(parsed, model)]


def _problem(found: ModelProblem) -> Problem:
    """The validator's problem as a guardrail problem (its first suggestion)."""
    return Problem(found.code or "invalid", found.message or str(found), found.member, found.suggestion)


def allowed_measures(ctx: AggregateContext, model: SemanticModel) -> set[str]:
    """Bound and retrieved metrics, measures of cached examples, and the row count of every cube a bound
    table, segment or dimension belongs to: "how many premium accounts" counts accounts."""
    allowed = {member_path(b.mapped_asset_id) for b in ctx.bindings if b.mapped_asset_type in METRIC_TYPES}
    counted = {
        member_path(b.mapped_asset_id).removeprefix("table:").split(".", 1)[0]
        for b in ctx.bindings
        if b.mapped_asset_type in ("table", "segment", "dimension")
    }
    allowed |= {count for cube in counted if (count := row_count(model, cube))}
    allowed |= {member_path(a.id) for a in ctx.assets if a.type in METRIC_TYPES}
    for shot in ctx.few_shots:
        allowed |= set((shot.get("cube_query") or {}).get("measures", []))
    return allowed


def _averages_of(path: str, model: SemanticModel) -> set[str]:
    """The avg measures over the same column as sum measure ``path`` (its "average ..." form)."""
    member = model.find_member(path)
    if member is None or getattr(member, "kind", "") != "measure" or member.type != "sum":
        return set()
    return set(same_column_averages(model, member))


def check(
    query: dict[str, Any], context: ContextLike, model: SemanticModel, *, draft_measures: list[str] | None = None
) -> list[Problem]:
    """All problems of ``query`` against the model and the term bindings (empty list = passes).

    ``draft_measures``: every measure of the draft this query belongs to (measure groups split one
    question into several queries); a bound metric must be used by one of them.
    """
    ctx = AggregateContext.of(context)
    problems = _validate(query, model)
    measures = list(query.get("measures") or [])
    bound = [
        member_path(b.mapped_asset_id)
        for b in ctx.bindings
        if b.mapped_asset_type in METRIC_TYPES and b.filter_value is None
    ]
    used = set(draft_measures if draft_measures is not None else measures)
    for metric in dict.fromkeys(bound):
        if model.find_member(metric) is None:
            problems.append(Problem("unknown_binding", f"bound metric '{metric}' is not in the model", metric))
        elif metric not in used and not used & _averages_of(metric, model):
            problems.append(
                Problem("unused_binding", f"bound metric '{metric}' must be used as a measure", metric, metric)
            )
    allowed = allowed_measures(ctx, model)
    allowed |= {avg for m in list(allowed) for avg in _averages_of(m, model)}  # "average claim amount"
    if allowed:
        for measure in measures:
            if measure not in allowed:
                problems.append(
                    Problem(
                        "unbound_measure",
                        f"measure '{measure}' is neither bound nor retrieved "
                        f"for this question (allowed: {', '.join(sorted(allowed))})",
                        measure,
                    )
                )
    if not measures and not query.get("dimensions"):
        problems.append(Problem("no_measure", "the query has no measure"))
    return problems

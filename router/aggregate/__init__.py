"""The aggregate path: retrieval context -> Cube query (fast slot filling or a DSPy program constrained
to the retrieved members) -> guardrails -> Cube or the built-in compiler, with one corrective retry.
"""

from router.aggregate.context import AggregateContext, Binding, ContextAsset
from router.aggregate.execute import build_cube_query, run_aggregate
from router.aggregate.guardrails import check
from router.aggregate.types import AggregateError, AggregateResult, CubeQueryDraft, OutOfModelError, Problem

__all__ = [
    "AggregateContext",
    "AggregateError",
    "AggregateResult",
    "Binding",
    "ContextAsset",
    "CubeQueryDraft",
    "OutOfModelError",
    "Problem",
    "build_cube_query",
    "check",
    "run_aggregate",
]

"""The state the slot-filling passes share: the question, its retrieval context and the slots filled so far."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, Binding, member_path
from router.aggregate.members import row_count
from router.aggregate.types import CubeQueryDraft
from router.understanding.types import TimeRange, Understanding

METRIC_ASSET_TYPES = ("metric", "measure")


@dataclass
class Slots:
    """One aggregate question's slots as the passes fill them, in pass order (each reads the earlier ones')."""

    u: Understanding
    ctx: AggregateContext
    model: SemanticModel
    notes: list[str] = field(default_factory=list)  # why each slot holds what it holds
    measures: list[str] = field(default_factory=list)
    cubes: list[str] = field(default_factory=list)  # the measures' cubes
    values: dict[str, list[str]] = field(default_factory=dict)  # member -> the values bound to it
    dimensions: list[str] = field(default_factory=list)
    share: bool = False  # "share"/"占比": a post-query share of the total
    keep: dict[str, list[str]] = field(default_factory=dict)  # after the shares: only rows with these values
    filters: list[dict[str, Any]] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)
    ranges: list[TimeRange] = field(default_factory=list)  # the periods, one query round each
    groups: list[tuple[str | None, list[str]]] = field(default_factory=list)  # measures by their time dimension
    queries: list[dict[str, Any]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def draft(self) -> CubeQueryDraft:
        """The Cube query draft of the filled slots."""
        u = self.u
        kind = u.comparison.kind if u.comparison and len(self.ranges) > 1 else None
        post = ["share"] if self.share and self.dimensions else []
        return CubeQueryDraft(
            self.queries, self.labels, kind, post, self.notes, groups=len(self.groups), keep=self.keep
        )


SlotPass = Callable[[Slots], None]


def is_measure(model: SemanticModel, path: str) -> bool:
    member = model.find_member(path)
    return member is not None and getattr(member, "kind", "") == "measure"


def is_dimension(model: SemanticModel, path: str) -> bool:
    member = model.find_member(path)
    return member is not None and getattr(member, "kind", "") == "dimension"


def cube_of(binding: Binding) -> str:
    """The cube a bound table, member or segment belongs to ("table:invoices", "accounts.premium")."""
    return member_path(binding.mapped_asset_id).removeprefix("table:").split(".", 1)[0]


def count_of(binding: Binding, model: SemanticModel) -> str | None:
    """The row count of the binding's cube, when the model has one."""
    return row_count(model, cube_of(binding))

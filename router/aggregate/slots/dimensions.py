"""The dimension passes: group-by mentions, bound dimensions under a group-by cue, the rows a ranking lists,
compared values of one member."""

from __future__ import annotations

import re

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, member_path
from router.aggregate.members import language_variant, resolve_dimension
from router.aggregate.slots.base import METRIC_ASSET_TYPES, Slots, cube_of, is_dimension
from router.understanding.types import Understanding

_GROUP_CUE = re.compile(
    r"\b(?:by|per|each|every|which|across|breakdown|distribution|top|bottom|rank\w*|best|"
    r"worst)\b|按|各|每|分(?!钟)|哪|分布|排名|排行|前\s*\d|最|畅销",
    re.IGNORECASE | re.ASCII,
)


def mentioned(s: Slots) -> None:
    """dimensions: the group-by mentions resolved against the model."""
    s.dimensions = _mentioned_dimensions(s.u, s.ctx, s.model, s.cubes, s.notes)


def bound(s: Slots) -> None:
    """dimensions, with a group-by cue: the bound dimensions without a value, one per cube."""
    if _GROUP_CUE.search(s.u.normalized):
        _bound_dimensions(s.u, s.ctx, s.model, s.dimensions, s.notes)


def ranked(s: Slots) -> None:
    """dimensions, for a ranking with a group-by cue and none yet: the rows of a bound table it ranks."""
    if _GROUP_CUE.search(s.u.normalized) and not s.dimensions and s.u.ranking is not None:
        s.dimensions += _ranked_rows(s.ctx, s.model, s.cubes, s.u.language, s.notes)


def compared(s: Slots) -> None:
    """dimensions, comparing members: two or more values of one member group by that member."""
    if s.u.comparison is not None and s.u.comparison.kind == "members":
        _compared_members(s.u, s.model, s.values, s.cubes, s.dimensions, s.notes)


def _mentioned_dimensions(
    u: Understanding, ctx: AggregateContext, model: SemanticModel, cubes: list[str], notes: list[str]
) -> list[str]:
    """The dimensions the question's group-by mentions resolve to (a mention of a bound metric is none)."""
    measure_titles = {
        t for b in ctx.bindings if b.mapped_asset_type in METRIC_ASSET_TYPES for t in (b.canonical_term.lower(),)
    }
    dimensions: list[str] = []
    for mention in u.dimensions:
        if mention.concept in measure_titles:
            continue
        member = resolve_dimension(model, mention.concept, cubes, u.language)
        if member and member not in dimensions:
            dimensions.append(member)
            notes.append(f"dimension {member} for '{mention.phrase}'")
    return dimensions


def _bound_dimensions(
    u: Understanding, ctx: AggregateContext, model: SemanticModel, dimensions: list[str], notes: list[str]
) -> None:
    """With a group-by cue, the bound non-time dimensions without a value, one per cube (in the question's
    language)."""
    for b in ctx.bindings:
        member = member_path(b.mapped_asset_id)
        if (
            b.mapped_asset_type != "dimension"
            or b.filter_value is not None
            or not is_dimension(model, member)
            or getattr(model.find_member(member), "type", None) == "time"
        ):
            continue
        member = language_variant(model, member, u.language)
        if member.split(".", 1)[0] not in {d.split(".", 1)[0] for d in dimensions}:
            dimensions.append(member)
            notes.append(f"dimension {member} from the binding of '{b.canonical_term}'")


def _ranked_rows(
    ctx: AggregateContext, model: SemanticModel, cubes: list[str], language: str, notes: list[str]
) -> list[str]:
    """ "which customers spent the most": rank the rows of a bound table other than the measure's own, by
    their name dimension."""
    for b in ctx.bindings:
        cube = cube_of(b)
        if b.mapped_asset_type != "table" or cube in cubes:
            continue
        member = resolve_dimension(model, b.canonical_term, cubes, language)
        if member and member.split(".", 1)[0] == cube:
            notes.append(f"dimension {member}: the '{b.canonical_term}' the question ranks")
            return [member]
    return []


def _compared_members(
    u: Understanding,
    model: SemanticModel,
    values: dict[str, list[str]],
    cubes: list[str],
    dimensions: list[str],
    notes: list[str],
) -> None:
    """ "compare 德国 and 法国": two or more values of one member group by that member (codes by their name)."""
    for member, vals in values.items():
        cube = member.split(".", 1)[0]
        if len(vals) > 1 and cube not in {d.split(".", 1)[0] for d in dimensions}:
            shown = language_variant(model, member, u.language)  # orders.channel stays orders.channel
            if member.endswith(("_code", "_id")):  # codes are shown by name: countries.country_code -> title_zh
                label = resolve_dimension(model, cube, cubes, u.language)
                shown = label if label and label.split(".", 1)[0] == cube else member
            dimensions.append(shown)
            notes.append(f"dimension {shown}: comparing {', '.join(vals)}")

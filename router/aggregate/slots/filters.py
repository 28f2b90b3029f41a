"""The filter passes: values bound to members, a share's group, then the filters and segments of the query."""

from __future__ import annotations

import re

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, member_path
from router.aggregate.slots.base import Slots, is_dimension

_SHARE = re.compile(r"\bshare\b|\bproportion\b|\bpercentage of\b|\bmix\b|占比|比重|份额|构成", re.IGNORECASE | re.ASCII)


def values(s: Slots) -> None:
    """values: the values bound to dimension members (filters, unless a later pass groups by them)."""
    s.values = value_filters(s.ctx, s.model)


def share(s: Slots) -> None:
    """share: a share of the total is asked; with values and no group-by, grouped by the filtered member."""
    s.share = bool(_SHARE.search(s.u.normalized))
    s.keep = _share_group(s.values, s.dimensions, s.notes) if s.share and not s.dimensions and s.values else {}


def choose(s: Slots) -> None:
    """filters and segments: the bound values, the bound segments, the pipeline's entity filters."""
    s.filters = [{"member": m, "operator": "equals", "values": v} for m, v in s.values.items()]
    s.segments = [
        p
        for p in dict.fromkeys(
            member_path(b.mapped_asset_id) for b in s.ctx.bindings if b.mapped_asset_type == "segment"
        )
        if getattr(s.model.find_member(p), "kind", "") == "segment"
    ]
    if s.segments:
        s.notes.append(f"segments from bindings: {', '.join(s.segments)}")
    for f in s.ctx.filters:
        s.filters.append(
            {
                "member": f["member"],
                "operator": f.get("operator", "equals"),
                "values": [str(v) for v in f.get("values", [])],
            }
        )


def value_filters(ctx: AggregateContext, model: SemanticModel) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for b in ctx.bindings:
        if b.filter_value is None:
            continue
        member = member_path(b.mapped_asset_id)
        if is_dimension(model, member) and b.filter_value not in values.get(member, []):
            values.setdefault(member, []).append(b.filter_value)
    return values


def _share_group(values: dict[str, list[str]], dimensions: list[str], notes: list[str]) -> dict[str, list[str]]:
    """ "share of turnover from the app channel": group by the filtered member, compute every share, show its own
    (the values kept are taken out of ``values``)."""
    member = next(iter(values))
    dimensions.append(member)
    keep = {member: values.pop(member)}
    notes.append(f"share: grouped by {member} instead of filtering {', '.join(keep[member])}")
    return keep

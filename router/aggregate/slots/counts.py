"""Counts: the row count a question asks for ("how many invoices", "which supplier has the most invoices") and
the ``count_bound`` pass, a bound on a count per group ("customers with more than 5 orders", HAVING)."""

from __future__ import annotations

import re
from typing import Any

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, Binding
from router.aggregate.members import measure_cubes, resolve_dimension, row_count
from router.aggregate.slots.base import Slots, count_of, cube_of
from router.understanding.types import Understanding

_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b|多少|几个|几笔|几单|数量", re.IGNORECASE | re.ASCII)
_CJK = re.compile(r"[\u3400-\u9fff]")
_MOST = re.compile(r"\b(?:the )?(?:most|fewest)\b|最多|最少", re.IGNORECASE | re.ASCII)
COUNT_BOUND = re.compile(
    r"\b(more than|over|fewer than|less than|at least|at most)\s+(\d+)\s+([a-z]+s)\b"
    r"|(超过|多于|大于|少于|低于|至少|不少于|至多|不超过)\s*(\d+)\s*(?:笔|单|次|个|件)",
    re.IGNORECASE | re.ASCII,
)
_BOUND_OPS = {
    "more than": "gt",
    "over": "gt",
    "fewer than": "lt",
    "less than": "lt",
    "at least": "gte",
    "at most": "lte",
    "超过": "gt",
    "多于": "gt",
    "大于": "gt",
    "少于": "lt",
    "低于": "lt",
    "至少": "gte",
    "不少于": "gte",
    "至多": "lte",
    "不超过": "lte",
}
_USAGE = re.compile(
    r"\b(?:used|use|common|popular|frequent)\b|最常用|用得最多|最受欢迎|最常见", re.IGNORECASE | re.ASCII
)


def bound(s: Slots) -> None:
    """filters: a count bound per group on the row-count measure (adds the listed rows' name dimension)."""
    s.filters += _count_bound(s.u, s.ctx, s.model, s.measures, s.dimensions, s.notes)


def asked_count(
    ctx: AggregateContext, model: SemanticModel, text: str, aggregate_cue: bool, notes: list[str]
) -> str | None:
    """The row count the question asks for: the one a count bound names, the rows asked "the most" of, the
    bound table nearest a count word (or any, with an aggregate cue), a bound segment's or dimension's cube."""
    bound = COUNT_BOUND.search(text)
    if bound is not None and (count := _bounded_count(ctx, model, text, bound)):
        notes.append(f"measure {count}: the count the question bounds")
        return count
    if (most := _MOST.search(text)) and not _COUNT.search(text) and (count := _most_count(ctx, model, text, most)):
        notes.append(f"measure {count}: the rows the question asks the most of")
        return count
    counted = _COUNT.search(text) or most
    counting = counted is not None
    if aggregate_cue or counting:
        for b in _nearest_after(ctx.bindings, text, counted.end() if counted else 0):
            if b.mapped_asset_type == "table" and (count := count_of(b, model)):
                notes.append(f"measure {count}: a count asked of the bound table '{b.canonical_term}'")
                return count
    # "how many premium accounts": count the segment's cube; "which payment method is used most": count the
    # rows of the cube the bound dimension belongs to
    for kinds, asked in ((("segment",), counting), (("dimension",), counting or bool(_USAGE.search(text)))):
        for b in ctx.bindings if asked else []:
            if b.mapped_asset_type in kinds and b.filter_value is None and (count := count_of(b, model)):
                notes.append(f"measure {count}: a count of the rows '{b.canonical_term}' belongs to")
                return count
    return None


def _position(binding: Binding, lowered: str) -> int:
    """Where the binding's words are in the (lower-cased) question, -1 when they are not."""
    return lowered.find((binding.matched or binding.canonical_term).lower())


def _tables_by_position(ctx: AggregateContext, text: str) -> list[tuple[int, Binding]]:
    lowered = text.lower()
    found = [(_position(b, lowered), b) for b in ctx.bindings if b.mapped_asset_type == "table"]
    return sorted((at, b) for at, b in found if at >= 0)


def _nearest_count(
    ctx: AggregateContext, model: SemanticModel, text: str, centre: int, listed: Binding | None
) -> str | None:
    """The count of the table named nearest ``centre`` other than the ``listed`` one."""
    for _, b in sorted(
        ((abs(at - centre), b) for at, b in _tables_by_position(ctx, text) if b is not listed), key=lambda pair: pair[0]
    ):
        if count := count_of(b, model):
            return count
    return None


def _listed_table(ctx: AggregateContext, text: str, bound: re.Match[str]) -> Binding | None:
    """The rows a count bound lists: "suppliers with more than 5 invoices" (before the bound), "超过5张发票的
    供应商" (the noun after 的, last)."""
    tables = _tables_by_position(ctx, text)
    if bound.group(1):
        before = [b for at, b in tables if at < bound.start()]
        return before[0] if before else None
    after = [b for at, b in tables if at >= bound.end()]
    return after[-1] if after else (tables[0][1] if tables else None)


def _most_count(ctx: AggregateContext, model: SemanticModel, text: str, most: re.Match[str]) -> str | None:
    """ "which supplier has the most invoices" / "哪些供应商的发票最多": with two tables named, the first one is
    ranked and the one nearest the superlative is counted."""
    tables = _tables_by_position(ctx, text)
    if len(tables) < 2:
        return None
    after = [b for at, b in tables if at >= most.end()]
    # "发票最多的3个供应商": in Chinese the ranked rows follow the superlative; otherwise they come first
    listed = after[-1] if after and _CJK.search(text) else tables[0][1]
    return _nearest_count(ctx, model, text, most.start(), listed)


def _bounded_count(ctx: AggregateContext, model: SemanticModel, text: str, bound: re.Match[str]) -> str | None:
    """The count a bound names: the table nearest the bound that is not the listed one."""
    centre = bound.start(3) if bound.group(3) else bound.start()
    return _nearest_count(ctx, model, text, centre, _listed_table(ctx, text, bound))


def _count_bound(
    u: Understanding,
    ctx: AggregateContext,
    model: SemanticModel,
    measures: list[str],
    dimensions: list[str],
    notes: list[str],
) -> list[dict[str, Any]]:
    """ "customers with more than 5 orders": the number of orders per customer, kept where it passes the bound
    (grouped by the name of the listed rows; adds that dimension when missing)."""
    bound = COUNT_BOUND.search(u.normalized)
    if bound is None or not measures or measures[0] != row_count(model, measures[0].split(".", 1)[0]):
        return []
    word, number = (bound.group(1), bound.group(2)) if bound.group(1) else (bound.group(4), bound.group(5))
    listed = _listed_table(ctx, u.normalized, bound)
    if listed is not None and not any(d.split(".", 1)[0] == cube_of(listed) for d in dimensions):
        member = resolve_dimension(model, listed.canonical_term, measure_cubes(measures), u.language)
        if member:
            dimensions.append(member)
    notes.append(f"{measures[0]} {_BOUND_OPS[word.lower()]} {number} per group")
    return [{"member": measures[0], "operator": _BOUND_OPS[word.lower()], "values": [number]}]


def _nearest_after(bindings: list[Binding], text: str, start: int) -> list[Binding]:
    """Bindings by where their term appears: right after ``start`` first ("top 10 customers by number of
    orders" counts orders, not customers), then the others in question order."""
    lowered = text.lower()

    def position(b: Binding) -> tuple[bool, int]:
        at = _position(b, lowered)
        return (at < start, at if at >= 0 else len(lowered))

    return sorted(bindings, key=position)

"""Fast (deterministic) slot filling: understanding + retrieval context -> Cube query draft.

- measures: metric bindings in order (``metric:invoices.net_total`` -> ``invoices.net_total``); without any,
  the best retrieved metric asset, then the measures of a cached few-shot query;
- measures, without a bound metric: "how many invoices"/"多少张发票" (or "daily invoices": a grain, ranking,
  comparison or group-by) counts the bound table (its row-count measure, ``members.row_count``);
- dimensions: group-by mentions resolved against the model (``members.resolve_dimension``) plus
  dimension bindings without a value when the question has a group-by cue (by/per/which/top/按/各/哪/最);
  two or more bound values of one member in a comparison
  ("compare 德国 and 法国") also group by that member;
- segments: segment bindings ("paid invoices" -> ``invoices.paid``);
- filters: value bindings (``德国`` -> ``countries.country_code equals DE``) and entity filters from the
  pipeline, values passed as values only;
- time: each range -> ``timeDimensions`` with ``dateRange`` on ``model.time_dimension_for(measure)``;
  granularity from "by month"/"按月"/"trend"; YoY/PoP/versus comparisons -> one query per range;
- order/limit: top-N -> measure desc + limit (and a ``set`` filter on the measure, so groups without a
  value cannot take the top places); "lowest" -> asc; a time series is ordered by time;
- derived: "share"/"占比" adds a post-query share of the total; with a value filter and no group-by
  ("share of turnover from the app channel") the filtered member becomes the group-by so every share is shown.
"""

from __future__ import annotations

import re
from typing import Any

from router.aggregate.context import AggregateContext, member_path
from router.aggregate.measure_match import match_measure, unit_twin
from router.aggregate.members import (
    language_variant,
    measure_cubes,
    resolve_dimension,
    row_count,
    same_column_averages,
)
from router.aggregate.types import AggregateError, CubeQueryDraft, OutOfModelError
from router.intent.coverage import unbound_terms
from router.understanding.negation import negation, refusal
from router.understanding.types import TimeRange, Understanding

METRIC_ASSET_TYPES = ("metric", "measure")
MIN_ASSET_SCORE = 0.5
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b|多少|几个|几笔|几单|数量", re.IGNORECASE | re.ASCII)
_CJK = re.compile(r"[\u3400-\u9fff]")
_MOST = re.compile(r"\b(?:the )?(?:most|fewest)\b|最多|最少", re.IGNORECASE | re.ASCII)
# "suppliers with more than 5 invoices", "超过5张发票的供应商": a bound on a count per group (HAVING)
COUNT_BOUND = re.compile(
    r"\b(more than|over|fewer than|less than|at least|at most)\s+(\d+)\s+([a-z]+s)\b"
    r"|(超过|多于|大于|少于|低于|至少|不少于|至多|不超过)\s*(\d+)\s*(?:笔|单|次|个|件)", re.IGNORECASE | re.ASCII)
_BOUND_OPS = {"more than": "gt", "over": "gt", "fewer than": "lt", "less than": "lt", "at least": "gte",
              "at most": "lte", "超过": "gt", "多于": "gt", "大于": "gt", "少于": "lt", "低于": "lt", "至少": "gte",
              "不少于": "gte", "至多": "lte", "不超过": "lte"}
_USAGE = re.compile(r"\b(?:used|use|common|popular|frequent)\b|最常用|用得最多|最受欢迎|最常见",
                    re.IGNORECASE | re.ASCII)
_GROUP_CUE = re.compile(r"\b(?:by|per|each|every|which|across|breakdown|distribution|top|bottom|rank\w*|best|"
                        r"worst)\b|按|各|每|分(?!钟)|哪|分布|排名|排行|前\s*\d|最|畅销", re.IGNORECASE | re.ASCII)
_AVERAGE = re.compile(r"\b(?:average|avg|mean)\b|平均|均值", re.IGNORECASE | re.ASCII)
_SHARE = re.compile(r"\bshare\b|\bproportion\b|\bpercentage of\b|\bmix\b|占比|比重|份额|构成", re.IGNORECASE | re.ASCII)


def _measure(model: Any, path: str) -> bool:
    member = model.find_member(path)
    return member is not None and getattr(member, "kind", "") == "measure"


def _dimension(model: Any, path: str) -> bool:
    member = model.find_member(path)
    return member is not None and getattr(member, "kind", "") == "dimension"


def choose_measures(ctx: AggregateContext, model: Any, notes: list[str], text: str = "",
                    aggregate_cue: bool = False) -> list[str]:
    """The query's measures, the first found of: bound metrics, a measure the question names by its words,
    a count the question asks for, a measure it names more loosely, a retrieved metric or cached example."""
    measures = [member_path(b.mapped_asset_id) for b in ctx.bindings
                if b.mapped_asset_type in METRIC_ASSET_TYPES and b.filter_value is None]
    measures = [unit_twin(model, m, text) for m in dict.fromkeys(measures) if _measure(model, m)]
    if measures:
        notes.append(f"measures from metric bindings: {', '.join(measures)}")
        return measures
    named = match_measure(model, text)
    if named is not None and named.strong:
        notes.append(f"measure {named.path}: its name's words {' '.join(named.words)!r} are in the question")
        return [unit_twin(model, named.path, text)]
    if count := _asked_count(ctx, model, text, aggregate_cue, notes):
        return [count]
    if named is not None:
        notes.append(f"measure {named.path}: the question names {' '.join(named.words)!r}")
        return [unit_twin(model, named.path, text)]
    if retrieved := _retrieved_measures(ctx, model, notes):
        return retrieved
    raise OutOfModelError("no measure found for this question: name one of the model's metrics")


def _asked_count(ctx: AggregateContext, model: Any, text: str, aggregate_cue: bool, notes: list[str]) -> str | None:
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
            if b.mapped_asset_type == "table" and (count := _count_of(b, model)):
                notes.append(f"measure {count}: a count asked of the bound table '{b.canonical_term}'")
                return count
    # "how many premium accounts": count the segment's cube; "which payment method is used most": count the
    # rows of the cube the bound dimension belongs to
    for kinds, asked in ((("segment",), counting), (("dimension",), counting or bool(_USAGE.search(text)))):
        for b in ctx.bindings if asked else []:
            if b.mapped_asset_type in kinds and b.filter_value is None and (count := _count_of(b, model)):
                notes.append(f"measure {count}: a count of the rows '{b.canonical_term}' belongs to")
                return count
    return None


def _retrieved_measures(ctx: AggregateContext, model: Any, notes: list[str]) -> list[str] | None:
    """The best retrieved metric asset of the model, else the measures of the first cached example."""
    ranked = sorted((a for a in ctx.assets if a.type in METRIC_ASSET_TYPES and a.score >= MIN_ASSET_SCORE),
                    key=lambda a: a.score, reverse=True)
    for asset in ranked:
        if _measure(model, member_path(asset.id)):
            notes.append(f"measure from the top retrieved metric {asset.id} ({asset.score:.2f})")
            return [member_path(asset.id)]
    for shot in ctx.few_shots:
        shot_measures = [m for m in (shot.get("cube_query") or {}).get("measures", []) if _measure(model, m)]
        if shot_measures:
            notes.append(f"measures from the cached example {shot.get('question')!r}")
            return shot_measures
    return None


def _refuse_guessed_measure(u: Understanding, ctx: AggregateContext, model: Any) -> None:
    """A measure the question does not name (a count of a bound table, a retrieved asset) answers only a
    question whose every word binds: "NPS by region" must not become the number of regions."""
    named = any(b.mapped_asset_type in METRIC_ASSET_TYPES for b in ctx.bindings) or ctx.few_shots or (
        (match := match_measure(model, u.normalized)) is not None and match.strong)
    if named:
        return
    known = [b.matched or b.canonical_term for b in ctx.bindings] + [d.phrase for d in u.dimensions]
    known += [str(v) for f in ctx.filters for v in f.get("values", [])]
    if unknown := unbound_terms(u, known):
        raise OutOfModelError(f"nothing in the model is called {', '.join(repr(w) for w in unknown[:3])}: "
                             "name one of its measures")


def _cube_of(binding: Any) -> str:
    """The cube a bound table, member or segment belongs to ("table:invoices", "accounts.premium")."""
    return member_path(binding.mapped_asset_id).removeprefix("table:").split(".", 1)[0]


def _count_of(binding: Any, model: Any) -> str | None:
    """The row count of the binding's cube, when the model has one."""
    return row_count(model, _cube_of(binding))


def _position(binding: Any, lowered: str) -> int:
    """Where the binding's words are in the (lower-cased) question, -1 when they are not."""
    return lowered.find((binding.matched or binding.canonical_term).lower())


def _tables_by_position(ctx: AggregateContext, text: str) -> list[tuple[int, Any]]:
    lowered = text.lower()
    found = [(_position(b, lowered), b) for b in ctx.bindings if b.mapped_asset_type == "table"]
    return sorted((at, b) for at, b in found if at >= 0)


def _nearest_count(ctx: AggregateContext, model: Any, text: str, centre: int, listed: Any) -> str | None:
    """The count of the table named nearest ``centre`` other than the ``listed`` one."""
    for _, b in sorted(((abs(at - centre), b) for at, b in _tables_by_position(ctx, text) if b is not listed),
                       key=lambda pair: pair[0]):
        if count := _count_of(b, model):
            return count
    return None


def _listed_table(ctx: AggregateContext, text: str, bound: re.Match[str]) -> Any | None:
    """The rows a count bound lists: "suppliers with more than 5 invoices" (before the bound), "超过5张发票的
    供应商" (the noun after 的, last)."""
    tables = _tables_by_position(ctx, text)
    if bound.group(1):
        before = [b for at, b in tables if at < bound.start()]
        return before[0] if before else None
    after = [b for at, b in tables if at >= bound.end()]
    return after[-1] if after else (tables[0][1] if tables else None)


def _most_count(ctx: AggregateContext, model: Any, text: str, most: re.Match[str]) -> str | None:
    """"which supplier has the most invoices" / "哪些供应商的发票最多": with two tables named, the first one is
    ranked and the one nearest the superlative is counted."""
    tables = _tables_by_position(ctx, text)
    if len(tables) < 2:
        return None
    after = [b for at, b in tables if at >= most.end()]
    # "发票最多的3个供应商": in Chinese the ranked rows follow the superlative; otherwise they come first
    listed = after[-1] if after and _CJK.search(text) else tables[0][1]
    return _nearest_count(ctx, model, text, most.start(), listed)


def _bounded_count(ctx: AggregateContext, model: Any, text: str, bound: re.Match[str]) -> str | None:
    """The count a bound names: the table nearest the bound that is not the listed one."""
    centre = bound.start(3) if bound.group(3) else bound.start()
    return _nearest_count(ctx, model, text, centre, _listed_table(ctx, text, bound))


def _count_bound(u: Understanding, ctx: AggregateContext, model: Any, measures: list[str], dimensions: list[str],
                 notes: list[str]) -> list[dict[str, Any]]:
    """"customers with more than 5 orders": the number of orders per customer, kept where it passes the bound
    (grouped by the name of the listed rows; adds that dimension when missing)."""
    bound = COUNT_BOUND.search(u.normalized)
    if bound is None or not measures or measures[0] != row_count(model, measures[0].split(".", 1)[0]):
        return []
    word, number = (bound.group(1), bound.group(2)) if bound.group(1) else (bound.group(4), bound.group(5))
    listed = _listed_table(ctx, u.normalized, bound)
    if listed is not None and not any(d.split(".", 1)[0] == _cube_of(listed) for d in dimensions):
        member = resolve_dimension(model, listed.canonical_term, measure_cubes(measures), u.language)
        if member:
            dimensions.append(member)
    notes.append(f"{measures[0]} {_BOUND_OPS[word.lower()]} {number} per group")
    return [{"member": measures[0], "operator": _BOUND_OPS[word.lower()], "values": [number]}]


def _ranked_rows(ctx: AggregateContext, model: Any, cubes: list[str], language: str, notes: list[str]) -> list[str]:
    """"which customers spent the most": rank the rows of a bound table other than the measure's own, by
    their name dimension."""
    for b in ctx.bindings:
        cube = _cube_of(b)
        if b.mapped_asset_type != "table" or cube in cubes:
            continue
        member = resolve_dimension(model, b.canonical_term, cubes, language)
        if member and member.split(".", 1)[0] == cube:
            notes.append(f"dimension {member}: the '{b.canonical_term}' the question ranks")
            return [member]
    return []


def _nearest_after(bindings: list[Any], text: str, start: int) -> list[Any]:
    """Bindings by where their term appears: right after ``start`` first ("top 10 customers by number of
    orders" counts orders, not customers), then the others in question order."""
    lowered = text.lower()

    def position(b: Any) -> tuple[bool, int]:
        at = _position(b, lowered)
        return (at < start, at if at >= 0 else len(lowered))

    return sorted(bindings, key=position)


def averaged(measures: list[str], model: Any, text: str, notes: list[str]) -> list[str]:
    """"average claim amount": a sum measure becomes its cube's average of the same column; without one
    the question is refused rather than answered with the total."""
    found = [model.find_member(m) for m in measures]
    if not _AVERAGE.search(text) or any(m.type in ("avg", "number") for m in found):
        return measures
    out = []
    for member in found:
        if member.type != "sum" and not member.type.startswith("count"):  # count, count_distinct...
            out.append(member.path)
            continue
        twin = next(iter(same_column_averages(model, member)), None)
        if twin is None:
            raise AggregateError(f"the model has no average of {member.title or member.path} ({member.path} is a "
                                 f"{member.type}): ask for the total, or add an avg measure to the {member.cube} cube")
        notes.append(f"average asked: {member.path} -> {twin}")
        out.append(twin)
    return out


def _value_filters(ctx: AggregateContext, model: Any) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for b in ctx.bindings:
        if b.filter_value is None:
            continue
        member = member_path(b.mapped_asset_id)
        if _dimension(model, member) and b.filter_value not in values.get(member, []):
            values.setdefault(member, []).append(b.filter_value)
    return values


def fill_slots(u: Understanding, context: Any, model: Any) -> CubeQueryDraft:
    """The Cube queries of an aggregate question, filled slot by slot (see the module docstring)."""
    if phrase := negation(u.normalized):
        raise AggregateError(refusal(phrase))
    ctx = AggregateContext.of(context)
    notes: list[str] = []
    cue = bool(u.granularity or u.ranking or u.comparison or u.dimensions)
    measures = averaged(choose_measures(ctx, model, notes, u.normalized, aggregate_cue=cue), model, u.normalized,
                        notes)
    _refuse_guessed_measure(u, ctx, model)
    cubes = measure_cubes(measures)
    values = _value_filters(ctx, model)
    dimensions = _mentioned_dimensions(u, ctx, model, cubes, notes)
    group_cue = bool(_GROUP_CUE.search(u.normalized))
    if group_cue:
        _bound_dimensions(u, ctx, model, dimensions, notes)
    if group_cue and not dimensions and u.ranking is not None:
        dimensions += _ranked_rows(ctx, model, cubes, u.language, notes)
    if u.comparison is not None and u.comparison.kind == "members":
        _compared_members(u, model, values, cubes, dimensions, notes)
    share = bool(_SHARE.search(u.normalized))
    keep = _share_group(values, dimensions, notes) if share and not dimensions and values else {}
    filters: list[dict[str, Any]] = [{"member": m, "operator": "equals", "values": v} for m, v in values.items()]
    segments = [p for p in dict.fromkeys(member_path(b.mapped_asset_id) for b in ctx.bindings
                                         if b.mapped_asset_type == "segment")
                if getattr(model.find_member(p), "kind", "") == "segment"]
    if segments:
        notes.append(f"segments from bindings: {', '.join(segments)}")
    for f in ctx.filters:
        filters.append({"member": f["member"], "operator": f.get("operator", "equals"),
                        "values": [str(v) for v in f.get("values", [])]})
    filters += _count_bound(u, ctx, model, measures, dimensions, notes)

    ranges = list(u.comparison.ranges) if u.comparison and len(u.comparison.ranges) > 1 else u.time_ranges[:1]
    groups = measure_groups(measures, model)
    if len(groups) > 1:
        notes.append("one query per time dimension, rows merged: "
                     + "; ".join(f"{', '.join(ms)} on {td}" for td, ms in groups))
    group_queries = [_group_query(u, td, ms, index == 0, dimensions, filters, segments, notes)
                     for index, (td, ms) in enumerate(groups)]
    queries, labels = _dated_queries(u, ranges, groups, group_queries, notes)
    for time_dim, _ in groups:
        if time_dim and ranges:
            notes.append(f"time on {time_dim}: " + "; ".join(f"{r.label} = {r.start}..{r.end}" for r in ranges))
    kind = u.comparison.kind if u.comparison and len(ranges) > 1 else None
    post = ["share"] if share and dimensions else []
    return CubeQueryDraft(queries, labels, kind, post, notes, groups=len(groups), keep=keep)


def _mentioned_dimensions(u: Understanding, ctx: AggregateContext, model: Any, cubes: list[str],
                          notes: list[str]) -> list[str]:
    """The dimensions the question's group-by mentions resolve to (a mention of a bound metric is none)."""
    measure_titles = {t for b in ctx.bindings if b.mapped_asset_type in METRIC_ASSET_TYPES
                      for t in (b.canonical_term.lower(),)}
    dimensions: list[str] = []
    for mention in u.dimensions:
        if mention.concept in measure_titles:
            continue
        member = resolve_dimension(model, mention.concept, cubes, u.language)
        if member and member not in dimensions:
            dimensions.append(member)
            notes.append(f"dimension {member} for '{mention.phrase}'")
    return dimensions


def _bound_dimensions(u: Understanding, ctx: AggregateContext, model: Any, dimensions: list[str],
                      notes: list[str]) -> None:
    """With a group-by cue, the bound non-time dimensions without a value, one per cube (in the question's
    language)."""
    for b in ctx.bindings:
        member = member_path(b.mapped_asset_id)
        if b.mapped_asset_type != "dimension" or b.filter_value is not None or not _dimension(model, member) \
                or model.find_member(member).type == "time":
            continue
        member = language_variant(model, member, u.language)
        if member.split(".", 1)[0] not in {d.split(".", 1)[0] for d in dimensions}:
            dimensions.append(member)
            notes.append(f"dimension {member} from the binding of '{b.canonical_term}'")


def _compared_members(u: Understanding, model: Any, values: dict[str, list[str]], cubes: list[str],
                      dimensions: list[str], notes: list[str]) -> None:
    """"compare 德国 and 法国": two or more values of one member group by that member (codes by their name)."""
    for member, vals in values.items():
        cube = member.split(".", 1)[0]
        if len(vals) > 1 and cube not in {d.split(".", 1)[0] for d in dimensions}:
            shown = language_variant(model, member, u.language)  # orders.channel stays orders.channel
            if member.endswith(("_code", "_id")):  # codes are shown by name: countries.country_code -> title_zh
                label = resolve_dimension(model, cube, cubes, u.language)
                shown = label if label and label.split(".", 1)[0] == cube else member
            dimensions.append(shown)
            notes.append(f"dimension {shown}: comparing {', '.join(vals)}")


def _share_group(values: dict[str, list[str]], dimensions: list[str], notes: list[str]) -> dict[str, list[str]]:
    """"share of turnover from the app channel": group by the filtered member, compute every share, show its own
    (the values kept are taken out of ``values``)."""
    member = next(iter(values))
    dimensions.append(member)
    keep = {member: values.pop(member)}
    notes.append(f"share: grouped by {member} instead of filtering {', '.join(keep[member])}")
    return keep


def _dated_queries(u: Understanding, ranges: list[TimeRange], groups: list[tuple[str | None, list[str]]],
                   group_queries: list[dict[str, Any]], notes: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """One query per (range, measure group), dated on the group's time dimension; with the ranges' labels
    when there are several."""
    queries: list[dict[str, Any]] = []
    labels: list[str] = []
    periods: list[TimeRange | None] = [*ranges] or [None]  # one query round without a range
    for time_range in periods:
        for (time_dim, group), base in zip(groups, group_queries, strict=True):
            query = {k: (list(v) if isinstance(v, list) else v) for k, v in base.items()}
            if time_dim and (time_range is not None or u.granularity):
                td: dict[str, Any] = {"dimension": time_dim}
                if u.granularity:
                    td["granularity"] = u.granularity
                if time_range is not None:
                    td["dateRange"] = time_range.date_range()
                query["timeDimensions"] = [td]
            elif time_range is not None:
                notes.append(f"time range '{time_range.label}' ignored: {group[0]} has no time dimension")
            queries.append(query)
            labels.append(time_range.label if time_range is not None and len(ranges) > 1 else "")
    return queries, labels


def measure_groups(measures: list[str], model: Any) -> list[tuple[str | None, list[str]]]:
    """Measures grouped by the time dimension that dates them (turnover by issued_at, credit notes by credited_at,
    new accounts by opened_on): each group is one query, so every measure is dated by its own time."""
    groups: dict[str | None, list[str]] = {}
    for measure in measures:
        groups.setdefault(model.time_dimension_for(measure), []).append(measure)
    return list(groups.items())


def _group_query(u: Understanding, time_dim: str | None, measures: list[str], leading: bool, dimensions: list[str],
                 filters: list[dict[str, Any]], segments: list[str], notes: list[str]) -> dict[str, Any]:
    """The query of one measure group (without time); the leading group carries the ranking limit."""
    granularity = u.granularity
    if granularity and time_dim is None:
        notes.append(f"granularity '{granularity}' ignored: {measures[0]} has no time dimension")
    base: dict[str, Any] = {"measures": list(measures)}
    if dimensions:
        base["dimensions"] = list(dimensions)
    if filters:
        base["filters"] = [dict(f) for f in filters]
    if segments:
        base["segments"] = list(segments)
    order: list[list[str]] = []
    if u.ranking and (dimensions or granularity):
        order.append([measures[0], u.ranking.direction])
        if u.ranking.limit and leading:
            base["limit"] = u.ranking.limit
            # a ranking must not be led by groups without a value (PostgreSQL sorts NULLs first in DESC)
            base.setdefault("filters", []).append({"member": measures[0], "operator": "set"})
        if leading:
            notes.append(f"order by {measures[0]} {u.ranking.direction}"
                         + (f", limit {u.ranking.limit}" if u.ranking.limit else ""))
    elif granularity and time_dim:
        order.append([time_dim, "asc"])
    elif dimensions:
        order.append([measures[0], "desc"])
    if order:
        base["order"] = order
    return base

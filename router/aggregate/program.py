"""LLM mode: a DSPy program writing the Cube query, constrained to the retrieved members.

The prompt lists only the members the retrieval found (bound metrics first, their time dimensions,
bound dimensions, retrieved metric/dimension/segment assets) and the resolved time ranges; the output
must be a JSON object using only those members, or it is rejected and asked again once with the error.
Comparisons reuse the query for each compared period (dateRange replaced).
"""

from __future__ import annotations

import json
import re
from typing import Any

import dspy

from router.aggregate.context import AggregateContext, member_path
from router.aggregate.guardrails import check
from router.aggregate.types import AggregateError, CubeQueryDraft, Problem
from router.understanding.types import Understanding

MAX_EXAMPLES = 4
MAX_CONTEXT_CHARS = 6000  # the fourengine context block is already token-budgeted; this is a safety cap


class WriteCubeQuery(dspy.Signature):
    """Write one Cube REST query (JSON object with measures, dimensions, filters, timeDimensions with
    dateRange [start, end] and granularity, order, limit) that answers the question. Use ONLY the listed
    members; put every bound metric in measures; put filter values from the bindings in filters; use the
    resolved date ranges exactly."""

    question: str = dspy.InputField()
    members: str = dspy.InputField(desc="allowed members, one per line: name (type): title")
    bindings: str = dspy.InputField(desc="business terms bound to members, with filter values")
    time_ranges: str = dspy.InputField(desc="date ranges resolved from the question, and granularity")
    examples: str = dspy.InputField(desc="approved question -> Cube query examples")
    context: str = dspy.InputField(desc="retrieved schema context: metrics, dimensions, join and business rules")
    feedback: str = dspy.InputField(desc="problems of the previous attempt to fix, or 'none'")
    cube_query: str = dspy.OutputField(desc="the Cube query as one JSON object")


def allowed_members(ctx: AggregateContext, model: Any) -> list[str]:
    """Members the LLM may use: bound ones, their time dimensions, and retrieved member assets."""
    paths = [member_path(b.mapped_asset_id) for b in ctx.bindings]
    paths += [member_path(a.id) for a in sorted(ctx.assets, key=lambda a: -a.score)
              if a.type in ("metric", "measure", "dimension", "segment")]
    for shot in ctx.few_shots:
        query = shot.get("cube_query") or {}
        paths += [*query.get("measures", []), *query.get("dimensions", [])]
    paths += [f["member"] for f in ctx.filters]  # the rows the question names
    members = [p for p in dict.fromkeys(paths) if model.find_member(p) is not None]
    times = [model.time_dimension_for(m) for m in members if getattr(model.find_member(m), "kind", "") == "measure"]
    return list(dict.fromkeys([*members, *(t for t in times if t)]))


def _describe(model: Any, path: str) -> str:
    member = model.find_member(path)
    kind = getattr(member, "kind", "")
    kind = "time dimension" if getattr(member, "type", "") == "time" else kind
    title = getattr(member, "title", "") or ""
    description = getattr(member, "description", "") or ""
    return f"{path} ({kind}): {title} {description}".strip()


def _time_text(u: Understanding) -> str:
    parts = [f"{r.label}: {r.start.isoformat()} .. {r.end.isoformat()}" for r in u.time_ranges]
    if u.granularity:
        parts.append(f"granularity: {u.granularity}")
    if u.ranking:
        parts.append(f"order: {u.ranking.direction}" + (f", limit {u.ranking.limit}" if u.ranking.limit else ""))
    return "; ".join(parts) or "none (all time)"


def parse_json_object(text: str) -> dict[str, Any]:
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError(f"no JSON object in the reply: {text[:120]!r}")
    value = json.loads(text[start:end + 1])
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    return value


def _outside(query: dict[str, Any], allowed: set[str]) -> list[Problem]:
    from cube_models.query import CubeQuery

    members = CubeQuery.parse(query).members()
    return [Problem("not_retrieved", f"member '{m}' is not among the retrieved members", m)
            for m in members if m not in allowed]


def expand_periods(query: dict[str, Any], u: Understanding) -> tuple[list[dict[str, Any]], list[str]]:
    """One query per compared period (the dateRange of the first time dimension replaced)."""
    comparison = u.comparison
    if comparison is None or len(comparison.ranges) < 2 or not query.get("timeDimensions"):
        return [query], [""]
    queries = []
    for time_range in comparison.ranges:
        copy = json.loads(json.dumps(query))
        copy["timeDimensions"][0]["dateRange"] = time_range.date_range()
        queries.append(copy)
    return queries, [r.label for r in comparison.ranges]


def write_query(u: Understanding, context: Any, model: Any, feedback: str = "none") -> CubeQueryDraft:
    """Ask the LLM once (plus one corrective re-ask) for a valid query; raises on a second failure."""
    ctx = AggregateContext.of(context)
    members = allowed_members(ctx, model)
    if not members:
        raise AggregateError("no retrieved members to build a Cube query from")
    predict = dspy.Predict(WriteCubeQuery)
    inputs = {
        "question": u.normalized,
        "members": "\n".join(_describe(model, m) for m in members),
        "bindings": "\n".join([*(f"{b.canonical_term} -> {member_path(b.mapped_asset_id)}"
                                  + (f" = {b.filter_value!r}" if b.filter_value is not None else "")
                                  for b in ctx.bindings),
                                *(f"named rows -> {f['member']} in {f['values']!r}" for f in ctx.filters)]) or "none",
        "time_ranges": _time_text(u),
        "examples": "\n".join(f"{s.get('question')} -> {json.dumps(s.get('cube_query'), ensure_ascii=False)}"
                              for s in ctx.few_shots[:MAX_EXAMPLES] if s.get("cube_query")) or "none",
        "context": ctx.context_text[:MAX_CONTEXT_CHARS] or "none",
    }
    notes: list[str] = []
    for attempt in range(2):
        reply = predict(**inputs, feedback=feedback).cube_query
        try:
            query = parse_json_object(reply)
            problems = _outside(query, set(members)) + check(query, ctx, model)
        except Exception as err:
            problems = [Problem("invalid", f"{type(err).__name__}: {err}")]
        if not problems:
            named = [f for f in ctx.filters if f not in query.get("filters", [])]
            if named:  # the rows the question names always filter the answer, whatever the LLM wrote
                query["filters"] = [*query.get("filters", []), *named]
                notes.append("filters of the named rows added: " + ", ".join(f["member"] for f in named))
            queries, labels = expand_periods(query, u)
            kind = u.comparison.kind if len(queries) > 1 and u.comparison else None
            return CubeQueryDraft(queries, labels, kind, notes=notes, mode="llm")
        feedback = "; ".join(p.message for p in problems)
        notes.append(f"attempt {attempt + 1} rejected: {feedback}")
    raise AggregateError(f"the LLM query was invalid twice: {feedback}")

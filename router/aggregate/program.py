"""LLM mode: a DSPy program writing the Cube query, constrained to the retrieved members.

The prompt lists only the members the question names (resolved by the rules, bound, named rows, group-bys)
and those the token budget rendered (retrieved metric/dimension/segment assets, the budgeted few-shots'),
with their cubes' row counts and their measures' time dimensions, the resolved time ranges and the
budgeted schema context. The reply is a typed object (``CubeQueryReply``, validated by DSPy/pydantic);
it is rejected, and asked again once with the reasons, when it does not parse, uses a member outside
that list, fails the guardrails or leaves out a filter of the rows the question names.
Comparisons reuse the query for each compared period (dateRange replaced).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, ContextLike, member_path
from router.aggregate.derive import shares_of_total
from router.aggregate.guardrails import check
from router.aggregate.members import resolve_dimension, row_count
from router.aggregate.types import AggregateError, CubeQueryDraft, Problem
from router.understanding.types import Understanding

MAX_EXAMPLES = 4
MAX_MEMBERS = 60
MAX_CONTEXT_CHARS = 6000  # the fourengine context block is already token-budgeted; this is a safety cap
Operator = Literal[
    "equals",
    "notEquals",
    "contains",
    "notContains",
    "startsWith",
    "endsWith",
    "gt",
    "gte",
    "lt",
    "lte",
    "set",
    "notSet",
    "inDateRange",
    "notInDateRange",
    "beforeDate",
    "afterDate",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FilterReply(_Strict):
    member: str
    operator: Operator
    values: list[str | int | float] = Field(default_factory=list)


class TimeDimensionReply(_Strict):
    dimension: str
    dateRange: list[str] | None = Field(default=None, description="[start, end] as YYYY-MM-DD")
    granularity: Literal["day", "week", "month", "quarter", "year"] | None = None


class CubeQueryReply(_Strict):
    """A Cube REST query."""

    measures: list[str] = Field(default_factory=list)
    dimensions: list[str] = Field(default_factory=list)
    segments: list[str] = Field(default_factory=list)
    filters: list[FilterReply] = Field(default_factory=list)
    timeDimensions: list[TimeDimensionReply] = Field(default_factory=list)
    order: list[tuple[str, Literal["asc", "desc"]]] = Field(default_factory=list, description="[member, direction]")
    limit: int | None = None
    share: Literal["none", "of_total", "of_whole"] = Field(
        default="none",
        description="of_total: each row's share of the column total; of_whole: the share of the "
        "part the 'part' members (segments, filter members) pick out of the same query without them",
    )
    part: list[str] = Field(default_factory=list, description="of_whole: the members that pick the part")
    keep: dict[str, list[str]] = Field(
        default_factory=dict, description="of_total: the rows to show after the shares, by dimension values"
    )

    def whole(self, query: dict[str, Any]) -> dict[str, Any]:
        """of_whole: the query without the segments and filters of the ``part`` members."""
        whole = {k: v for k, v in query.items() if k not in ("filters", "segments")}
        filters = [f for f in query.get("filters", []) if f["member"] not in self.part]
        segments = [m for m in query.get("segments", []) if m not in self.part]
        return {**whole, **({"filters": filters} if filters else {}), **({"segments": segments} if segments else {})}

    def to_query(self) -> dict[str, Any]:
        """The Cube query JSON (empty parts left out, filter values as strings)."""
        out: dict[str, Any] = {
            k: v
            for k, v in (("measures", self.measures), ("dimensions", self.dimensions), ("segments", self.segments))
            if v
        }
        if self.filters:
            out["filters"] = [
                {"member": f.member, "operator": f.operator, "values": [str(v) for v in f.values]}
                if f.values or f.operator not in ("set", "notSet")
                else {"member": f.member, "operator": f.operator}
                for f in self.filters
            ]
        if self.timeDimensions:
            out["timeDimensions"] = [t.model_dump(exclude_none=True) for t in self.timeDimensions]
        if self.order:
            out["order"] = [[member, direction] for member, direction in self.order]
        if self.limit is not None:
            out["limit"] = self.limit
        return out


class WriteCubeQuery(dspy.Signature):
    """Write one Cube REST query that answers the question. Use ONLY the listed members; put every bound
    metric in measures; put the filter values of the bindings, and every named-rows filter exactly as given,
    in filters; use the resolved date ranges exactly (timeDimensions dateRange) and their granularity. A
    question asking for a share sets share (of_total across the rows, or of_whole for the part that some
    segments or filters pick: list them in part)."""

    question: str = dspy.InputField()
    members: str = dspy.InputField(desc="allowed members, one per line: name (type): title")
    bindings: str = dspy.InputField(desc="business terms bound to members, with filter values; named rows")
    time_ranges: str = dspy.InputField(desc="date ranges resolved from the question, and granularity")
    examples: str = dspy.InputField(desc="approved question -> Cube query examples")
    context: str = dspy.InputField(desc="retrieved schema context: metrics, dimensions, join and business rules")
    feedback: str = dspy.InputField(desc="problems of the previous attempt to fix, or 'none'")
    cube_query: CubeQueryReply = dspy.OutputField()


def resolved_members(fast: Callable[[], CubeQueryDraft]) -> list[str]:
    """The members the deterministic reading of the question resolves (its draft's), for the LLM's list: what
    the rules found the question names is retrieved context too. None when the rules cannot read it."""
    from cube_models.query import CubeQuery

    try:
        draft = fast()
    except Exception:  # the rules refuse the question: the LLM still gets the retrieved members
        return []
    return list(dict.fromkeys(m for q in draft.queries for m in CubeQuery.parse(q).members()))


def allowed_members(
    ctx: AggregateContext, model: SemanticModel, u: Understanding | None = None, resolved: Sequence[str] = ()
) -> list[str]:
    """Members the LLM may use. The question's own come first and whatever the token budget kept: the ones the
    rules resolve from it (``resolved``), the bound ones, those of the named rows, the dimensions its group-by
    phrases name, and their measures' time dimensions. Then what the budgeted context rendered
    (``AggregateContext.rendered``): the retrieved metric/dimension/segment assets and the members of the
    few-shots the prompt shows; of every cube these touch (bound tables too) its row count and the public text
    dimensions the budget rendered; the measures' time dimensions. That second part is cut to ``MAX_MEMBERS``."""
    named = _known(
        model, [*resolved, *(member_path(b.mapped_asset_id) for b in ctx.bindings), *(f["member"] for f in ctx.filters)]
    )  # the rows the question names
    retrieved = [
        member_path(a.id)
        for a in sorted(ctx.prompt_assets(), key=lambda a: -a.score)
        if a.type in ("metric", "measure", "dimension", "segment")
    ]
    for shot in ctx.prompt_shots():
        query = shot.get("cube_query") or {}
        retrieved += [*query.get("measures", []), *query.get("dimensions", [])]
    retrieved = _known(model, retrieved)
    cubes = [
        *(m.split(".", 1)[0] for m in [*named, *retrieved]),
        *(
            member_path(b.mapped_asset_id).removeprefix("table:")
            for b in ctx.bindings
            if b.mapped_asset_type == "table"
        ),
    ]
    cubes = [c for c in dict.fromkeys(cubes) if c in model.cubes]
    if u is not None:
        measured = [m.split(".", 1)[0] for m in [*named, *retrieved] if _kind(model, m) == "measure"]
        named += [
            d
            for mention in u.dimensions
            if (d := resolve_dimension(model, mention.concept, measured or cubes, u.language))
        ]
    for cube in cubes:
        retrieved += [c for c in [row_count(model, cube)] if c]
        retrieved += [
            d.path
            for d in model.cubes[cube].dimensions.values()
            if d.public and d.type == "string" and not d.primary_key and ctx.rendered(f"dimension:{d.path}")
        ]
    head = _with_times(model, named)
    rest = [m for m in _with_times(model, retrieved) if m not in head]
    return head + rest[: max(0, MAX_MEMBERS - len(head))]


def _known(model: SemanticModel, paths: Sequence[str]) -> list[str]:
    """``paths`` the model has, once each, in order."""
    return [p for p in dict.fromkeys(paths) if model.find_member(p) is not None]


def _kind(model: SemanticModel, path: str) -> str:
    return str(getattr(model.find_member(path), "kind", ""))


def _with_times(model: SemanticModel, members: Sequence[str]) -> list[str]:
    """``members`` (once each) followed by the time dimensions of their measures."""
    times = [model.time_dimension_for(m) for m in members if _kind(model, m) == "measure"]
    return list(dict.fromkeys([*members, *(t for t in times if t)]))


def _describe(model: SemanticModel, path: str) -> str:
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


def _outside(query: dict[str, Any], allowed: set[str]) -> list[Problem]:
    from cube_models.query import CubeQuery

    members = CubeQuery.parse(query).members()
    return [
        Problem("not_retrieved", f"member '{m}' is not among the retrieved members", m)
        for m in members
        if m not in allowed
    ]


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


def _unused_named(query: dict[str, Any], ctx: AggregateContext) -> list[Problem]:
    """Filters of the rows the question names that the query leaves out (it would answer for every row)."""

    def key(f: dict[str, Any]) -> tuple[Any, ...]:
        return f.get("member"), f.get("operator"), tuple(sorted(str(v) for v in f.get("values") or []))

    given = {key(f) for f in query.get("filters", [])}
    return [
        Problem(
            "unused_entity_filter",
            "the named rows must filter the query: add " + json.dumps(f, ensure_ascii=False),
            f.get("member"),
        )
        for f in ctx.filters
        if key(f) not in given
    ]


def _inputs(u: Understanding, ctx: AggregateContext, model: SemanticModel, members: list[str]) -> dict[str, str]:
    bound = [
        f"{b.canonical_term} -> {member_path(b.mapped_asset_id)}"
        + (f" = {b.filter_value!r}" if b.filter_value is not None else "")
        for b in ctx.bindings
    ]
    named = [f"named rows -> {json.dumps(f, ensure_ascii=False)}" for f in ctx.filters]
    return {
        "question": u.normalized,
        "members": "\n".join(_describe(model, m) for m in members),
        "bindings": "\n".join([*bound, *named]) or "none",
        "time_ranges": _time_text(u),
        "examples": "\n".join(
            f"{s.get('question')} -> {json.dumps(s.get('cube_query'), ensure_ascii=False)}"
            for s in ctx.prompt_shots()[:MAX_EXAMPLES]
            if s.get("cube_query")
        )
        or "none",
        "context": ctx.context_text[:MAX_CONTEXT_CHARS] or "none",
    }


def _attempt(
    predict: dspy.Predict,
    inputs: dict[str, str],
    feedback: str,
    ctx: AggregateContext,
    model: SemanticModel,
    members: list[str],
) -> tuple[CubeQueryReply | None, list[Problem]]:
    """One ask: the reply, or the problems to feed back (a reply that does not parse is one of them)."""
    try:
        reply = predict(**inputs, feedback=feedback).cube_query
    except dspy.utils.exceptions.AdapterParseError as err:
        return None, [Problem("invalid", f"the reply did not parse as a Cube query: {str(err)[:300]}")]
    if not isinstance(reply, CubeQueryReply):
        return None, [Problem("invalid", "the reply is not a Cube query object")]
    query = reply.to_query()
    try:
        problems = _outside(query, set(members)) + check(query, ctx, model) + _unused_named(query, ctx)
    except Exception as err:  # a query Cube's own parser refuses
        problems = [Problem("invalid", f"{type(err).__name__}: {err}")]
    if reply.share == "of_whole" and reply.whole(query) == query:
        problems.append(Problem("invalid", "share of_whole needs the part members (segments or filter members)"))
    return reply, problems


def write_query(
    u: Understanding, context: ContextLike, model: SemanticModel, feedback: str = "none", resolved: Sequence[str] = ()
) -> CubeQueryDraft:
    """Ask the LLM once (plus one corrective re-ask) for a valid query; raises on a second failure."""
    ctx = AggregateContext.of(context)
    members = allowed_members(ctx, model, u, resolved)
    if not members:
        raise AggregateError("no retrieved members to build a Cube query from")
    predict = dspy.Predict(WriteCubeQuery)
    inputs = _inputs(u, ctx, model, members)
    notes: list[str] = []
    for attempt in range(2):
        reply, problems = _attempt(predict, inputs, feedback, ctx, model, members)
        if reply is not None and not problems:
            return _draft(reply, u, notes)
        feedback = "; ".join(p.message for p in problems)
        notes.append(f"attempt {attempt + 1} rejected: {feedback}")
    raise AggregateError(f"the LLM query was invalid twice: {feedback}")


def _draft(reply: CubeQueryReply, u: Understanding, notes: list[str]) -> CubeQueryDraft:
    """The draft of a valid reply: a share of the whole is two queries (part, whole), a share of the total is
    derived from the rows, compared periods repeat the query per period."""
    query = reply.to_query()
    if reply.share == "of_whole":
        return CubeQueryDraft([query, reply.whole(query)], ["", ""], None, ["part"], notes, mode="llm")
    queries, labels = expand_periods(query, u)
    kind = u.comparison.kind if len(queries) > 1 and u.comparison else None
    if reply.share == "of_total" and (ranked := shares_of_total(queries, notes, mode="llm")) is not None:
        return ranked
    post = ["share"] if reply.share == "of_total" else []
    return CubeQueryDraft(queries, labels, kind, post, notes, mode="llm", keep=dict(reply.keep))

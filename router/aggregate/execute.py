"""``build_cube_query`` and ``run_aggregate``: draft -> guardrails -> execute, one corrective retry.

A validation or execution problem triggers exactly one correction: in LLM mode the program is re-asked
with the problems; in fast mode (or when the LLM fails) ``correct.fix`` uses suggestions / drops the
offending members. A second failure of an LLM draft hands the question to the fast draft (with its own
correction); a second failure of a fast draft raises ``AggregateError`` carrying the problems.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Protocol

from cube_models.backends.base import LoadResult
from cube_models.model import SemanticModel
from cubesage_core.llm import REASON_CHARS, record_fallback, two_mode
from router.aggregate.context import AggregateContext, ContextLike, member_path
from router.aggregate.correct import fix
from router.aggregate.derive import combine
from router.aggregate.follow_up import FollowUp, edit_query
from router.aggregate.guardrails import check
from router.aggregate.period_names import with_dates
from router.aggregate.slots import fill_slots
from router.aggregate.ties import Peek, peek_query, split_peek
from router.aggregate.types import AggregateError, AggregateResult, CubeQueryDraft, OutOfModelError, Problem
from router.understanding.types import Understanding

WARNINGS = {"unknown_binding"}  # reported, not blocking: a glossary term mapped to a member the model lacks


def build_cube_query(
    understanding: Understanding,
    context: ContextLike,
    model: SemanticModel,
    *,
    use_llm: bool | None = None,
    follow_up: FollowUp | None = None,
    parsed: CubeQueryDraft | None = None,
) -> CubeQueryDraft:
    """The Cube query (one per compared period) for an aggregate question; LLM mode falls back to fast.
    A follow-up is the whole conversation to the LLM and an edit of the previous query in fast mode;
    ``parsed``: the fast parser's draft (``router.parse``), used in fast mode instead of slot filling."""
    ctx = AggregateContext.of(context)

    def llm() -> CubeQueryDraft:
        from router.aggregate.program import resolved_members, write_query

        return write_query(understanding, ctx, model, resolved=resolved_members(fast))

    def fast() -> CubeQueryDraft:
        if follow_up is not None:
            return edit_query(follow_up.previous, follow_up.understanding, follow_up.context, model)
        return parsed if parsed is not None else fill_slots(understanding, ctx, model)

    result = two_mode(llm, fast, step="cube_query", use_llm=use_llm)
    draft = result.value
    draft.mode, draft.fallback_reason = result.mode, result.fallback_reason
    return draft


def _correct(
    draft: CubeQueryDraft,
    problems: list[Problem],
    understanding: Understanding,
    ctx: AggregateContext,
    model: SemanticModel,
) -> CubeQueryDraft | None:
    if draft.mode == "llm":
        from router.aggregate.program import resolved_members, write_query

        feedback = "; ".join(p.message for p in problems)
        listed = resolved_members(lambda: draft)  # the members the failed query was allowed
        asked = two_mode(
            lambda: write_query(understanding, ctx, model, feedback=feedback, resolved=listed),
            lambda: None,
            step="cube_query_fix",
        )
        if asked.value is not None:
            asked.value.notes.insert(0, f"re-asked the LLM with: {feedback}")
            return asked.value
        draft.notes.append(f"LLM correction failed ({asked.fallback_reason}); fixing deterministically")
    bound = [
        member_path(b.mapped_asset_id)
        for b in ctx.bindings
        if b.mapped_asset_type in ("metric", "measure") and b.filter_value is None
    ]
    queries = []
    for query in draft.queries:
        fixed = fix(query, problems, model, bound)
        if fixed is None:
            return None
        queries.append(fixed)
    return CubeQueryDraft(
        queries,
        draft.labels,
        draft.comparison,
        draft.post,
        [*draft.notes, "corrected: " + "; ".join(p.message for p in problems)],
        draft.mode,
        draft.fallback_reason,
        draft.groups,
        draft.keep,
    )


def _problems(
    draft: CubeQueryDraft, ctx: AggregateContext, model: SemanticModel
) -> tuple[list[Problem], list[Problem]]:
    """(blocking problems, warnings) of every query of the draft."""
    seen: dict[str, Problem] = {}
    for query in draft.queries:
        for problem in check(query, ctx, model, draft_measures=draft.measures):
            seen.setdefault(problem.message, problem)
    problems = list(seen.values())
    return [p for p in problems if p.code not in WARNINGS], [p for p in problems if p.code in WARNINGS]


def _checked_against(ctx: AggregateContext, draft: CubeQueryDraft, follow_up: FollowUp | None) -> AggregateContext:
    """The context a draft is checked against: a fast follow-up's edit against what the follow-up binds, with
    the previous turn's query as an example."""
    if follow_up is None or draft.mode == "llm":
        return ctx
    own = AggregateContext.of(follow_up.context)
    return replace(own, few_shots=[{"question": "(previous turn)", "cube_query": follow_up.previous}, *own.few_shots])


class QueryLoader(Protocol):
    """What the aggregate path needs of a semantic backend (``cube_models.backends``): a Cube query's rows."""

    def load(self, query: dict[str, Any], today: date | None = None) -> LoadResult: ...


@dataclass
class _Run:
    """One aggregate question's checks and loads: what it ran against, its timings and the problems met."""

    understanding: Understanding
    model: SemanticModel
    backend: QueryLoader
    today: date
    timings: dict[str, float] = field(default_factory=dict)
    history: list[Problem] = field(default_factory=list)

    def _lap(self, name: str, mark: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + (time.perf_counter() - mark) * 1000

    def execute(self, draft: CubeQueryDraft, ctx: AggregateContext) -> tuple[CubeQueryDraft, list[Any], int]:
        """Check and load ``draft``, with one correction; (the draft that ran, its loads, retries). Raises
        ``AggregateError`` when the corrected draft fails too."""
        retries = 0
        while True:
            mark = time.perf_counter()
            problems, warnings = _problems(draft, ctx, self.model)
            self.history += [w for w in warnings if w not in self.history]
            self._lap("guardrails_ms", mark)
            if not problems:
                mark = time.perf_counter()
                try:
                    return (
                        draft,
                        [self.backend.load(_loaded(draft, q), today=self.today) for q in draft.queries],
                        retries,
                    )
                except Exception as err:
                    problems = [Problem("execution", f"{type(err).__name__}: {err}"[:500])]
                finally:
                    self._lap("execute_ms", mark)
            self.history += problems
            corrected = _correct(draft, problems, self.understanding, ctx, self.model) if retries == 0 else None
            if corrected is None:
                raise AggregateError(
                    "could not build a valid Cube query: " + "; ".join(p.message for p in problems), self.history
                )
            draft, retries = corrected, retries + 1


def _peeks(draft: CubeQueryDraft) -> bool:
    """One ordered, limited query (no compared periods, no counted total) is loaded one row past its limit,
    to see a tie at the cut (``router.aggregate.ties``)."""
    return len(draft.queries) == 1 and not draft.counted and peek_query(draft.query) is not None


def _loaded(draft: CubeQueryDraft, query: dict[str, Any]) -> dict[str, Any]:
    return (peek_query(query) or query) if _peeks(draft) else query


def _kept(draft: CubeQueryDraft, loads: list[LoadResult]) -> tuple[list[LoadResult], Peek | None]:
    """The loads with the rows of their own limit, and the peek past it (when the draft peeked)."""
    if not _peeks(draft):
        return loads, None
    rows, peek = split_peek(draft.query, loads[0].rows)
    return [replace(loads[0], rows=rows)], peek


def _periods_differ(draft: CubeQueryDraft) -> None:
    """Compared parts are different queries: two the same ("June" read as last year's beside "June last
    year") would show one period twice as a comparison."""
    seen: dict[str, str] = {}
    for label, query in zip(draft.labels, draft.queries, strict=False):
        key = json.dumps(query, sort_keys=True, default=str)
        if key in seen:
            raise OutOfModelError(f"the compared periods are the same ({seen[key] or label}): name each period")
        seen[key] = label


def _each_period_has_data(draft: CubeQueryDraft, loads: list[LoadResult]) -> None:
    """Compared periods each need rows: a period without any ("2012 vs 2013" where the data starts in 2013)
    is said, not compared as if its numbers were there (the other period's rows alone would be shown)."""
    if len(loads) < 2 or draft.comparison == "members" or draft.counted or len(draft.labels) != len(loads):
        return
    measures = [m for q in draft.queries for m in q.get("measures") or []]
    empty: dict[str, bool] = {}
    for label, load in zip(draft.labels, loads, strict=True):
        none = all(row.get(m) is None for row in load.rows for m in measures if m in row)
        empty[label] = empty.get(label, True) and none
    missing = [label for label, none in empty.items() if none]
    if missing and len(missing) < len(empty):
        raise OutOfModelError(
            f"no data for {', '.join(missing)}: no rows of that period match the question, so it cannot be "
            f"compared with {', '.join(label for label in empty if label not in missing)}"
        )


def run_aggregate(
    understanding: Understanding,
    context: ContextLike,
    model: SemanticModel,
    backend: QueryLoader,
    *,
    today: date | None = None,
    use_llm: bool | None = None,
    follow_up: FollowUp | None = None,
    parsed: CubeQueryDraft | None = None,
) -> AggregateResult:
    """Build, check, execute (with one corrective retry) and combine the rows of an aggregate question. An
    LLM query that still fails after its correction is dropped for the fast draft (with its own retry)."""
    ctx = AggregateContext.of(context)
    run = _Run(understanding, model, backend, today or understanding.today)
    started = time.perf_counter()
    draft = build_cube_query(understanding, ctx, model, use_llm=use_llm, follow_up=follow_up, parsed=parsed)
    run.timings["build_ms"] = (time.perf_counter() - started) * 1000
    _periods_differ(draft)
    try:
        draft, loads, retries = run.execute(draft, _checked_against(ctx, draft, follow_up))
    except AggregateError as err:
        if draft.mode != "llm":
            raise
        reason = f"llm error: the LLM's Cube query failed after one correction: {err}"[:REASON_CHARS]
        record_fallback("cube_query", reason)
        draft = build_cube_query(understanding, ctx, model, use_llm=False, follow_up=follow_up, parsed=parsed)
        draft.fallback_reason = reason
        draft.notes.insert(0, reason)
        draft, loads, retries = run.execute(draft, _checked_against(ctx, draft, follow_up))
    loads, peek = _kept(draft, loads)
    _each_period_has_data(draft, loads)
    if draft.comparison != "members" and len(draft.labels) == len(draft.queries) > 1:
        draft.labels = [with_dates(label, q) for label, q in zip(draft.labels, draft.queries, strict=True)]
    rows, derived = combine(draft, [[{draft.counted: load.total}] if draft.counted else load.rows for load in loads])
    run.timings["total_ms"] = (time.perf_counter() - started) * 1000
    first = loads[0]
    return AggregateResult(
        cube_query=draft.query,
        rows=rows,
        sql="\n;\n".join(load.sql for load in loads),
        backend=first.backend,
        fallback_reason=first.fallback_reason or draft.fallback_reason,
        problems=run.history,
        retries=retries,
        timings_ms={k: round(v, 3) for k, v in run.timings.items()},
        cube_queries=draft.queries,
        labels=draft.labels,
        derived=derived,
        mode=draft.mode,
        notes=draft.notes,
        cached=all(load.cached for load in loads),
        peek=peek,
    )

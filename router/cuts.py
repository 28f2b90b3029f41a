"""Limits applied to a result, stated instead of silent: ``shown`` of ``total`` rows, per part of an answer.

An answer's rows can stop at a limit the question did not ask for: the default limit of an aggregate Cube
query without one, the LIMIT of a detail query (a listing, a drill-down or template SQL), and, in a mixed
answer, the aggregate rows whose detail was looked up (the first ``covered``). Each such limit that was
reached is a :class:`Cut`; its ``total`` is counted by the database (Cube's ``total: true`` for Cube
queries, ``router.detail.counts.count_rows`` for SQL), ``None`` when counting failed. A limit reached by
exactly as many rows as there are is no cut.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot.errors import SqlglotError

from cube_models.errors import CubeModelsError
from router.aggregate.types import AggregateResult
from router.detail import DetailResult
from router.detail.counts import limit_of_sql
from router.sqlguard import SqlGuardError
from router.sqlguard.execute import QueryExecutionError

PARTS = ("aggregate", "detail", "entities")
CUBE_DETAIL_KINDS = ("listing", "drill-down")  # detail plans answered by a Cube query


@dataclass(frozen=True)
class Cut:
    """A limit reached by one part of an answer: ``shown`` rows of ``total`` (None: not countable)."""

    part: str  # one of PARTS
    shown: int
    total: int | None
    limit: int

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part, "truncated": True, "shown": self.shown, "total": self.total, "limit": self.limit}


class Counter(Protocol):
    """Counts rows without the limit: of a Cube query, and of a detail SQL statement with its parameters."""

    def cube(self, query: dict[str, Any]) -> int | None: ...

    def sql(self, sql: str, params: dict[str, Any]) -> int | None: ...


def cube_cut(part: str, query: dict[str, Any], shown: int, limit: int, counter: Counter) -> Cut | None:
    """The cut of a Cube query that returned ``shown`` rows under ``limit``; None when the limit was not hit
    or every row was shown."""
    if limit <= 0 or shown < limit:
        return None
    return _cut(part, shown, limit, lambda: counter.cube({**query, "total": True, "limit": 1}))


def sql_cut(part: str, sql: str, params: dict[str, Any], shown: int, limit: int, counter: Counter) -> Cut | None:
    """The cut of a detail SQL statement that returned ``shown`` rows under its LIMIT ``limit``."""
    if limit <= 0 or shown < limit:
        return None
    return _cut(part, shown, limit, lambda: counter.sql(sql, params))


def entities_cut(aggregate_rows: int, covered: int) -> Cut | None:
    """A mixed answer's aggregate rows past the first ``covered``: their detail was not looked up."""
    return Cut("entities", covered, aggregate_rows, covered) if aggregate_rows > covered > 0 else None


def _cut(part: str, shown: int, limit: int, count: Callable[[], int | None]) -> Cut | None:
    total = count()
    return None if total is not None and total <= shown else Cut(part, shown, total, limit)


@dataclass
class PathCounter:
    """:class:`Counter` over an answer's own paths: ``load`` runs a Cube query (its ``total``), ``count_sql``
    a detail statement's row count; a count that fails is None (the cut is stated, its total unknown)."""

    load: Callable[[dict[str, Any]], Any]
    count_sql: Callable[[str, dict[str, Any]], int]

    def cube(self, query: dict[str, Any]) -> int | None:
        try:
            total = self.load(query).total
        except CubeModelsError:
            return None
        return None if total is None else int(total)

    def sql(self, sql: str, params: dict[str, Any]) -> int | None:
        try:
            return self.count_sql(sql, params)
        except (SqlGuardError, QueryExecutionError, SqlglotError):
            return None


@dataclass
class _Known:
    """``counter``, but a SQL statement's total already counted is not counted again."""

    counter: Counter
    total: int | None

    def cube(self, query: dict[str, Any]) -> int | None:
        return self.counter.cube(query)

    def sql(self, sql: str, params: dict[str, Any]) -> int | None:
        return self.total if self.total is not None else self.counter.sql(sql, params)


def find_cuts(
    intent: str,
    aggregate: AggregateResult | None,
    detail: DetailResult | None,
    counter: Counter,
    *,
    default_limit: int,
    covered: int,
) -> list[Cut]:
    """Every limit the parts of one answer reached: the aggregate's default limit (its query set none), the
    detail query's LIMIT, and in a mixed answer the aggregate rows past the ``covered`` whose detail was
    looked up."""
    found: list[Cut | None] = []
    query = aggregate.cube_query if aggregate is not None else None
    if intent in ("aggregate", "mixed") and aggregate is not None and query and not query.get("limit"):
        found.append(cube_cut("aggregate", query, len(aggregate.rows), default_limit, counter))
    if intent in ("detail", "mixed") and detail is not None:
        asked = (detail.plan.get("reading") or {}).get("limit")  # "the 10 worst delays": the limit asked
        if detail.plan.get("kind") in CUBE_DETAIL_KINDS:
            listed = detail.plan.get("cube_query") or {}
            if not asked:
                found.append(cube_cut("detail", listed, len(detail.rows), int(listed.get("limit") or 0), counter))
        elif detail.sql:
            counted = _Known(counter, detail.total)  # a mixed answer's per-entity counts already add up to it
            found.append(
                sql_cut("detail", detail.sql, detail.params, len(detail.rows), limit_of_sql(detail.sql), counted)
            )
        if intent == "mixed" and aggregate is not None:
            found.append(entities_cut(len(aggregate.rows), covered))
    return [cut for cut in found if cut is not None]

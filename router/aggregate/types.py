"""Plain data of the aggregate path: guardrail problems, the Cube query draft and the result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from router.aggregate.ties import Peek


class AggregateError(Exception):
    """The aggregate path cannot build or run a query for this question (clear message, a 4xx/answer)."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class OutOfModelError(AggregateError):
    """The question names no measure of the model: what it asks about is not in the warehouse (the reply is
    ``unsupported``, with the words nothing in the model is called)."""


@dataclass
class Problem:
    """One guardrail or execution problem, with the offending member and a suggested replacement."""

    code: str  # unknown_member | unbound_measure | unused_binding | invalid | execution | no_measure ...
    message: str
    member: str | None = None
    suggestion: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CubeQueryDraft:
    """One Cube query per compared period (usually one), labelled, with the slot-filling trace."""

    queries: list[dict[str, Any]]
    labels: list[str] = field(default_factory=list)  # period label per query ("" when not a comparison)
    comparison: str | None = None  # yoy | pop | versus (multiple queries) or None
    post: list[str] = field(default_factory=list)  # post-query derivations, e.g. "share"
    notes: list[str] = field(default_factory=list)
    mode: str = "fast"
    fallback_reason: str | None = None
    groups: int = 1  # measure groups per period: queries are period-major, ``groups`` queries per period
    keep: dict[str, list[str]] = field(default_factory=dict)  # after the shares: only rows with these values
    units: dict[str, tuple[str, float]] = field(default_factory=dict)  # measure -> (unit shown, factor to it)
    per: str | None = None  # the row count the other measures are divided by ("tracks per album")
    counted: str | None = None  # the row count a query's total gives: the groups passing its bounds, counted

    @property
    def query(self) -> dict[str, Any]:
        return self.queries[0]

    @property
    def measures(self) -> list[str]:
        """All measures, across the measure groups of the first period."""
        return [m for q in self.queries[: self.groups] for m in q.get("measures", [])]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AggregateResult:
    cube_query: dict[str, Any]
    rows: list[dict[str, Any]]
    sql: str
    backend: str
    fallback_reason: str | None = None
    problems: list[Problem] = field(default_factory=list)
    retries: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    cube_queries: list[dict[str, Any]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    derived: dict[str, Any] = field(default_factory=dict)  # growth of compared periods, shares
    mode: str = "fast"
    notes: list[str] = field(default_factory=list)
    cached: bool = False  # every row came from the backend's result cache
    peek: Peek | None = None  # an ordered, limited query's row past its limit (router.aggregate.ties)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["problems"] = [p.to_dict() for p in self.problems]
        return out

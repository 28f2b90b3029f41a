"""Ties at the cut of an ordered, limited aggregate ("the most", "top 5", 最多): stated, never hidden.

``order: [[measure, desc]], limit: n`` keeps n rows. When the row after the n-th has the same ordered values
as the n-th, which of the tied rows are shown is the database's choice: the answer says how many rows tie,
at what, and how many of them are shown (``Tie``, in the text and ``provenance.ties``). It shows the rows
of the limit the question asked for (the table keeps the shape asked, as a dashboard's own Cube query
would give it), not every tied row.

Detection costs no query when nothing ties: the aggregate path loads ``peek_query`` (``limit + 1``, and the
query's dimensions as tie-breakers after its own order, so the rows shown of a tie are the same on every
run and on both backends) and keeps the first ``n`` rows (``split_peek``); the row past the limit comes
here. Only when it ties does one more Cube query count the tied rows: the query filtered to the ordered
values (``equals``) with ``total: true`` (``tie_count_query``). Both are plain Cube queries, so Cube and the
built-in compiler answer them alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]


@dataclass(frozen=True)
class Peek:
    """What an ordered, limited load kept: its limit, its own order members and the row past the limit."""

    limit: int
    members: tuple[str, ...]  # the query's order members (tie-breakers not included)
    past: Row | None  # the row after the limit (None: the rows ended before it)


@dataclass(frozen=True)
class Tie:
    """Rows with the same ordered values on both sides of a limit: ``tied`` of them, ``shown`` shown."""

    members: tuple[str, ...]
    values: tuple[Any, ...]  # the ordered values of the tied rows
    tied: int | None  # rows with those values (None: they could not be counted; more than ``shown``)
    shown: int
    limit: int
    part: str = "aggregate"

    def to_dict(self) -> dict[str, Any]:
        return {
            "part": self.part,
            "members": list(self.members),
            "values": list(self.values),
            "tied": self.tied,
            "shown": self.shown,
            "limit": self.limit,
        }


def _order(query: dict[str, Any]) -> list[list[str]]:
    raw = query.get("order") or []
    pairs = raw.items() if isinstance(raw, dict) else raw
    return [[str(member), str(direction)] for member, direction in pairs]


def peek_query(query: dict[str, Any]) -> dict[str, Any] | None:
    """The query to load for an ordered query with a limit: one row more, ties broken by its dimensions;
    None when the query has no order or no limit."""
    order, limit = _order(query), query.get("limit")
    if not order or not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return None
    ordered = {member for member, _ in order}
    breakers = [[d, "asc"] for d in query.get("dimensions") or [] if d not in ordered]
    return {**query, "limit": limit + 1, "order": [*order, *breakers]}


def split_peek(query: dict[str, Any], rows: list[Row]) -> tuple[list[Row], Peek]:
    """The rows of ``query``'s limit out of the rows its ``peek_query`` loaded, and the :class:`Peek`."""
    limit = int(query["limit"])
    members = tuple(member for member, _ in _order(query))
    return rows[:limit], Peek(limit, members, rows[limit] if len(rows) > limit else None)


def _same(left: Any, right: Any) -> bool:
    try:
        return left == right or float(left) == float(right)
    except (TypeError, ValueError):
        return str(left) == str(right)


def _tied_with(row: Row, members: Sequence[str], values: Sequence[Any]) -> bool:
    return all(_same(row.get(m), v) for m, v in zip(members, values, strict=True))


def tie_count_query(query: dict[str, Any], members: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    """``query`` restricted to the rows with ``values`` in the order ``members``, counted (``total``)."""
    equals = [{"member": m, "operator": "equals", "values": [str(v)]} for m, v in zip(members, values, strict=True)]
    counted = {k: v for k, v in query.items() if k not in ("order", "limit")}
    return {**counted, "filters": [*(query.get("filters") or []), *equals], "total": True, "limit": 1}


def find_tie(
    query: dict[str, Any], rows: list[Row], peek: Peek | None, count: Callable[[dict[str, Any]], int | None]
) -> Tie | None:
    """The tie at ``query``'s limit, counted with ``count`` (a Cube query's total); None when the row past
    the limit (if any) differs from the last row shown in an ordered value."""
    if peek is None or peek.past is None or len(rows) < peek.limit or not peek.members:
        return None
    if any(m not in rows[-1] or m not in peek.past for m in peek.members):
        return None  # ordered by a member the rows do not carry
    values = tuple(rows[-1].get(m) for m in peek.members)
    if not _tied_with(peek.past, peek.members, values):
        return None
    shown = sum(_tied_with(row, peek.members, values) for row in rows)
    tied = count(tie_count_query(query, peek.members, values))
    return Tie(peek.members, values, tied if tied is not None and tied > shown else None, shown, peek.limit)

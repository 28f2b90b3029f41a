"""Ties at an aggregate's limit: one row past it loaded, a tie seen and counted, none seen without one."""

from __future__ import annotations

from typing import Any

from answer.tie_text import tie_text
from router.aggregate.ties import Peek, find_tie, peek_query, split_peek

QUERY: dict[str, Any] = {
    "measures": ["t.count"],
    "dimensions": ["u.name"],
    "order": [["t.count", "desc"]],
    "limit": 2,
    "filters": [{"member": "t.status", "operator": "equals", "values": ["open"]}],
}


def rows(*pairs: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"u.name": name, "t.count": n} for name, n in pairs]


def test_peek_query_loads_one_row_more_with_the_dimensions_breaking_ties() -> None:
    peeked = peek_query(QUERY)
    assert peeked is not None and peeked["limit"] == 3
    assert peeked["order"] == [["t.count", "desc"], ["u.name", "asc"]]
    assert peek_query({**QUERY, "order": {"t.count": "desc"}})["order"][0] == ["t.count", "desc"]
    assert peek_query({k: v for k, v in QUERY.items() if k != "limit"}) is None
    assert peek_query({k: v for k, v in QUERY.items() if k != "order"}) is None


def test_a_tie_across_the_limit_is_found_and_counted() -> None:
    kept, peek = split_peek(QUERY, rows(("a", 9), ("b", 5), ("c", 5)))
    assert kept == rows(("a", 9), ("b", 5)) and peek == Peek(2, ("t.count",), {"u.name": "c", "t.count": 5})
    asked: list[dict[str, Any]] = []

    def count(query: dict[str, Any]) -> int:
        asked.append(query)
        return 4

    tie = find_tie(QUERY, kept, peek, count)
    assert tie is not None and (tie.tied, tie.shown, tie.limit, tie.values) == (4, 1, 2, (5,))
    counted = asked[0]
    assert counted["total"] is True and "order" not in counted
    assert counted["filters"][-1] == {"member": "t.count", "operator": "equals", "values": ["5"]}
    assert counted["filters"][0] == QUERY["filters"][0]  # the question's own filters kept
    text = tie_text(tie, kept, QUERY, lang="en", mixed=True)
    assert "4 rows tie" in text and "1 of them is shown (b)" in text and "detail rows" in text
    assert "并列" in tie_text(tie, kept, QUERY, lang="zh", mixed=False)


def test_no_tie_when_the_row_past_the_limit_differs_or_there_is_none() -> None:
    def count(query: dict[str, Any]) -> int:
        raise AssertionError("no count without a tie")

    kept, peek = split_peek(QUERY, rows(("a", 9), ("b", 5), ("c", 4)))
    assert find_tie(QUERY, kept, peek, count) is None
    kept, peek = split_peek(QUERY, rows(("a", 9), ("b", 5)))
    assert peek.past is None and find_tie(QUERY, kept, peek, count) is None


def test_a_count_that_fails_or_disagrees_leaves_the_tie_stated_without_a_number() -> None:
    kept, peek = split_peek(QUERY, rows(("a", 5), ("b", 5), ("c", 5)))
    tie = find_tie(QUERY, kept, peek, lambda query: None)
    assert tie is not None and tie.tied is None and tie.shown == 2
    assert find_tie(QUERY, kept, peek, lambda query: 2).tied is None  # fewer than shown + 1: not a count
    assert "More than 2 rows tie" in tie_text(tie, kept, QUERY, lang="en", mixed=False)

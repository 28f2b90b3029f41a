"""Engine R's choice among matched terms: the longest match wins where the shorter one is only a part of it."""

from __future__ import annotations

from fourengine.engines.relational import _longest_matches
from fourengine.models import TermHit


def _hit(matched: str, asset: str) -> TermHit:
    kind = asset.split(":", 1)[0]
    return TermHit(matched, matched, matched, "exact", 1.0, kind, asset)


def test_a_word_inside_a_longer_match_only_is_dropped_but_said_again_alone_is_kept() -> None:
    hits = [_hit("order", "table:orders"), _hit("total order value", "metric:orders.total")]
    inside = _longest_matches(hits, "which clerk booked the highest total order value?")
    assert [h.matched for h in inside] == ["total order value"]
    again = _longest_matches(hits, "the highest total order value, and that clerk's 10 largest orders")
    assert sorted(h.matched for h in again) == ["order", "total order value"]


def test_a_longer_match_not_written_as_such_keeps_the_old_rule() -> None:
    hits = [_hit("order", "table:orders"), _hit("order value", "metric:orders.total")]
    assert [h.matched for h in _longest_matches(hits, "orders' values by clerk")] == ["order value"]

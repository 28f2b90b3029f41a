"""Question complexity for the token budget (few-shot examples: simple 2 / medium 4 / complex 6).

A point for each part the question combines beyond one metric over one period: a second sub-query
(two points), a comparison, a ranking, each group-by mention (two at most), a second time range, and
a long list of search terms. 0 points: simple; 1-2: medium; 3 or more: complex.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

Complexity = Literal["simple", "medium", "complex"]
MANY_TERMS = 6


def estimate_complexity(understanding: Any, sub_queries: Sequence[Any] = ()) -> Complexity:
    points = 2 if len(sub_queries) > 1 else 0
    points += bool(getattr(understanding, "comparison", None)) + bool(getattr(understanding, "ranking", None))
    points += min(len(getattr(understanding, "dimensions", None) or []), 2)
    points += len(getattr(understanding, "time_ranges", None) or []) > 1
    points += len(getattr(understanding, "search_terms", None) or []) > MANY_TERMS
    return "simple" if points == 0 else "medium" if points <= 2 else "complex"

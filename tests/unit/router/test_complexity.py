"""Question complexity for the token budget: simple / medium / complex from the parts a question combines."""

from __future__ import annotations

from datetime import date

import pytest

from router.complexity import estimate_complexity
from router.decompose import decompose_fast
from router.understanding import understand

TODAY = date(2025, 6, 30)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("GMV last month", "simple"),
        ("GMV by region last month", "medium"),
        ("top 5 products by GMV by region and channel in 2024 vs 2023", "complex"),
        ("top 5 products by GMV and their refund reasons", "complex"),
    ],
)
def test_complexity_follows_the_parts_of_the_question(question: str, expected: str) -> None:
    u = understand(question, TODAY, use_llm=False)
    assert estimate_complexity(u, decompose_fast(u)) == expected

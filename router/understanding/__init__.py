"""Query understanding: language, normalisation, search terms, time expressions, comparisons,
top-N/order phrases and group-by mentions, in English and Chinese.
"""

from router.understanding.core import understand
from router.understanding.terms import add_vocabulary, warm_up
from router.understanding.types import (
    Comparison,
    DimensionMention,
    Granularity,
    Language,
    QuestionError,
    Ranking,
    TimeRange,
    Understanding,
)

__all__ = [
    "Comparison",
    "DimensionMention",
    "Granularity",
    "Language",
    "QuestionError",
    "Ranking",
    "TimeRange",
    "Understanding",
    "add_vocabulary",
    "understand",
    "warm_up",
]

"""Plain data produced by query understanding: time ranges, comparisons, ranking, dimension mentions."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any, Literal

Language = Literal["zh", "en"]
Granularity = Literal["day", "week", "month", "quarter", "year"]
ComparisonKind = Literal["yoy", "pop", "versus", "members"]


class QuestionError(ValueError):
    """A question that cannot be processed (empty, too short, too long); the API answers 4xx."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TimeRange:
    """An inclusive date range resolved against "today", with the phrase it came from."""

    start: date
    end: date
    label: str
    granularity: Granularity | None = None  # the natural grain of the phrase ("2024年3月" -> month)
    phrase: str = ""

    def date_range(self) -> list[str]:
        """The Cube ``dateRange`` value (inclusive ISO dates)."""
        return [self.start.isoformat(), self.end.isoformat()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "label": self.label,
            "granularity": self.granularity,
            "phrase": self.phrase,
        }


@dataclass(frozen=True)
class Comparison:
    """A comparison asked for: year over year, period over period, explicit ranges, or members."""

    kind: ComparisonKind
    ranges: tuple[TimeRange, ...] = ()  # current period first, then the compared one(s)
    phrase: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "ranges": [r.to_dict() for r in self.ranges], "phrase": self.phrase}


@dataclass(frozen=True)
class Ranking:
    """Top-N / order phrase: "top 5" -> (desc, 5); "lowest" -> (asc, None)."""

    direction: Literal["desc", "asc"]
    limit: int | None
    phrase: str


@dataclass(frozen=True)
class DimensionMention:
    """A group-by phrase: "by region" / "按地区" -> concept "region" (raw words, resolved later)."""

    concept: str
    phrase: str


@dataclass
class Understanding:
    """Everything the router knows about a question before retrieval."""

    question: str
    normalized: str
    language: Language
    today: date
    search_terms: list[str] = field(default_factory=list)
    time_ranges: list[TimeRange] = field(default_factory=list)
    granularity: Granularity | None = None
    comparison: Comparison | None = None
    ranking: Ranking | None = None
    dimensions: list[DimensionMention] = field(default_factory=list)
    mode: str = "fast"
    fallback_reason: str | None = None

    @property
    def time_range(self) -> TimeRange | None:
        """The primary time range (the first one mentioned), if any."""
        return self.time_ranges[0] if self.time_ranges else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["today"] = self.today.isoformat()
        out["time_ranges"] = [r.to_dict() for r in self.time_ranges]
        out["comparison"] = self.comparison.to_dict() if self.comparison else None
        return out

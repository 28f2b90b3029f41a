"""The plain data of a parse: what each span of the question names, and the reading built from it.

A :class:`Mention` is a span of the question that names something of the model (a cube, a measure, a
dimension, a segment, a value of a dimension, a row); a :class:`Mark` is a span of language (an
aggregation word, a group-by cue, a comparator with its number, a listing verb...). The passes of
``router.parse.passes`` turn them into a :class:`Reading`: measures, group-bys, filters, time, order,
limit or a listing, and the words that nothing used (``unknown``) or that the reading could not honour
(``refusal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

TargetKind = Literal["cube", "measure", "dimension", "segment", "value"]
Span = tuple[int, int]


@dataclass(frozen=True)
class Target:
    """What a span may name: ``kind`` and ``path`` (a cube name or a member path); ``value`` for values."""

    kind: TargetKind
    path: str
    value: str | None = None
    source: str = "model"  # model | glossary | values | rows | probe

    @property
    def cube(self) -> str:
        return self.path.split(".", 1)[0]


def member_kinds(cube: Any) -> tuple[tuple[TargetKind, dict[str, Any]], ...]:
    """A cube's members by the kind of target they are: its measures, dimensions and segments."""
    return (("measure", cube.measures), ("dimension", cube.dimensions), ("segment", cube.segments))


@dataclass
class Mention:
    start: int
    end: int
    text: str
    targets: list[Target]
    weights: dict[Target, int] = field(default_factory=dict)  # 3 glossary, 2 title/synonym, 1 name words

    @property
    def span(self) -> Span:
        return (self.start, self.end)

    def of(self, *kinds: str) -> list[Target]:
        return [t for t in self.targets if t.kind in kinds]


@dataclass(frozen=True)
class Mark:
    """A span of language: ``kind`` (count, distinct, avg, sum, max, min, median, share, group, which,
    list, compare_op, sign, negation, order, top, string_op, key...) and what it carries."""

    kind: str
    start: int
    end: int
    text: str
    data: Any = None

    @property
    def span(self) -> Span:
        return (self.start, self.end)


@dataclass
class Filter:
    member: str
    operator: str
    values: list[str]
    because: str = ""

    def cube_filter(self) -> dict[str, Any]:
        out: dict[str, Any] = {"member": self.member, "operator": self.operator}
        if self.operator not in ("set", "notSet"):
            out["values"] = list(self.values)
        return out


@dataclass
class Reading:
    """The interpretation of one question (see the module docstring)."""

    text: str
    language: str
    today: date
    mentions: list[Mention] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    time_spans: list[Span] = field(default_factory=list)
    intent: str | None = None  # aggregate | detail | None (not decided: the caller's classifier decides)
    measures: list[str] = field(default_factory=list)
    dimensions: list[str] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)
    time_dimension: str | None = None  # the one the periods and grain are on (None: each measure's own)
    granularity: str | None = None  # a grain named with its time dimension ("per ship year")
    order: list[tuple[str, str]] = field(default_factory=list)
    limit: int | None = None
    listing: str | None = None  # the cube whose rows a detail question lists
    listed: Span | None = None  # the words that name it
    columns: list[str] = field(default_factory=list)  # members a listing shows beyond key and label
    row_measures: list[str] = field(default_factory=list)  # a listing's columns that are its rows' own measures
    column_list: list[Span] = field(default_factory=list)  # "? name, brand and price": the columns asked for
    share: bool = False
    keep: dict[str, list[str]] = field(default_factory=dict)  # a share of named values: the rows shown
    part: list[Filter] = field(default_factory=list)  # a share's part: filters the whole does not have
    part_segments: list[str] = field(default_factory=list)
    compared_segments: list[str] = field(default_factory=list)  # one query per segment, side by side
    units: dict[str, str] = field(default_factory=dict)  # measure -> the unit of time its values are shown in
    referred: list[str] = field(default_factory=list)  # cubes named as "that part": rows another part names
    per: str | None = None  # "average number of tracks per album": the row count the measure is divided by
    counted: str | None = None  # "how many albums have > 20 tracks": the count the groups passing the bounds give
    asks_one: bool | None = None  # "which region has ...": one row (None: the question does not say)
    keyed: list[str] = field(default_factory=list)  # cubes a row of which is named by its key
    shown: list[str] = field(default_factory=list)  # the key and name of the one row an aggregate is filtered to
    asked: Span | None = None  # a value two dimensions hold: the refusal asks which one is meant
    year_periods: list[str] = field(default_factory=list)  # periods read as a year column's bounds, not dates
    key_periods: list[str] = field(default_factory=list)  # year-like numbers that name a row ("part 2000")
    used: list[Span] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    unknown_spans: list[Span] = field(default_factory=list)
    unhonoured: list[str] = field(default_factory=list)  # language words no pass used (average, share, ...)
    refusal: str | None = None
    notes: list[str] = field(default_factory=list)

    def periods(self, ranges: list[Any]) -> list[Any]:
        """The question's periods that are dates (not bounds of a year column, not a row's key: "part 2000")."""
        return [t for t in ranges if t.phrase not in self.year_periods and t.phrase not in self.key_periods]

    def listed_column(self, span: Span) -> bool:
        """``span`` lies inside an item of the question's closing list of columns (``column_list``)."""
        return any(s <= span[0] and span[1] <= e for s, e in self.column_list)

    def use(self, *spans: Span) -> None:
        self.used.extend(spans)

    def scope(self) -> list[str]:
        """The cubes the answer is about: the measures' cubes, else the listed cube."""
        cubes = [m.split(".", 1)[0] for m in self.measures] or ([self.listing] if self.listing else [])
        return list(dict.fromkeys(cubes))

    def marks_of(self, *kinds: str) -> list[Mark]:
        return [m for m in self.marks if m.kind in kinds]

    def refuse(self, message: str) -> None:
        if self.refusal is None:
            self.refusal = message

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "measures": self.measures,
            "dimensions": self.dimensions,
            "filters": [f.cube_filter() | {"because": f.because} for f in self.filters],
            "segments": self.segments,
            "time_dimension": self.time_dimension,
            "granularity": self.granularity,
            "order": [list(o) for o in self.order],
            "limit": self.limit,
            "listing": self.listing,
            "columns": self.columns,
            "row_measures": self.row_measures,
            "share": self.share,
            "unknown": self.unknown,
            "unhonoured": self.unhonoured,
            "refusal": self.refusal,
            "mentions": [
                {
                    "text": m.text,
                    "span": [m.start, m.end],
                    "targets": [f"{t.kind}:{t.path}" + (f"={t.value}" if t.value else "") for t in m.targets],
                }
                for m in self.mentions
            ],
            "notes": self.notes,
        }

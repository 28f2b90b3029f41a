"""Pass: one date column compared with another ("lines that arrived *after the promised date*", "orders
shipped before their commit date"). A row filter of Cube compares a column with values only, so the model
says such a comparison with a segment (``{CUBE}.l_receiptdate > {CUBE}.l_commitdate``): "after <a date
column>" is the segment whose SQL puts another of the cube's date columns above that one, "before" below.
A verb before the comparison word that names a date column ("shipped after" -> the ship date) keeps only
the segments comparing that column; when none fits, or several still do, the question is refused: a
comparison dropped would list every row.
"""

from __future__ import annotations

import re
from typing import Any

from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.nearby import free
from router.parse.reading import Mention, Reading
from router.parse.text import ASIDE, norm_word, words

_WORD = re.compile(
    r"(after|later than|past|before|earlier than|ahead of|prior to)\s+(?:the\s+|their\s+|its\s+)?$", re.I
)
_LATER = ("after", "later than", "past")
_COMPARE = re.compile(r"\{CUBE\}\.(\w+)\s*(>=|<=|>|<)\s*\{CUBE\}\.(\w+)")


def _later_than(segment: Any, column: str) -> str | None:
    """The column the segment's SQL puts after ``column`` (``a > column`` or ``column < a``), or None."""
    m = _COMPARE.fullmatch(str(segment.sql).strip())
    if m is None:
        return None
    left, op, right = m.group(1).lower(), m.group(2), m.group(3).lower()
    if right == column and op.startswith(">"):
        return left
    if left == column and op.startswith("<"):
        return right
    return None


def _fitting(k: Knowledge, dim: Any, later: bool) -> list[tuple[Any, Any]]:
    """(segment, the other date dimension) for every segment of the dimension's cube comparing it as said."""
    cube = k.model.cubes[dim.cube]
    column = facts.column(dim).lower()
    dates = {facts.column(d).lower(): d for d in cube.dimensions.values() if d.type == "time"}
    out = []
    for segment in cube.segments.values():
        if later:
            other = _later_than(segment, column)
        else:
            other = next((c for c in dates if c != column and _later_than(segment, c) == column), None)
        if other in dates:
            out.append((segment, dates[other]))
    return out


def _by_verb(r: Reading, k: Knowledge, dim: Any, mark_start: int, fits: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """When the word before names one of the cube's date columns ("shipped", "received"), the fitting
    segments whose other column is that one; any other word ("arrived") leaves them all."""
    before = [w for w in words(r.text[:mark_start])][-1:]
    if not before:
        return fits
    stem = norm_word(before[0].raw)[:4]
    dates = [d for d in k.model.cubes[dim.cube].dimensions.values() if d.type == "time" and d.path != dim.path]
    named = [d.path for d in dates if len(stem) == 4 and any(w.startswith(stem) for w in facts.title_words(d))]
    return [(s, d) for s, d in fits if d.path in named] if named else fits


def _restates_a_measure(r: Reading, k: Knowledge, segment: Any) -> bool:
    wanted = facts.column_sql(segment.sql)
    return any(
        facts.column_sql(f) == wanted for p in r.measures for f in getattr(k.model.find_member(p), "filters", ())
    )


def _compare(r: Reading, k: Knowledge, m: Mention, said: re.Match[str]) -> None:
    dims = [d for t in m.of("dimension") if (d := k.model.find_member(t.path)) is not None and d.type == "time"]
    if not dims:
        return
    later = said.group(1).lower() in _LATER
    fits = _by_verb(r, k, dims[0], said.start(), _fitting(k, dims[0], later))
    if len(fits) != 1:
        options = ", ".join(s.path for s, _ in fits) or "none of its segments"
        r.refuse(f"'{said.group(0).strip()} {m.text}' compares two dates; the model says it with {options}")
        return
    segment = fits[0][0]
    if _restates_a_measure(r, k, segment):
        r.use((said.start(), m.end))  # "late rate ... received after the commit date": the measure's own filter
        return
    if segment.path not in r.segments:
        r.segments.append(segment.path)
    r.use((said.start(), m.end))
    r.notes.append(f"segment {segment.path}: {said.group(0).strip()!r} {m.text!r}")


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.refusal:
        return
    asides = [a.span() for a in ASIDE.finditer(r.text)]  # "(late = received after the commit date)" defines
    for m in r.mentions:
        said = _WORD.search(r.text[: m.start])
        if said is not None and free(r, m) and not m.of("value") and not any(a <= m.start < b for a, b in asides):
            _compare(r, k, m, said)
            if r.refusal:
                return

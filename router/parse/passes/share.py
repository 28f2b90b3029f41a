"""Pass: shares ("what share of revenue came from promotional parts", "percentage of customers with a
company", "各渠道营业额占比").

- grouped ("share of revenue by region"): every group's share of the total;
- of named values ("share of revenue from the USA"): grouped by their dimension, every share computed,
  the named values' rows kept;
- of a segment said of named rows ("percentage of the Rock tracks that were never sold"): the measure of
  those rows with the segment (the part) over the measure of those rows (the whole);
- of other restrictions (a segment, a pattern, a bound, "has a company"): the measure with them (the part)
  over the measure without them (the whole), in the same period;
- "<segment> rate" ("late delivery rate", "退货率") with no measure of that name is the share of the rows in
  the segment;
- with nothing to divide, the question is refused: a share needs a part.
"""

from __future__ import annotations

import re

from router.parse.context import Knowledge, Question
from router.parse.language import COMBINED, RATE_AFTER
from router.parse.nearby import free
from router.parse.reading import Filter, Mark, Reading

_RELATIVE = re.compile(r"\b(?:that|which|who|have|has|had|were|are|is|was)\b", re.IGNORECASE)


def _said_of_them(r: Reading) -> list[str]:
    """The segments said of the named rows after a relative word ("the Rock tracks *that were* never sold"):
    the part of a share whose whole is those rows."""
    valued = [m for m in r.mentions if m.of("value") and not free(r, m)]
    out = []
    for m in r.mentions:
        named = [t.path for t in m.of("segment") if t.path in r.segments]
        if named and valued and valued[0].end <= m.start and _RELATIVE.search(r.text[valued[0].end : m.start]):
            out += named
    return out


_SAID_OF = re.compile(
    r"\b(?:that|which|who|were|was|had|have|has|left|went|got|took)\b|\b\w{3,}ed\b|\b\w{3,}ing\b", re.IGNORECASE
)  # "share of flights *arriving* late": a participle says it of the rows too


def _compared_values_kept(r: Reading) -> None:
    """ "what share of orders came in via web or app": the values grouped by are shares of every row's total,
    not of their own sum: their filter becomes rows kept after the shares are computed."""
    for f in [f for f in r.filters if f.operator == "equals" and f.member in r.dimensions and len(f.values) > 1]:
        r.filters.remove(f)
        r.keep[f.member] = list(f.values)
        r.notes.append(f"share: every {f.member} computed, {', '.join(f.values)} kept")


def _within_groups(r: Reading, k: Knowledge, after: int) -> None:
    """ "what percentage of departed flights left more than an hour late, by origin": a bound, value or segment
    said of the rows after the share word ("that were", "left") is the part within each group, over the
    group's whole; without one, every group's share of the total."""
    bounds = [
        f
        for f in r.filters
        if f.operator in _BOUNDS
        and f.because
        and getattr(k.model.find_member(f.member), "kind", "") == "dimension"
        and _SAID_OF.search(r.text[after : max(after, r.text.find(f.because))])
    ]
    segments = [
        t.path
        for m in r.mentions
        for t in m.of("segment")
        if t.path in r.segments and m.start > after and _SAID_OF.search(r.text[after : m.start])
    ]
    valued = {
        t.path
        for m in r.mentions
        for t in m.of("value")
        if m.start > after and not free(r, m) and _SAID_OF.search(r.text[after : m.start])
    }  # "what share of each channel's orders were cancelled"
    bounds += [f for f in r.filters if f.operator == "equals" and f.member in valued and f.member not in r.dimensions]
    if bounds or segments:
        r.part, r.part_segments = bounds, list(dict.fromkeys(segments))
        r.notes.append(
            "share within each group: the measure with "
            + ", ".join([*(f.member for f in bounds), *r.part_segments])
            + " over the group's measure"
        )


_BOUNDS = ("gt", "gte", "lt", "lte", "between")


def _last_said(r: Reading, values: list[Filter]) -> Filter:
    """Of several named values, the one the question says last: the earlier ones qualify the whole
    ("Newark's departures"), the last one names the part ("went to Chicago O'Hare")."""

    def said_at(f: Filter) -> int:
        return max(
            (m.start for m in r.mentions for t in m.of("value") if t.path == f.member and str(t.value) in f.values),
            default=-1,
        )

    return max(values, key=said_at)


def _part_after(r: Reading, values: list[Filter], after: int) -> bool:
    """A segment and values said after the share word name one part together ("percentage of sales from
    video tracks (the MPEG-4 video format)"): the measure with them over the measure without; the values
    said before it qualify both."""
    segments = [t.path for m in r.mentions if m.start > after for t in m.of("segment") if t.path in r.segments]
    said = {(t.path, str(t.value)) for m in r.mentions if m.start > after and not free(r, m) for t in m.of("value")}
    part = [f for f in values if any((f.member, v) in said for v in f.values)]
    if not segments or not part:
        return False
    r.part, r.part_segments = part, list(dict.fromkeys(segments))
    r.notes.append(
        "share: the measure with "
        + ", ".join([*(f.member for f in part), *r.part_segments])
        + " over the measure without"
    )
    return True


def _segment_rate(r: Reading) -> None:
    """ "late delivery rate (by supplier region)": a rate word right after a segment's name, unused, is the
    share of the rows in the segment (within each group)."""
    for m in r.mentions:
        found = RATE_AFTER.match(r.text, m.end)
        named = [t.path for t in m.of("segment") if t.path in r.segments]
        mark = Mark("share", found.start(1), found.end(1), found.group(1)) if found else None
        if mark is not None and named and free(r, mark):
            r.share, r.part_segments = True, named
            r.use(mark.span)
            r.notes.append(f"share: '{m.text} {mark.text}' is the measure with {', '.join(named)} over the measure")
            return


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    marks = [m for m in r.marks_of("share") if free(r, m)]
    if r.intent != "aggregate" or not r.measures or r.refusal:
        return
    if not marks:
        _segment_rate(r)
        return
    comparison = q.understanding.comparison
    if r.marks_of("change") and comparison is not None and len(comparison.ranges) > 1:
        r.use(*(m.span for m in marks))  # "by what percentage did sales grow from 2023 to 2024": the change
        return
    r.share = True
    r.use(*(m.span for m in marks))  # "占全部销量的百分之多少": one share said in two places
    _compared_values_kept(r)
    if r.dimensions:
        _within_groups(r, k, marks[0].end)
        return
    rows = [f for f in r.filters if getattr(k.model.find_member(f.member), "kind", "") == "dimension"]
    values = [f for f in rows if f.operator == "equals"]
    if values and (said := _said_of_them(r)):  # "percentage of the Rock tracks that were never sold"
        r.part_segments = said
        r.notes.append(f"share: the measure with {', '.join(said)} over the measure of the named rows")
        return
    if values and _part_after(r, values, marks[0].end):  # "share of sales from video tracks (MPEG-4 video)"
        return
    if values and not (len(values[0].values) > 1 and COMBINED.search(r.text)):
        named = _last_said(r, values)  # "share of Newark's departures that went to O'Hare": O'Hare is the part
        r.filters.remove(named)
        r.dimensions.append(named.member)
        r.keep[named.member] = list(named.values)
        r.notes.append(f"share: every {named.member} computed, {', '.join(named.values)} kept")
        return
    if rows or r.segments:
        r.part = rows
        r.part_segments = list(r.segments)
        r.notes.append(
            "share: the measure with "
            + ", ".join([*(f.member for f in rows), *r.segments])
            + " over the measure without"
        )
        return
    r.refuse(f"'{marks[0].text}' of what? Name the part (a value, group or segment) to divide by the total")

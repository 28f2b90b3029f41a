"""Pass: which time dimension the question's periods and grain are on.

- "<word of a time dimension's title> <grain>" ("per ship year", "by order month") sets both;
- a time dimension named ("by ship date", "receipt date in 1997") is the one its periods filter; of several
  of one name, the one dating the measures asked; grouped by ("HR by season") with no grain, its dates
  are the groups (day grain);
- a verb naming one ("*shipped* in 1997", "*received* last month", "*ordered* in May": the first four
  letters of the verb begin a word of the dimension's title) does the same when the question has a period.
Otherwise each measure is dated by its own time dimension (``SemanticModel.time_dimension_for``) and a
listing by its cube's.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.language import EVENT_VERBS, STOPWORDS_EN, noun_of_verb
from router.parse.nearby import free, mark_before
from router.parse.passes.spans import calendar_unit
from router.parse.reading import Reading
from router.parse.text import ASIDE, name_key, words

_VERB = re.compile(r"^([a-z]{4,}?)(?:ed|ing)$")


def _joined(r: Reading, k: Knowledge, cube: str) -> bool:
    return not r.scope() or any(facts.joined(k.model, c, cube) for c in r.scope())


def _asides(r: Reading) -> list[tuple[int, int]]:
    """ "late (received after the commit date) ... shipped in April": a definition in parentheses dates nothing."""
    return [a.span() for a in ASIDE.finditer(r.text)]


def _by_verb(r: Reading, k: Knowledge) -> str | None:
    times = [d for d in k.model.dimensions() if d.type == "time" and d.public and _joined(r, k, d.cube)]
    skipped = [*r.used, *(x.span for x in r.mentions), *_asides(r)]
    for w in words(r.text):
        m = _VERB.match(w.raw.lower())
        if any(s <= w.start < e for s, e in skipped):
            continue
        if m is None:  # "did we hire", "did we ship": the word itself is a word of one time dimension's title
            if len(w.norm) < 3 or (w.raw.lower() in STOPWORDS_EN and w.raw.lower() not in EVENT_VERBS):
                continue
            said = noun_of_verb(w.raw, w.norm)  # "born": Birth date
            found = [d for d in times if said in set(name_key(d.title or d.name)) - {"date", "time"}]
        else:
            stem = m.group(1)[:4]
            found = [
                d for d in times if any(t.startswith(stem) for t in set(name_key(d.title or d.name)) - {"date", "time"})
            ]
        if len({d.path for d in found}) == 1:
            r.use((w.start, w.end))
            return found[0].path
    return None


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.refusal:
        return
    for mark in r.marks_of("dim_grain"):
        r.granularity, r.time_dimension = mark.data
        r.use(mark.span)
    periods = r.periods(q.understanding.time_ranges)
    timed = bool(periods or q.understanding.granularity or r.granularity)
    grained = bool(q.understanding.granularity)
    asides = [*_asides(r), *r.column_list]  # a date in a list of columns is shown, it dates nothing
    for m in r.mentions:
        if any(s <= m.start and m.end <= e for s, e in asides):
            continue
        times = _own_first(
            r,
            k,
            [
                t.path
                for t in m.of("dimension")
                if getattr(k.model.find_member(t.path), "type", "") == "time" and _joined(r, k, t.cube)
            ],
        )
        grouped = mark_before(r, m.span, ("group",))
        unit = calendar_unit(k.model.find_member(times[0])) if times else None
        if (
            times
            and free(r, m)
            and grouped
            and r.intent == "aggregate"
            and not (r.granularity or grained)
            and (unit is not None or not timed)
        ):
            # "HR by season": one group per date it holds, or per year where the model calls it a year; within
            # a period only a season the model calls a year ("win pct each season 2015-2020"): "1997年 ... 按发货
            # 日期算" says which date dates the period
            r.granularity, r.time_dimension = unit or "day", times[0]
            r.use(m.span, grouped.span)
            continue
        if times and free(r, m) and (timed or r.intent != "detail"):  # a listing shows a date it names
            r.time_dimension = r.time_dimension or times[0]
            r.use(m.span)
    if r.time_dimension is None and timed:
        r.time_dimension = _by_verb(r, k) or _lone_listed_date(r, k)
    if r.time_dimension:
        r.notes.append(f"periods on {r.time_dimension}")
    if timed:
        _dated(q, k)
    if r.intent == "detail" and not _contiguous(periods):
        r.refuse("rows of separate periods are listed one period at a time: ask for each period")


def _own_first(r: Reading, k: Knowledge, times: list[str]) -> list[str]:
    """Time dimensions of one name ("season" of several cubes): the one dating the measures asked first, then
    one of their cubes, then the others."""
    own = {k.model.time_dimension_for(m) for m in r.measures}
    cubes = {m.split(".", 1)[0] for m in r.measures}
    return sorted(times, key=lambda t: (t not in own, t.split(".", 1)[0] not in cubes))


def _lone_listed_date(r: Reading, k: Knowledge) -> str | None:
    """ "Staff who joined in 2003 - name, title and start date": the one date a list of columns asks for is the
    one the period is on (two, "with the ship and order dates", leave it to the cube's own)."""
    times = {
        t.path
        for m in r.mentions
        if r.listed_column(m.span)
        for t in m.of("dimension")
        if getattr(k.model.find_member(t.path), "type", "") == "time" and _joined(r, k, t.cube)
    }
    return times.pop() if len(times) == 1 else None


def _contiguous(ranges: list[Any]) -> bool:
    """Periods that follow one another without a gap ("in 2009 and 2010") can be listed as one span."""
    ordered = sorted(ranges, key=lambda t: t.start)
    return all((b.start - a.end).days <= 1 for a, b in itertools.pairwise(ordered))


def _dated(q: Question, k: Knowledge) -> None:
    """A period or grain asked of something the model does not date is refused, not ignored."""
    r = q.reading
    phrase = (
        ", ".join(t.label for t in r.periods(q.understanding.time_ranges)[:2])
        or r.granularity
        or q.understanding.granularity
    )
    if r.intent == "aggregate":
        undated = [m for m in r.measures if not (r.time_dimension or k.model.time_dimension_for(m))]
    elif r.intent == "detail" and r.listing:
        undated = [] if r.time_dimension or k.model.cube_time_dimension(r.listing) else [r.listing]
    else:
        undated = []
    if undated:
        names = ", ".join(
            getattr(k.model.find_member(p), "title", "") or (k.model.cubes[p].title if p in k.model.cubes else p) or p
            for p in undated
        )
        r.refuse(f"the model has no date for {names}, so '{phrase}' cannot be applied")

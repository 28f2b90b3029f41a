"""Pass: an average per row of another cube that the model has no measure for ("average number of tracks per
album", "on average, how many tracks were on an invoice"): the count or sum asked, over the row count of the
cube named after "per", "an" or "each", in one query; the answer is their ratio (``Reading.per``).
"""

from __future__ import annotations

import re

from router.aggregate.drill import segments_holding
from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.nearby import free
from router.parse.reading import Mention, Reading

_PER = re.compile(
    r"(?:\bper|\beach|\bevery|\b(?:on|in|for)\s+(?:an?|each|every)|\ban?|每(?:个|一|位|张|家)?)\s*$", re.IGNORECASE
)
_ADDS_UP = ("count", "sum")  # a distinct count over all rows is no sum of per-row counts


def _counted_cubes(k: Knowledge, m: Mention, own: str) -> list[tuple[str, list[str]]]:
    """The cubes a mention names, each with the segments its rows are picked by: as a cube (none), or by a
    count of its rows whose filters are segments ("a completed order": the orders of the completed segment)."""
    counts = [
        (t.path.split(".", 1)[0], segments)
        for t in m.of("measure")
        if (found := k.model.find_member(t.path)) is not None
        and found.type == "count"
        and found.filters
        and (segments := segments_holding(k.model, found)) is not None
    ]
    named: list[tuple[str, list[str]]] = [(t.path, []) for t in m.of("cube")]
    return [(c, segments) for c, segments in [*named, *counts] if c != own]


def per_cube(r: Reading, k: Knowledge, start: int, measure: str) -> Mention | None:
    """The mention of another cube, joined to ``measure``'s and with a row count, that "per"/"an"/"each" puts
    after ``start``."""
    own = measure.split(".", 1)[0]
    for m in r.mentions:
        cubes = [c for c, _ in _counted_cubes(k, m, own)]
        if (
            m.start >= start
            and cubes
            and _PER.search(r.text[max(start, m.start - 12) : m.start])
            and facts.joined(k.model, own, cubes[0])
            and facts.row_count(k.model, cubes[0])
        ):
            return m
    return None


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    averages = [m for m in r.marks_of("avg") if free(r, m)]
    if not r.refusal and not r.per and len(r.measures) > 1 and not averages:
        _unexpressed_ratio(r, k)
    if r.refusal or r.per or not r.measures or not averages:
        return
    member = k.model.find_member(r.measures[0])
    if getattr(member, "type", "") not in _ADDS_UP:
        return
    found = per_cube(r, k, 0 if r.language == "zh" else averages[0].end, r.measures[0])  # "每位读者平均"
    # the only other measure is the count that names the rows ("units in a completed order")
    if found is not None and set(r.measures[1:]) <= {t.path for t in found.of("measure")}:
        r.measures = r.measures[:1]
        take(r, k, found, r.measures[0])
        r.use(averages[0].span)


_PER_MEASURE = re.compile(r"\bper\s*$|每(?:个|位|名)?\s*$", re.IGNORECASE)


def _unexpressed_ratio(r: Reading, k: Knowledge) -> None:
    """ "revenue per paying customer": one measure per another that no measure of the model is would be
    answered as the two side by side, read as the answer: refused, saying what is missing."""
    for m in r.mentions:
        named = [t.path for t in m.of("measure") if t.path in r.measures]
        if named and not m.of("cube") and _PER_MEASURE.search(r.text[max(0, m.start - 8) : m.start]):
            other = next(p for p in r.measures if p not in named)
            title = getattr(k.model.find_member(other), "title", None) or other
            r.refuse(f"the model has no measure of {title} per {m.text!r}: add one to the model, or ask for both")
            return


def take(r: Reading, k: Knowledge, found: Mention, measure: str) -> None:
    """``measure`` per row of the cube ``found`` names: both measures asked, the ratio shown."""
    cube, segments = _counted_cubes(k, found, measure.split(".", 1)[0])[0]
    r.segments += [s for s in segments if s not in r.segments]  # "in a completed order": that count's segments
    r.per = facts.row_count(k.model, cube)
    r.measures = [measure, *([r.per] if r.per and r.per != measure else [])]
    r.time_dimension = r.time_dimension or k.model.time_dimension_for(measure)  # one query: both dated alike
    r.use(found.span)
    r.notes.append(f"{measure} per {cube} row: over {r.per}")

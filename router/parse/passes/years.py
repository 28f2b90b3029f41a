"""Pass: a period said of a number column that holds years ("planes *built* before 1990", "tracks
*released* in 2012 or later"): the column's title has "year" and a word said right before the period
("Year built"), so the period bounds that column (``gte``/``lte`` on the year) instead of a date."""

from __future__ import annotations

import re
from typing import Any

from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.language import STOPWORDS_EN
from router.parse.nearby import words_before
from router.parse.reading import Filter, Reading
from router.parse.text import GLUE, norm_word, within
from router.understanding.timeexpr import EARLIEST
from router.understanding.types import TimeRange

_YEAR = norm_word("year")
_DURATION = re.compile(r"\(\s*years?\s*\)|\bin years\b|\byears? old\b", re.IGNORECASE)  # "Age (years)": a length


def _year_columns(r: Reading, k: Knowledge) -> list[Any]:
    scope = r.scope()
    cubes = [c for c in k.model.cubes if not scope or any(facts.joined(k.model, s, c) for s in scope)]
    return [
        d
        for c in cubes
        for d in k.model.cubes[c].dimensions.values()
        if d.type == "number"
        and d.public
        and not d.primary_key
        and _YEAR in facts.title_words(d)
        and not _DURATION.search(d.title or "")
    ]


def _said_before(r: Reading, at: int, columns: list[Any]) -> tuple[Any, tuple[int, int]] | None:
    """The year column a word of the few words before ``at`` titles ("built" -> "Year built")."""
    for w in reversed(words_before(r.text, at)):
        if w.norm in GLUE or w.norm == _YEAR or w.raw.lower() in STOPWORDS_EN or w.raw.isdigit():
            continue
        if within((w.start, w.end), r.used):  # "won the most games in 2019": the games counted, no final game
            continue
        found = [d for d in columns if w.norm in facts.title_words(d) - {_YEAR}]
        if len(found) == 1:
            return found[0], (w.start, w.end)
    return None


def _bounds(member: str, period: TimeRange, today: Any) -> list[Filter]:
    out = []
    if period.start > EARLIEST:
        out.append(Filter(member, "gte", [str(period.start.year)], period.label))
    if period.end < today or period.end.year > today.year or period.start.year == period.end.year:
        out.append(Filter(member, "lte", [str(period.end.year)], period.label))
    return out


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.refusal:
        return
    columns = _year_columns(r, k)
    for period in q.understanding.time_ranges:
        at = r.text.find(period.phrase) if period.phrase else -1
        found = _said_before(r, at, columns) if at >= 0 and columns else None
        if found is None or period.start.month != 1 or period.start.day != 1:
            continue
        column, word = found
        r.filters += _bounds(column.path, period, q.understanding.today)
        r.year_periods.append(period.phrase)
        r.use(word)
        r.notes.append(f"'{period.phrase}' bounds the year {column.path}")

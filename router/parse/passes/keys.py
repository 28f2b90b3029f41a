"""Pass: rows named by their key: a cube's name followed by a number ("order 7", "part 1234", "invoice
#98", "发票8579") filters that cube's primary key; a key dimension's name followed by a number ("order key
42", "customer id 17") filters that dimension. Numbers inside time expressions are no keys, except a bare
year-like number right after a singular name ("part 2000": no date, a row; "parts 2000" stays a year)."""

from __future__ import annotations

import re

from router.parse.context import Knowledge, Question
from router.parse.reading import Filter, Mention, Reading
from router.parse.text import overlaps

_KEY_AFTER = re.compile(
    r"\s*(?:#|no\.?\s*|number\s*|num\s*|id\s*|key\s*|号码?\s*|编号\s*|为\s*)?#?\s*"
    r"(\d{1,12})(?![\d.])"
    r"(?!\s*(?:年|月|日|号|(?:st|nd|rd|th)\b|%|\.\d|[,\d]*\s*(?:k|m|万|千|元|dollars?)\b))",
    re.IGNORECASE,
)


# "100号发票": the number and 号 before the noun of the cube
_KEY_BEFORE = re.compile(r"(?<![\d.])(\d{1,12})\s*号\s*的?\s*$")


def _key_number(r: Reading, m: Mention) -> tuple[re.Match[str], bool] | None:
    """The key number after (or, "100号发票", before) ``m``, and whether a time expression took it too."""
    found = _KEY_AFTER.match(r.text, m.end) or (_KEY_BEFORE.search(r.text[: m.start]) if m.of("cube") else None)
    bounds = [b.span for b in r.marks_of("bound")]  # "tracks 10 minutes or longer": a bound's number
    if found is None or any(overlaps(found.span(1), t) for t in bounds):
        return None
    dated = any(overlaps(found.span(1), t) for t in r.time_spans)
    if dated and not _bare_year(r, m, found):
        return None
    return found, dated


_GROUPED_BEFORE = re.compile(r"\b(?:by|per|each|every|across|top\s+\d+)\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)


def _bare_year(r: Reading, m: Mention, found: re.Match[str]) -> bool:
    """A year-like number one space after a singular English name of rows ("part 2000", "order 1998"), not
    after a group-by ("revenue by region 1997" is 1997's revenue by region) nor after a name that is also a
    measure's ("revenue 2024" is 2024's revenue)."""
    return (
        r.language == "en"
        and not m.of("measure")
        and r.text[m.end : found.start(1)] == " "
        and not m.text.lower().endswith("s")
        and not _GROUPED_BEFORE.search(r.text[: m.start])
    )


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    for m in r.mentions:
        keyed = _key_number(r, m)
        if keyed is None:
            continue
        found, dated = keyed
        member = None
        for t in m.of("dimension"):
            dim = k.model.find_member(t.path)
            if dim is not None and dim.type == "number" and (dim.primary_key or re.search(r"key|id|number", dim.name)):
                member = dim.path
                break
        if member is None:
            for t in m.of("cube"):
                keys = k.model.cubes[t.path].primary_keys
                if keys:
                    member = keys[0].path
                    break
        if member is None:
            continue
        if dated:
            r.key_periods.append(found.group(1))  # "part 2000": no year
        said = (min(m.start, found.start()), max(m.end, found.end()))
        r.filters.append(Filter(member, "equals", [found.group(1)], f"{r.text[said[0] : said[1]]!r} names a row"))
        r.use(m.span, said)
        r.keyed.append(member.split(".", 1)[0])

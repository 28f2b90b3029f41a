"""The columns a list of columns asks for (``Reading.column_list``, found by ``passes.tail``), where an item
is not already a whole name of the model: "priority" of orders is the orders' "Order priority" (the title
less the cube's own words), not the "Shipping priority"; "year" of planes is "Year built" (a title's words
in parentheses are its unit, not its name); "余额" of customers is its "账户余额"; "name" is the rows' label.

The columns come from the listed cube first, then from the cubes its rows refer to (many-to-one joins, the
nearest first); an item several columns fit equally well names none, and stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from router.aggregate.members import aliases
from router.parse import facts
from router.parse.context import Knowledge
from router.parse.reading import Reading, Span
from router.parse.text import ASIDE, GLUE, has_cjk, name_key

_NAME = name_key("name")
# an item asking for the date of the listed rows ("when she paid", "date")
DATE_ITEM = re.compile(r"^(?:when\b|什么时候|何时|dates?$|times?$)", re.IGNORECASE)
_ZH_UNIT = re.compile(r"(?:的)?(?:分钟|小时|秒|天|日|年|月|周)数?$")


def _said(member: Any) -> set[str]:
    """The words a column is called by: its title without asides ("Plane age (years)"), else its name."""
    title = ASIDE.sub(" ", getattr(member, "title", "") or "")
    return set(name_key(title)) or set(name_key(member.name))


def _best(candidates: list[tuple[Any, int]]) -> Any | None:
    """The one candidate with the lowest rank; None when two share it."""
    if not candidates:
        return None
    low = min(rank for _, rank in candidates)
    best = [m for m, rank in candidates if rank == low]
    return best[0] if len(best) == 1 else None


def _english(k: Knowledge, cubes: list[str], said: set[str], context: set[str]) -> Any | None:
    """The column whose title holds the item's words; of several, the one whose other words are the cube's
    own ("Order priority" of orders) or said elsewhere in the question ("delay" beside "departure")."""
    for cube in cubes:
        own = facts.title_words(k.model.cubes[cube])
        dims = [d for d in k.model.cubes[cube].dimensions.values() if d.public and said <= _said(d)]
        # the fewer words a title has beyond the item, the cube's own name and the question, the closer it is
        found = _best([(d, len(_said(d) - said - own - context)) for d in dims])
        if found is not None:
            return found
        if dims:
            return None  # "priority" of a cube with two equally fitting priorities: ask, do not pick
    return None


def chinese(k: Knowledge, cubes: list[str], item: str, prefer: Collection[str] = ()) -> Any | None:
    """The column one of whose Chinese names holds the item ("余额" in "账户余额"), of several the one in
    ``prefer`` (the columns the answer has already: "按延误" after "到达延误"); else the column the item's
    English word names ("数量": quantity, from the bilingual analytics words)."""
    english = aliases().get(item)
    if english and (found := _english(k, cubes, set(name_key(english)) - GLUE, set())) is not None:
        return found
    named = {
        e.target
        for surface, entries in k.lexicon.by_text.items()
        if item in surface
        for e in entries
        if e.target.kind == "dimension"
    }
    for cube in cubes:
        found = {t.path for t in named if t.cube == cube}
        if len(found) > 1 and len(found & set(prefer)) == 1:
            found &= set(prefer)
        if len(found) == 1:
            return k.model.find_member(found.pop())
        if found:
            return None
    return None


def resolve(r: Reading, k: Knowledge, cube: str, taken: list[Span]) -> list[str]:
    """The members the list's items not yet used (outside ``taken``) name; marks each item it resolves used."""
    cubes = facts.referred(k.model, cube)
    spoken = set(name_key(r.text))
    out: list[str] = []
    for start, end in r.column_list:
        if any(s <= start and end <= e for s, e in taken):
            continue
        text = r.text[start:end]
        if DATE_ITEM.match(text):  # "when she paid", "date": the date of the listed rows
            member = k.model.find_member(r.time_dimension or k.model.cube_time_dimension(cube) or "")
        elif has_cjk(text):
            prefer = [f.member for f in r.filters] + [member for member, _ in r.order]
            unitless = _ZH_UNIT.sub("", text)  # "延误分钟数": the delay, in minutes
            member = chinese(k, cubes, text, prefer) or (chinese(k, cubes, unitless, prefer) if unitless else None)
        else:
            said = set(name_key(text)) - GLUE
            label = facts.label(k.model, cube, r.language) if set(_NAME) == said else None
            context = spoken - said
            member = k.model.find_member(label) if label else (_english(k, cubes, said, context) if said else None)
        if member is not None:
            out.append(member.path)
            r.use((start, end))
    return out

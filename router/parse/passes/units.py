"""Pass: a duration measure shown in the unit the question asks ("longest track per genre, in minutes",
"最长的是多少分钟") when the model has no twin of it in that unit (``measures._units`` takes a twin first).

The measure's own unit is the one its title names ("Longest track (ms)"); the rows are converted after the
query (``Reading.units``: measure -> unit asked) and the column says the unit it is in.
"""

from __future__ import annotations

import re

from router.parse.context import Knowledge, Question
from router.parse.language import UNIT_EN, UNIT_SECONDS, title_unit

_ASKED = re.compile(
    r"\bin\s+(hours?|minutes?|seconds?|days?)\b|[(（](?:in\s+)?(hours?|minutes?|seconds?|days?)[)）]|"
    r"(?:多少|几)个?(小时|分钟|秒|天)|[(（](小时|分钟|秒|天)[)）]|按(小时|分钟|秒|天)",
    re.IGNORECASE,
)


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    found = _ASKED.search(r.text)
    if found is None or r.intent == "detail":
        return
    asked = next(g for g in found.groups() if g)
    unit = asked.lower().rstrip("s") if asked.isascii() else UNIT_EN[asked]
    for measure in r.measures:
        own = title_unit(k.model.find_member(measure))
        if own is not None and UNIT_SECONDS[own] != UNIT_SECONDS[unit]:
            r.units[measure] = unit
            r.notes.append(f"{measure} shown in {unit}s (its title says {own})")
    if r.units or any(title_unit(k.model.find_member(m)) == unit for m in r.measures):
        r.use(found.span())

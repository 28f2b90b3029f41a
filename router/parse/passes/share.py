"""Pass: shares ("what share of revenue came from promotional parts", "percentage of customers with a
company", "各渠道销售额占比").

- grouped ("share of revenue by region"): every group's share of the total;
- of named values ("share of revenue from the USA"): grouped by their dimension, every share computed,
  the named values' rows kept;
- of other restrictions (a segment, a pattern, a bound, "has a company"): the measure with them (the part)
  over the measure without them (the whole), in the same period;
- with nothing to divide, the question is refused: a share needs a part.
"""

from __future__ import annotations

from router.parse.context import Knowledge, Question
from router.parse.language import COMBINED
from router.parse.nearby import free


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    marks = [m for m in r.marks_of("share") if free(r, m)]
    if not marks or r.intent != "aggregate" or not r.measures or r.refusal:
        return
    comparison = q.understanding.comparison
    if r.marks_of("change") and comparison is not None and len(comparison.ranges) > 1:
        r.use(*(m.span for m in marks))  # "by what percentage did sales grow from 2023 to 2024": the change
        return
    r.share = True
    r.use(marks[0].span)
    if r.dimensions:
        return
    rows = [f for f in r.filters if getattr(k.model.find_member(f.member), "kind", "") == "dimension"]
    values = [f for f in rows if f.operator == "equals"]
    if values and not (len(values[0].values) > 1 and COMBINED.search(r.text)):
        named = values[0]
        r.filters.remove(named)
        r.dimensions.append(named.member)
        r.keep[named.member] = list(named.values)
        r.notes.append(f"share: every {named.member} computed, {', '.join(named.values)} kept")
        return
    if rows or r.segments:
        r.part = rows
        r.part_segments = list(r.segments)
        r.notes.append("share: the measure with " + ", ".join([*(f.member for f in rows), *r.segments])
                       + " over the measure without")
        return
    r.refuse(f"'{marks[0].text}' of what? Name the part (a value, group or segment) to divide by the total")

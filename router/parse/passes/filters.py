"""Pass: what the question restricts: values, bounds, signs, text patterns, segments; and what the model
cannot restrict (a negation: "never", "without") is refused.

- A value ("Germany", "AUTOMOBILE", "浙江") filters its dimension; values of one dimension are one filter
  (any of them). A value of several dimensions goes to the one joined to what is asked, whose cube the
  question names, whose title's words stand near it ("*billed* in the USA"); when two stay equal the
  question is refused with both named, so the user can say which.
- A bound ("above 9,000", "at least 5", "超过38万", "between 10 and 20") restricts the numeric name before
  it (a dimension: rows; a measure: groups, HAVING), or counts the cube named after it ("more than 5
  orders": groups whose row count passes). With no name beside it, it bounds the listed cube's amount
  column (the numeric column its sum measure adds up).
- A sign ("negative balance", "余额为负") is a bound at zero.
- A text pattern ("type starting with PROMO", "names containing Love") filters the string dimension before.
- A segment named ("urgent orders", "promotional parts") is applied unless it was read as the measure.
"""

from __future__ import annotations

import re
from typing import Any

from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.language import (
    HOW_MANY_UNITS,
    MONEY_VERBS,
    STOPWORDS_EN,
    TENTHS_BOUND,
    UNIT_SECONDS,
    noun_of_verb,
    number_text,
    title_unit,
)
from router.parse.nearby import after, before, close, free, restated, words_before
from router.parse.nesting import nested_child
from router.parse.passes.listing import column_spans, in_column_list
from router.parse.passes.order import adjective_member
from router.parse.reading import Filter, Mark, Mention, Reading, Span, Target
from router.parse.text import ASIDE, GLUE, has_cjk, irregular_form, name_key, within, words
from router.understanding._calendar import EN_NUMBERS

_LINK = r"with|whose|where|having|of|is|are|was|were|has|have|had|a|an|the|that|an?|total|their|its|at|for|in"


def _joined(k: Knowledge, cube: str, cubes: list[str]) -> bool:
    return not cubes or any(cube in facts.reach(k.model, c) for c in cubes)


def _value_score(t: Target, m: Mention, r: Reading, k: Knowledge, rivals: set[str]) -> float:
    """Glossary values first, then the cube the question names or asks about (a key's value is on both
    sides of a join, "N318JB" in flights.tailnum and planes.tailnum: the asked cube's side), then the
    dimension whose title's words stand near. A value naming one row of the asked cube by its label,
    when another cube (``rivals``) has it too, is that other cube's ("how many albums does <a name that is
    an artist and an album> have": the artist; of several such cubes, one the asked rows belong to), unless
    the cube's name qualifies it ("the album <name>")."""
    named_cubes = {c.path for x in r.mentions if x is not m for c in x.of("cube")}
    named_cubes |= set(r.scope())
    member = k.model.find_member(t.path)
    near = {noun_of_verb(w.raw, w.norm) for w in words(r.text[max(0, m.start - 30) : m.end + 30])}  # "-born"
    score = 1.0 if t.source == "glossary" else 0.0
    qualifier = before(r, m.span)
    qualified = (
        qualifier is not None
        and not r.text[qualifier.end : m.start].strip()  # "the album <name>", not "albums does <name>"
        and any(c.path == t.cube for c in qualifier.of("cube"))
    )
    own_row = t.path == facts.label(k.model, t.cube, r.language) and bool(rivals - {t.cube}) and not qualified
    asked = named_cubes | {n.cube for x in r.mentions if x is not m for n in x.of("measure")}
    score += 2.0 if t.cube in named_cubes and not own_row else 0.0
    score += 0.5 if own_row and _owner(k, t.cube, asked) else 0.0
    title = set(name_key(getattr(member, "title", "") or "")) - {"name"}
    if own_row:  # the asked cube's own name near its row's name does not say the row is one of them
        title -= facts.title_words(k.model.cubes[t.cube])
    score += 1.0 * len(title & near)
    said = {w.norm for w in words_before(r.text, m.start, reach=24)}  # "*billed* in the USA"
    score += 1.5 * len(title & said - {"in", "to", "of"})
    return score


def _owner(k: Knowledge, cube: str, asked: set[str]) -> bool:
    """Rows of an ``asked`` cube belong to ``cube`` (a many-to-one join to it)."""
    return bool(k.model.referrers(cube) & asked)


def _excluded(r: Reading, m: Mention) -> Mark | None:
    """ "excluding cancelled orders", "除了浙江": the exclusion word before a value (in its clause)."""
    for mark in r.marks_of("exclude"):
        gap = r.text[mark.end : m.start]
        if mark.end <= m.start and len(gap) <= 30 and not re.search(r"[,;.?!，。；？]", gap):
            return mark
    return None


def _one_name(r: Reading) -> dict[int, set[str]]:
    """ "Steve Johnson's": values written side by side name one row: the cubes holding all of them (by the
    id of each mention of such a run)."""
    out: dict[int, set[str]] = {}
    run: list[Mention] = []
    for m in [*r.mentions, None]:
        if m is not None and m.of("value") and (not run or r.text[run[-1].end : m.start] == " "):
            run.append(m)
            continue
        common = set.intersection(*({t.cube for t in x.of("value")} for x in run)) if len(run) > 1 else set()
        for x in run if common else []:
            out[id(x)] = common
        run = [m] if m is not None and m.of("value") else []
    return out


def _value_runs(r: Reading) -> list[list[Mention]]:
    """Value mentions written side by side, one space apart ("Nancy Edwards")."""
    runs: list[list[Mention]] = []
    for m in r.mentions:
        if not m.of("value"):
            continue
        if runs and r.text[runs[-1][-1].end : m.start] == " ":
            runs[-1].append(m)
        else:
            runs.append([m])
    return runs


def _named_by_column(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """ "who reports to Nancy Edwards": words of values right after the name of a computed string column
    that is none of their own columns ("reports to": the manager's name) are that column's value when the
    warehouse holds them there, said together."""
    if k.holds is None:
        return
    for run in _value_runs(r):
        qualifier = before(r, run[0].span, extra=r"is|=|:")
        if qualifier is None or not free(r, qualifier) or not all(free(r, m) for m in run):
            continue
        text, own = r.text[run[0].start : run[-1].end], {t.path for m in run for t in m.of("value")}
        for t in qualifier.of("dimension"):
            if t.path not in own and _joined(k, t.cube, cubes) and k.holds(t.path, text):
                r.filters.append(Filter(t.path, "equals", [text], f"{qualifier.text} {text}"))
                r.use(qualifier.span, *(m.span for m in run))
                break


def _values(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    chosen: dict[tuple[str, str], list[str]] = {}
    together = _one_name(r)
    restating = restated(r)
    for m in r.mentions:
        if within(m.span, restating):
            r.use(m.span)
            continue
        targets = [
            t
            for t in m.of("value")
            if _joined(k, t.cube, cubes) and (id(m) not in together or t.cube in together[id(m)])
        ]
        if not targets or not free(r, m) or (m.of("measure") and len(m.targets) > len(m.of("value"))):
            continue
        rivals = {t.cube for t in targets}
        scored = sorted(((_value_score(t, m, r, k, rivals), t) for t in targets), key=lambda p: -p[0])
        top = _nested([t for s, t in scored if s == scored[0][0]], r, k, m)
        members = list(dict.fromkeys(t.path for t in top))
        if len(members) > 1 and len({t.cube for t in top}) > 1:
            titles = " or ".join(repr(getattr(k.model.find_member(p), "title", p) or p) for p in members[:3])
            r.refuse(f"'{m.text}' is a value of {titles}: say which one you mean")
            r.asked = m.span
            return
        best = top[0]
        exclusion = _excluded(r, m)
        operator = "notEquals" if exclusion else "equals"
        if exclusion:
            r.use(exclusion.span)
        for value in dict.fromkeys(str(t.value) for t in top if t.path == best.path):  # "JUMBO": every JUMBO ...
            if value not in chosen.setdefault((best.path, operator), []):
                chosen[(best.path, operator)].append(value)
        r.use(m.span)
        qualifier = before(r, m.span)  # "the album Let There Be Rock", "customer Jane Doe"
        if qualifier is not None and any(t.path == best.cube for t in qualifier.of("cube")):
            r.use(qualifier.span)
        _said_of(r, k, m, best)
    for (member, operator), values in chosen.items():
        r.filters.append(Filter(member, operator, values, "named values"))


def _nested(top: list[Target], r: Reading, k: Knowledge, m: Mention) -> list[Target]:
    """ "Cubs": of a team's name and its franchise's name tied, the team's when each team so named is of a
    franchise so named (``router.parse.nesting``); else ``top`` (the reply asks)."""
    values: dict[str, list[str]] = {}
    for t in top:
        values.setdefault(t.path, []).append(str(t.value))
    child = nested_child(k.model, k.nests, values, r.language)
    if child is None:
        return top
    r.notes.append(f"{m.text!r}: the rows of {child} so named, each of a row so named it belongs to")
    return [t for t in top if t.path == child]


def _said_of(r: Reading, k: Knowledge, m: Mention, target: Target) -> None:
    """ "*billed* to Germany", "*based* in Oslo": the words right before a value that are words of its
    dimension's title ("Billing country") say which dimension it is: they are used."""
    title = facts.title_words(k.model.find_member(target.path))
    for w in reversed(words_before(r.text, m.start, reach=24)):
        if w.norm in title and w.norm not in ("of", "in", "to"):
            r.use((w.start, w.end))


def _numeric(m: Mention | None, k: Knowledge, cubes: list[str], rows: bool, amounts: bool) -> Any | None:
    """The numeric member a mention names for a bound: a number dimension; a measure (groups, HAVING) unless
    the rows are listed or the measure is only the count of a cube the mention names; with ``amounts``, else
    the amount of a cube it names."""
    if m is None:
        return None
    named_cubes = {t.path for t in m.of("cube")}
    for t in [*m.of("dimension"), *m.of("measure")]:
        member = k.model.find_member(t.path)
        if member is None or not facts.is_numeric(member) or not _joined(k, member.cube, cubes):
            continue
        if member.kind == "measure" and (rows or (member.cube in named_cubes and member.type == "count")):
            continue
        return member
    for cube in named_cubes if amounts else ():
        if (amount := facts.amount_column(k.model, cube)) is not None:
            return amount
    return None


_MEASURE_WORD = re.compile(r"[笔单个次件位家张首条名种款]")


def _count_bound(r: Reading, mark: Mark, named: Mention) -> bool:
    """ "more than 5 invoices", "超过5张发票": the number counts the cube right after it (in Chinese only with a
    measure word: "超过38万的发票" bounds the invoices' amount); "曲目超过20首": in Chinese, the cube right
    before it when a measure word follows the number."""
    if not named.of("cube"):
        return False
    zh = r.language == "zh" or has_cjk(mark.text)
    if named.end <= mark.start:  # the cube before the bound
        return (
            zh
            and not r.text[named.end : mark.start].strip()
            and bool(_MEASURE_WORD.match(mark.text[-1:]) or _MEASURE_WORD.match(r.text[mark.end : mark.end + 1]))
        )
    gap = r.text[mark.end : named.start]
    if zh:
        return bool(_MEASURE_WORD.search(mark.text[-2:] + gap)) and "的" not in gap
    return not gap.strip() or gap.strip().lower() in ("distinct", "different", "unique", "separate", "such")


def _in_units_of(member: Any, values: list[float], seconds: float) -> list[float]:
    """Numbers said in one unit, converted to the unit the member's title names ("Arrival delay (minutes)")."""
    unit = title_unit(member)
    return values if unit is None else [v * seconds / UNIT_SECONDS[unit] for v in values]


def _bound_member(r: Reading, mark: Mark, k: Knowledge, cubes: list[str]) -> tuple[Any | None, str]:
    """(member, "row" | "group" | "count") the bound restricts; the name it uses is marked used, first one said
    inside it ("400 seats or more")."""
    inside = next((m for m in r.mentions if mark.start <= m.start and m.end <= mark.end and free(r, m)), None)
    following = inside or after(r, mark.span)
    for counts in (m for m in (following, before(r, mark.span)) if m is not None and _count_bound(r, mark, m)):
        counted = facts.row_count(k.model, counts.of("cube")[0].path)
        if counted:
            r.use(counts.span)
            return k.model.find_member(counted), "count"
    if (named := adjective_member(mark.text, r, k, cubes)) is not None:
        return named, "row"  # "tracks longer than 5 minutes": the length, not the tracks' amount
    if (verbed := _verbed(r, mark, k, cubes, following)) is not None:
        return verbed, "group"
    prior = before(r, mark.span, extra=_LINK)
    # a column named on either side before a named cube's amount; the one right after the number first
    # ("pitchers with 35+ *saves*": the number is of saves)
    right_after = (
        following is not None and following.start >= mark.end and not r.text[mark.end : following.start].strip()
    )
    sides = (following, prior) if right_after else (prior, following)
    for amounts in (False, True):
        for m in sides:
            member = _numeric(m, k, cubes, rows=r.intent == "detail", amounts=amounts)
            if member is not None and m is not None:
                r.use(m.span)
                return member, "group" if getattr(member, "kind", "") == "measure" else "row"
    member = (
        _delay(r, mark, k, cubes) or _worded(r, mark, k, cubes) or _spent(r, mark, k, cubes) or _timed(mark, k, cubes)
    )
    return member, "group" if getattr(member, "kind", "") == "measure" else "row"


def _verbed(r: Reading, mark: Mark, k: Knowledge, cubes: list[str], following: Mention | None) -> Any | None:
    """ "teams that lost 110 or more games": an irregular verb right before the bound whose noun titles one
    measure of the answer's cubes (lost: Losses, won: Wins) is what the bound is of; the things counted after the number
    ("games") say nothing more."""
    said = [w for w in words_before(r.text, mark.start, reach=12) if w.raw.lower() not in STOPWORDS_EN]
    if not said or not irregular_form(said[-1].raw):  # "priced", "ordered": regular verbs say a row's column
        return None
    verb = said[-1]
    noun = noun_of_verb(verb.raw, verb.norm)
    found = [m for c in cubes for m in k.model.cubes[c].measures.values() if m.public and noun in facts.title_words(m)]
    if len(found) != 1:
        return None
    r.use((verb.start, verb.end))
    # "games" of "lost 110 games", where the model names games: the things counted; a word the model does not
    # know stays unknown (a refusal, not a guess)
    if following is not None and following.start >= mark.end and not r.text[mark.end : following.start].strip():
        r.use(following.span)
    return found[0]


def _timed(mark: Mark, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "tracks that run over 50 minutes": a duration that names no column bounds the one column of the
    answer's cubes measured in a unit of time (Length (ms)); else it is refused."""
    data = mark.data if isinstance(mark.data, tuple) else ()
    if len(data) < 3 or not data[2]:
        return None
    timed = [
        d
        for c in cubes
        for d in k.model.cubes[c].dimensions.values()
        if d.public and d.type == "number" and title_unit(d) is not None
    ]
    # one quantity in several units ("Length (ms)", "Length (minutes)"): the column in the bound's unit
    same = {re.sub(r"\s*\(.*\)$", "", d.title or d.name).lower() for d in timed}
    said = [d for d in timed if UNIT_SECONDS[title_unit(d) or ""] == data[2]]
    return timed[0] if len(timed) == 1 else (said or timed)[0] if len(same) == 1 else None


def _spent(r: Reading, mark: Mark, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "customers who have spent at least $45 in total across their invoices": a sum of money said of rows
    with no amount of their own bounds the total of the amount of the one joined cube that has one (among
    the cubes the question names, if it names any); a verb of money right before it is used."""
    if not _CURRENCY.search(mark.text) or len(cubes) != 1 or facts.amount_column(k.model, cubes[0]) is not None:
        return None
    named = {t.path for m in r.mentions for t in m.of("cube")} - {cubes[0]}
    near = [
        c for c in k.model.cubes if 1 in (facts.reach(k.model, cubes[0]).get(c), facts.reach(k.model, c).get(cubes[0]))
    ]
    joined = [c for c in (named or near) if c != cubes[0] and facts.joined(k.model, cubes[0], c)]
    totals = [
        m
        for c in joined
        if (amount := facts.amount_column(k.model, c)) is not None
        for m in facts.measures_over(k.model, c, facts.column(amount), ("sum",))[:1]
    ]
    if len(totals) != 1:
        return None
    verb = next((w for w in reversed(words_before(r.text, mark.start, reach=16)) if w.raw.lower() in MONEY_VERBS), None)
    if verb is not None:
        r.use((verb.start, verb.end))
    return totals[0]


_CURRENCY = re.compile(r"[$¥€£]|元|块|美元|\b(?:dollars?|usd|rmb|yuan|eur|euros?)\b", re.IGNORECASE)


def _worded(r: Reading, mark: Mark, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "products *listed* under 500" (List price), "invoices came in above *$15*": a word right before the
    bound that titles one numeric column of the answer's cube; else a sum of money, or a bound said right
    after a segment of the rows, bounds the one cube's amount."""
    own = {w for c in cubes for w in facts.title_words(k.model.cubes[c])}  # "flights" is no "Flight number"
    said = [
        w
        for w in words_before(r.text, mark.start)
        if w.norm not in GLUE and w.raw.lower() not in STOPWORDS_EN and w.norm not in own
    ]
    for w in reversed(said):
        if (member := facts.column_titled(k.model, cubes, {w.norm})) is not None:
            r.use((w.start, w.end))
            return member
    if len(cubes) == 1 and (_CURRENCY.search(mark.text) or _said_of_segment(r, mark, cubes[0])):
        return facts.amount_column(k.model, cubes[0])
    return None


def _said_of_segment(r: Reading, mark: Mark, cube: str) -> bool:
    """ "urgent orders over 300k": a bound right after a segment of the rows is on their amount (the segment
    still filters them: its words are not used here)."""
    prior = before(r, mark.span)
    return prior is not None and any(t.cube == cube for t in prior.of("segment")) and not prior.of("value")


_LATE = re.compile(r"^\s*(?:late|early|delayed|behind|overdue)\b|^\s*(?:的)?(?:延误|晚点|延迟)", re.IGNORECASE)


def _delay(r: Reading, mark: Mark, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "arrived more than 5 hours late": a duration before late/early bounds a delay column, the one whose
    title shares a verb of the question ("arrived" -> Arrival delay)."""
    late = _LATE.match(r.text[mark.end :])
    if late is None:
        return None
    delays = [
        d
        for c in cubes
        for d in k.model.cubes[c].dimensions.values()
        if d.type == "number" and "delay" in (d.title or d.name).lower()
    ]
    said = {w.norm[:5] for w in words(r.text)}
    # the title's words without its unit ("Arrival delay (minutes)": arrival, not the minutes of "15 minutes")
    named = {d.path: {w.norm for w in words(ASIDE.sub(" ", d.title or d.name))} - {"delay"} for d in delays}
    chosen = [d for d in delays if any(t[:5] in said for t in named[d.path])] or delays
    if chosen:
        r.use((mark.end, mark.end + late.end()))
    return chosen[0] if chosen else None


def _count_rows_of_listing(r: Reading, k: Knowledge, counted: str, mark: Mark) -> None:
    """ "suppliers with more than 10 invoices", "超过5张发票的供应商": the rows asked for (the listed cube, else
    the cube named before the bound, or after it in Chinese) become groups whose count passes."""
    r.measures.append(counted)
    listed = r.listing if r.intent == "detail" else None
    if listed is None:
        cubes = [m for m in r.mentions if m.of("cube") and m.of("cube")[0].cube != counted.split(".", 1)[0]]
        side = [m for m in cubes if (m.start > mark.end if r.language == "zh" else m.end <= mark.start)]
        if side:
            listed = side[-1].of("cube")[0].path
            r.use(side[-1].span)
    if listed:
        label = facts.label(k.model, listed, r.language) or facts.primary_key(k.model, listed)
        if label and label not in r.dimensions:
            r.dimensions.append(label)
    r.listing = None
    r.intent = "aggregate"


def _in_segment(r: Reading, k: Knowledge, mark: Mark, cubes: list[str]) -> tuple[Mention | None, Any | None]:
    """A sign inside a segment's name ("negative balance"): (that name, None) when the segment applies (its
    cube is in reach: the segment says it); else (that name, the column its other words title) for the listed
    rows' own column ("suppliers with a negative balance" where the segment is on customers); (None, None)
    for a sign in no segment's name."""
    outer = next((m for m in r.mentions if m.start <= mark.start and mark.end <= m.end and m.of("segment")), None)
    if outer is None or any(_joined(k, t.cube, cubes) for t in outer.of("segment")):
        return outer, None
    said = {w.norm for w in words(r.text[outer.start : outer.end])} - {w.norm for w in words(mark.text)}
    return outer, facts.column_titled(k.model, cubes, said)


def _group_asked_rows(r: Reading, k: Knowledge, mark: Mark) -> None:
    """ "Which of today's orders have 4 or more order lines?": a bound on a measure over the rows a
    "which"/"list" asks for groups them (never under "how many", which counts the groups)."""
    if r.marks_of("count"):
        return
    asked = [
        m
        for m in r.mentions
        if m.end <= mark.start
        and m.of("cube")
        and free(r, m)
        and any(x.end <= m.start for x in r.marks_of("which", "list"))
    ]
    if asked:
        cube = asked[0].of("cube")[0].path
        label = facts.label(k.model, cube, r.language) or facts.primary_key(k.model, cube)
        if label:
            r.dimensions.append(label)
            r.use(asked[0].span)
            r.notes.append(f"group by {label} (the rows asked for, {asked[0].text!r})")


def _exists(r: Reading, counted: str, op: str, values: list[float]) -> bool:
    """ "at least one order" beside a measure over the orders themselves: the bound only says they exist."""
    cube = counted.split(".", 1)[0]
    at_least_one = (op == "gte" and values == [1]) or (op == "gt" and values == [0])
    return at_least_one and any(m.split(".", 1)[0] == cube and m != counted for m in r.measures)


def _bounds(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    for mark in r.marks_of("bound", "sign"):
        if not free(r, mark):
            continue
        op, values, *unit = mark.data
        inside, own = _in_segment(r, k, mark, cubes) if mark.kind == "sign" else (None, None)
        if inside is not None and own is None:
            continue  # the segment's own definition applies (or nothing does: its words stay unknown)
        member, how = (own, "row") if own is not None else _bound_member(r, mark, k, cubes)
        if member is not None and unit:  # "more than 5 hours late" on a delay in minutes
            values = _in_units_of(member, values, unit[0])
        said = mark.text
        if member is not None and (sign := _percent_sign(r, mark)) is not None:
            values, said = _as_fraction(member, values), r.text[mark.start : sign[1]].strip()
            r.use(sign)
        if member is None:
            r.refuse(f"nothing in the model is bounded by '{mark.text}': name the column it applies to")
            return
        if how == "count" and _exists(r, member.path, op, values):
            r.use(mark.span)  # "distinct customers who placed at least one order": counted over orders already
            r.notes.append(f"{mark.text!r}: every row the measure counts has one")
            continue
        if how == "count" and member.path not in r.measures:
            _count_rows_of_listing(r, k, member.path, mark)
        if how == "group" and not r.dimensions:
            _group_asked_rows(r, k, mark)
        numbers = [values] if isinstance(values, str) else [number_text(v) for v in values]
        if op == "between":
            r.filters += [
                Filter(member.path, "gte", numbers[:1], said),
                Filter(member.path, "lte", numbers[1:], said),
            ]
        else:
            r.filters.append(Filter(member.path, op, numbers, said))
        r.use(mark.span)
        if inside is not None:
            r.use(inside.span)
        r.notes.append(f"{member.path} {op} {' '.join(numbers)} ({mark.text!r})")


_PERCENT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(%|percent\b)")
_PERCENT_SIGN = re.compile(r"\s*(?:%|percent\b|per cent\b|pct\b)", re.IGNORECASE)


def _percent_sign(r: Reading, mark: Mark) -> Span | None:
    """The percent sign of a bound ("above 5%", "超过50%"), right after its number: its span, else None."""
    if mark.text.rstrip().endswith("%") or TENTHS_BOUND.search(mark.text):  # "超过五成": more than 50%
        return (mark.end, mark.end)
    found = _PERCENT_SIGN.match(r.text, mark.end)
    return found.span() if found else None


def _as_fraction(member: Any, values: Any) -> Any:
    """ "a late rate above 5%": the bound of a measure formatted as a percent is the fraction (0.05) its
    values are; a column that holds percents as numbers (5.0) keeps them."""
    if getattr(member, "format", None) != "percent" or isinstance(values, str):
        return values
    return [v / 100 for v in values]


def _percents(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """ "had the full 10% discount": a percentage right before a numeric column is its value (a fraction
    when the column is formatted as a percent)."""
    for found in _PERCENT.finditer(r.text):
        if any(m.start <= found.start() < m.end for m in r.marks_of("bound", "share")):
            continue
        m = after(r, found.span())
        member = _numeric(m, k, cubes, rows=True, amounts=True)
        if member is None or m is None or getattr(member, "kind", "") != "dimension":
            continue
        value = float(found.group(1)) / (100 if member.format == "percent" else 1)
        r.filters.append(Filter(member.path, "equals", [number_text(value)], found.group(0)))
        r.use(found.span(), m.span)


def _patterns(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    for mark in r.marks_of("string_op"):
        op, value = mark.data
        if str(value).lower() in STOPWORDS_EN:  # "contain the song X": an article, no pattern; the named
            if any(not free(r, x) and x.of("value") and 0 <= x.start - mark.end <= 30 for x in r.mentions):
                r.use(mark.span)  # value after it is what the rows contain
            continue
        if any(not free(r, x) and x.of("value") and x.start < mark.end and mark.start < x.end for x in r.mentions):
            r.use(mark.span)  # "包含Acme品牌工具的发票": rows holding a value the filters already name
            continue
        m = before(r, mark.span, extra=_LINK)
        dims = [k.model.find_member(t.path) for t in m.of("dimension")] if m else []
        if m is None:
            continue
        dims = [d for d in dims if d is not None and d.type == "string" and _joined(k, d.cube, cubes)]
        if not dims:
            continue
        r.filters.append(Filter(dims[0].path, op, [value], mark.text))
        r.use(mark.span, m.span)


def _named_in(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """ "parts with 'forest' in the name", "albums that have Live in the title": the rows whose column (the
    answer's label when only "name" or "title" is said) contains the word."""
    for mark in r.marks_of("string_in"):
        op, value, column = mark.data
        said = set(name_key(column)) - {"name", "title"}
        found = [
            t.path
            for m in (k.lexicon.find(column) if said else [])
            for t in m.of("dimension")
            if t.cube in cubes and getattr(k.model.find_member(t.path), "type", "") == "string"
        ]
        label = next((p for c in cubes if (p := facts.label(k.model, c, r.language))), None)
        member = found[0] if found else label if not said else None
        if member is None:
            continue
        r.filters.append(Filter(member, op, [value], mark.text))
        r.use(mark.span)
        r.notes.append(f"{member} {op} {value!r} ({mark.text!r})")


def _restates_measure(r: Reading, k: Knowledge, segment: str) -> bool:
    """ "late" beside the measure "late shipment rate": the segment is the measure's own definition."""
    words_of = facts.title_words(k.model.find_member(segment)) - {"order", "item", "line"}
    return any(words_of and words_of <= facts.title_words(k.model.find_member(m)) for m in r.measures)


_HAVE_A = re.compile(r"\b(?:have|has|had|with)\s+(?:an?|any|some)\s*$", re.IGNORECASE)
# "a cruising speed on file", "with a recorded delay": the column is filled in, whatever its type
_ON_FILE = re.compile(
    r"\s*(?:on (?:file|record)|recorded|filled in|(?:is |are )?(?:known|given|present))\b", re.IGNORECASE
)


def _present(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """ "customers who have a company", "with an email", "planes that have a speed on file": the named column
    is filled in (``set``)."""
    for m in r.mentions:
        if not free(r, m) or not _HAVE_A.search(r.text[max(0, m.start - 20) : m.start]):
            continue
        said = _ON_FILE.match(r.text, m.end)
        dims = [k.model.find_member(t.path) for t in m.of("dimension")]
        dims = [d for d in dims if d is not None and (d.type == "string" or said) and d.cube in cubes]
        if dims and not m.of("cube"):
            r.filters.append(Filter(dims[0].path, "set", [], m.text))
            r.use(m.span, *([said.span()] if said else []))


def _segments(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """Segments the question names; a name in a list of columns that also names a dimension is the column
    ("with the departure delay": the delay shown, not the delayed flights kept)."""
    columns = column_spans(r)
    for m in r.mentions:
        if not free(r, m) or (m.of("dimension") and in_column_list(r, m.span, columns)):
            continue
        if r.intent == "detail" and _HOW_MANY_UNITS.search(r.text, 0, m.start):
            r.use(m.span)  # "- route and how many minutes late": the delay shown in minutes, no filter of late rows
            continue
        for t in m.of("segment"):
            if _restates_measure(r, k, t.path):
                r.use(m.span)
                break
            if _joined(k, t.cube, cubes) and t.path not in r.segments:
                r.segments.append(t.path)
                r.use(m.span)
                break


_HOW_MANY_UNITS = re.compile(HOW_MANY_UNITS + r"$", re.IGNORECASE)
# "the 10 worst departure delays": a number before a superlative counts the rows ranked, it is no value
_RANKING_AFTER = re.compile(r"\s+(?:most|least|worst|best|top|bottom|[a-z]{2,}est)\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(
    r"(?<![\w.,#$-])\d+(?:\.\d+)?(?![\w.,%-]|\.\d)|\b(?:" + "|".join(w for w in EN_NUMBERS if len(w) > 2) + r")\b",
    re.IGNORECASE,
)  # "4 engines", "four engines"


def _equal_numbers(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """ "tracks priced 0.99", "planes with 4 (four) engines": a bare number right after (or right before) a
    number column's name is that column's value."""
    taken = [*r.used, *(m.span for m in r.marks), *(m.span for m in r.mentions)]
    for found in _BARE_NUMBER.finditer(r.text):
        span = found.span()
        if any(t[0] <= span[0] < t[1] for t in taken) or _RANKING_AFTER.match(r.text, span[1]):
            continue
        prior = before(r, span, extra=r"=|:|of|is|at")
        following = after(r, span)
        for m, gap in ((prior, r"\s*(?:=|:|of|is|at)?\s*"), (following, r"\s+")):
            if (
                m is None
                or not free(r, m)
                or not re.fullmatch(gap, r.text[m.end : span[0]] if m is prior else r.text[span[1] : m.start])
            ):
                continue
            member = next(
                (
                    d
                    for t in m.of("dimension")
                    if (d := k.model.find_member(t.path)) is not None
                    and d.type == "number"
                    and not d.primary_key
                    and _joined(k, d.cube, cubes)
                ),
                None,
            )
            if member is not None:
                value = str(EN_NUMBERS.get(found.group(0).lower(), found.group(0)))
                r.filters.append(
                    Filter(member.path, "equals", [value], r.text[min(m.start, span[0]) : max(m.end, span[1])])
                )
                r.use(span, m.span)
                break


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.refusal:
        return
    cubes = r.scope()
    for step in (
        _named_in,
        _named_by_column,
        _values,
        _bounds,
        _equal_numbers,
        _percents,
        _patterns,
        _present,
        _segments,
    ):
        step(r, k, cubes)
        if r.refusal:
            return
    negations = [m for m in r.marks_of("negation") if free(r, m) and not _absent(q, k, m, cubes)]
    if negations:
        r.refuse(
            f"questions about what did not happen ('{negations[0].text}') are not supported yet: ask for "
            "what did happen instead"
        )


def _absent(q: Question, k: Knowledge, mark: Mark, cubes: list[str]) -> bool:
    """ "artists that don't have a single album", "customers who never placed an order": the rows of the one cube
    asked about with no row of the cube named after the negation, when the first joins the second (Cube's LEFT
    JOIN from it leaves that cube's key unset). Not with a period, which would date the missing rows."""
    r = q.reading
    named = next((m for m in r.mentions if m.start >= mark.end and free(r, m)), None)
    if (
        len(cubes) != 1
        or named is None
        or not named.of("cube")
        or q.understanding.time_ranges
        or not close(r.text, mark.span, named.span, _EVENT_GAP)
    ):
        return False
    missing = named.of("cube")[0].path
    key = facts.primary_key(k.model, missing)
    if missing == cubes[0] or key is None:
        return False
    if missing not in facts.reach(k.model, cubes[0]):
        r.refuse(
            f"'{mark.text} {named.text}' asks for {cubes[0]} rows with no {missing} row: the model needs a "
            f"join from {cubes[0]} to {missing} (one_to_many) to answer it"
        )
        return False
    r.filters.append(Filter(key, "notSet", [], f"{mark.text} {named.text}"))
    r.use(mark.span, named.span)
    r.notes.append(f"{cubes[0]} rows with no {missing} row ({key} not set)")
    return True


_EVENT_GAP = r"\w+(?:ed|ght|id|ne)|been|had|have|has|a|an|any|single|one|yet|ever|made|got|\w+过|下过|有过|过"

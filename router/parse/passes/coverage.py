"""Pass: the words of the question that nothing used: no name of the model, no language word, no time,
no number the reading took. They are the reading's ``unknown`` words; the caller decides what a
question with unknown words gets (``router.parse.verdict``).

English words are looked up one by one (normalised); the Chinese left between used spans is segmented
(jieba) and its function words dropped.
"""

from __future__ import annotations

import re

from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.language import (
    EVENT_VERBS,
    EVENT_VERBS_ZH,
    FILLER_PHRASES,
    HOW_MANY_UNITS,
    PERSON_WORD,
    STOPWORDS_EN,
    STOPWORDS_ZH,
    UNIT_SECONDS,
    names_a_number,
    title_unit,
    unit_seconds,
)
from router.parse.nearby import free
from router.parse.passes.measures import UNIT_WORDS
from router.parse.reading import Mark, Reading, Span
from router.parse.text import ASIDE, irregular_form, norm_word, past_form, stems, within, words
from router.understanding.terms import segment

# language words whose meaning changes the numbers: when no pass used them, the reading does not answer
HONOURED = (
    "avg",
    "median",
    "share",
    "distinct",
    "bound",
    "sign",
    "string_op",
    "string_in",
    "negation",
    "write",
    "exclude",
)
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
_ZH_STOP = frozenset(STOPWORDS_ZH)
_STOP_STEMS = stems(" ".join(STOPWORDS_EN))


def _cjk_leftover(text: str, start: int, end: int, used: list[tuple[int, int]]) -> list[tuple[str, int]]:
    """The Chinese of ``text[start:end]`` outside the used spans, segmented, function words dropped, with
    where each word starts."""
    chars = "".join(text[i] if not within((i, i + 1), used) else " " for i in range(start, end))
    out = []
    for piece in re.finditer(r"\S+", chars):
        at = start + piece.start()
        for w in segment(piece.group(0)):
            if w.strip() and w not in _ZH_STOP and not all(c in _ZH_STOP for c in w):
                out.append((w, at))
            at += len(w)
    return out


def _members(r: Reading) -> set[str]:
    return {
        *r.measures,
        *r.dimensions,
        *r.segments,
        *(f.member for f in r.filters),
        *r.columns,
        *(m for m, _ in r.order),
        *([r.time_dimension] if r.time_dimension else []),
    }


def _restated(r: Reading) -> None:
    """A name said again ("invoices ... 发票") of a cube or member the reading already uses is used."""
    members = _members(r)
    cubes = {*r.scope(), *(m.split(".", 1)[0] for m in members)}
    for m in r.mentions:
        if any((t.kind == "cube" and t.path in cubes) or (t.kind != "cube" and t.path in members) for t in m.targets):
            r.use(m.span)


_GLOSSED = re.compile(r"(?:(?<!\w)(?:[A-Z][\w'’.-]*\s*){1,3}|[\u3400-\u9fff]{1,8})$")


def _glossed(r: Reading) -> list[tuple[int, int]]:
    """ "Anchorage (ANC)", "旧金山（SFO）": a name right before parentheses that hold a value the reading
    filters by is the same thing said in words: known."""
    values = {str(v).lower() for f in r.filters for v in f.values}
    out = []
    for aside in ASIDE.finditer(r.text):
        inner = aside.group(0)[1:-1].strip().lower()
        if inner and inner in values and (m := _GLOSSED.search(r.text[: aside.start()].rstrip())):
            out.append(m.span())
        elif any(f.because and f.because.lower() in inner for f in r.filters if len(f.because) > 3):
            # "live recordings (have Live in the title)": the words before a definition the filters use
            out += [m.span() for m in _DEFINED.finditer(r.text[: aside.start()].rstrip())]
    return out


_DATE_TAIL = re.compile(r"\s+(?:date|dates|time|times|day|timestamp)\b", re.IGNORECASE)


def _date_tails(r: Reading, k: Knowledge) -> list[tuple[int, int]]:
    """ "price and launch date" where the column is "launched on": "date" after the words that named a date
    column the reading uses restates what kind of column it is."""
    if not any((d := k.model.find_member(c)) is not None and d.type == "time" for c in r.columns):
        return []
    return [m.span() for m in _after_used(r, _DATE_TAIL)]


_TIME_WORD = re.compile(r"\b(?:date|dates|time|times|when)\b|日期|时间", re.IGNORECASE)


def _shown_dates(r: Reading, k: Knowledge) -> list[tuple[int, int]]:
    """ "show amount, reason and date": a bare date word asks for the date the listed rows show (their time
    dimension among the columns)."""
    if r.intent != "detail" or not any(
        (d := k.model.find_member(c)) is not None and d.type == "time" for c in r.columns
    ):
        return []
    return [m.span() for m in _TIME_WORD.finditer(r.text)]


_UNIT_TAIL = re.compile(r"\s*(?:in\s+)?(hours?|minutes?|mins?|seconds?|secs?|ms|小时|分钟|秒|毫秒)数?", re.IGNORECASE)


def _units_restated(r: Reading, k: Knowledge) -> list[tuple[int, int]]:
    """ "到达延误分钟数", "delay minutes": a unit of time right after a name the reading uses, when a column or
    measure of the answer is in that unit ("Arrival delay (minutes)"), says what the column holds."""
    members = [k.model.find_member(p) for p in (*r.columns, *r.measures, *(f.member for f in r.filters))]
    units = {UNIT_SECONDS[u] for m in members if m is not None and (u := title_unit(m)) is not None}
    asked = [m.span() for m in _UNIT_ASKED.finditer(r.text) if unit_seconds(m.group(1)) in units]
    asked = asked if r.intent == "detail" else []
    return [m.span() for m in _after_used(r, _UNIT_TAIL) if unit_seconds(m.group(1)) in units] + asked


# "... and how many minutes late": a listing's column in that unit, asked of each row
_UNIT_ASKED = re.compile(HOW_MANY_UNITS + r"\w+", re.IGNORECASE)


def _after_used(r: Reading, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """The matches of ``pattern`` that begin right where a used span ends."""
    return [m for end in {e for _, e in r.used} if (m := pattern.match(r.text, end))]


_DEFINED = re.compile(r"(?<!\w)\w[\w'’-]*(?:\s+\w[\w'’-]*)?$")  # the one or two words before it


def _about_events(r: Reading, k: Knowledge) -> bool:
    """The reading is about rows of things that happen (a cube with a date): "sold", "paid" restate them."""
    cubes = {*r.scope(), *(p.split(".", 1)[0] for p in _members(r))}
    return (
        bool(r.time_dimension)
        or any(k.model.time_dimension_for(m) for m in r.measures)
        or any(k.model.cube_time_dimension(c) for c in cubes)
    )


def _verb_of(word: str, r: Reading, k: Knowledge) -> bool:
    """ "把供应它的供应商列出来": a Chinese word that begins the name of a cube or member the reading uses
    (供应 in 供应商) is that name said as a verb."""
    if len(word) < 2:
        return False
    used = {*_members(r), *r.scope(), *(p.split(".", 1)[0] for p in _members(r))}
    return any(
        surface.startswith(word) and len(surface) > len(word) and any(e.target.path in used for e in entries)
        for surface, entries in k.lexicon.by_text.items()
    )


_TO_VALUE = re.compile(r"\s+(?:in|into|by|with|from|as|at|on|under)\s+(?:an?\s+|the\s+)?", re.IGNORECASE)


def _verb_of_value(r: Reading, word: str, end: int) -> bool:
    """ "parts *packed* in a MED BOX", "lines *sent* by AIR": a participle right before a preposition and a
    value the reading filters by says how the rows have that value, nothing more."""
    found = _TO_VALUE.match(r.text, end) if word.lower().endswith(("ed", "ent", "own", "ade")) else None
    if found is None:
        return False
    filtered = {(f.member, v) for f in r.filters for v in f.values}
    return any(
        m.start == found.end() and not free(r, m) and any((t.path, str(t.value)) in filtered for t in m.of("value"))
        for m in r.mentions
    )


_RELATIVE = re.compile(r"\b(?:who|that|which)\s+(?:(?:have|has|had)\s+)?$", re.IGNORECASE)


def _verb_of_bounded(r: Reading, word: str, start: int, end: int) -> bool:
    """ "pitchers who *threw* at least 162 innings", "teams that *scored* over 900 runs": a verb in the past
    between "who"/"that" and a bound on a measure the reading uses says how the measure came, nothing more."""
    if not past_form(word) or not _RELATIVE.search(r.text[:start]):
        return False
    bound = next((b for b in r.marks_of("bound") if not r.text[end : b.start].strip() and not free(r, b)), None)
    bounded = {f.member for f in r.filters} | set(r.measures)
    return bound is not None and any(
        not r.text[bound.end : m.start].strip() and not free(r, m) and any(t.path in bounded for t in m.of("measure"))
        for m in r.mentions
    )


def _unused_columns(r: Reading) -> list[Span]:
    """The spans of column names no pass used ("have four *engines*"): a name, never a verb formed on one."""
    return [m.span for m in r.mentions if m.targets and all(t.kind == "dimension" for t in m.targets) and free(r, m)]


def _inflects_a_name(word: str, k: Knowledge, particle: str = "") -> bool:
    """ "supplies" beside a model that says "supplier", "charging" beside "charge", "billed" beside "Billing
    country": a verb formed on a name's stem (the first five letters of an inflected word of six or more, or
    its whole stem) is that name said as a verb."""
    if word.endswith(("ed", "ing")) and len(word) >= 5 and norm_word(word) in k.lexicon.word_stems:
        return True
    if word.endswith(("ed", "ing")) and particle and norm_word(word) + particle in k.lexicon.word_stems:
        return True  # "signed up" beside "Signup date"
    if word.endswith(("ed", "ing")) and particle == "up":
        return True  # "racked up", "suited up": a phrasal verb of getting or taking part says nothing more
    if irregular_form(word) and norm_word(word) in k.lexicon.word_stems:
        return True  # "has he won" beside "Wins": an irregular form of a name's verb
    if len(word) < 6 or not word.isalpha() or not word.endswith(("ed", "ing", "es", "s")) or UNIT_WORDS.fullmatch(word):
        return False
    return word[:5] in k.lexicon.stems


_PARTICLE = re.compile(r"\s+(up|in|out|on|off)\b", re.IGNORECASE)


def _particle(text: str, at: int) -> str:
    found = _PARTICLE.match(text, at)
    return found.group(1).lower() if found else ""


def _ranking_span(q: Question) -> list[tuple[int, int]]:
    """ "which 5", "top 10": the number of the ranking phrase is its limit."""
    ranking = q.understanding.ranking
    if not ranking or not ranking.phrase:
        return []
    at = q.reading.text.lower().find(ranking.phrase.lower())
    return [(at, at + len(ranking.phrase))] if at >= 0 else []


def _ungrouped_bound(q: Question, k: Knowledge) -> None:
    """ "how many albums have more than 20 tracks": a bound on a measure with nothing to group by would bound
    the grand total (one HAVING over everything); with the count of another cube's rows asked beside it, the
    rows of that cube passing the bound are counted (:func:`_counted_groups`), else it is refused."""
    r = q.reading
    if r.intent != "aggregate" or q.understanding.granularity or r.refusal:
        return
    bounded = {f.member for f in r.filters if getattr(k.model.find_member(f.member), "kind", "") == "measure"}
    _rows_counted_by_name(r, k, bounded)
    if not bounded or (q.understanding.comparison is None and _counted_groups(r, k, bounded)) or r.dimensions:
        return
    first = next(f for f in r.filters if f.member in bounded)
    r.refuse(
        f"'{first.because}' bounds {first.member} of each row or group, and the question "
        "groups nothing: ask which rows pass it (e.g. 'which ... have ...') to list them"
    )


def _rows_counted_by_name(r: Reading, k: Knowledge, bounded: set[str]) -> None:
    """ "有多少发票金额超过500": a count word right before the name of the one bounded measure, a name that
    begins with its cube's (发票 in 发票金额), counts that cube's rows (whose measure passes the bound)."""
    if len(bounded) != 1 or any(m not in bounded for m in r.measures):
        return
    path = next(iter(bounded))
    cube = path.split(".", 1)[0]
    counted = facts.row_count(k.model, cube)
    named = next((m for m in r.mentions if any(t.path == path for t in m.of("measure"))), None)
    if counted is None or named is None:
        return
    if not any(x.end <= named.start and not r.text[x.end : named.start].strip() for x in r.marks_of("count")):
        return
    if any(
        (m.start, m.end) == (0, n) and any(t.path == cube for t in m.of("cube"))
        for n in range(len(named.text) - 1, 0, -1)
        for m in k.lexicon.find(named.text[:n])
    ):
        r.measures.insert(0, counted)


def _counted_groups(r: Reading, k: Knowledge, bounded: set[str]) -> bool:
    """The one measure not bounded counts the rows of a cube the bounded measures reach (its row count, or a
    distinct count of a column naming its rows), and nothing else is grouped but those rows: the reading
    groups by that cube's key and counts the groups (``Reading.counted``)."""
    free = [m for m in r.measures if m not in bounded]
    upper = next((f for f in r.filters if f.member in bounded and f.operator in ("lt", "lte")), None)
    if upper is not None and len(free) == 1:  # "fewer than 2 orders": rows with none are in no group to count
        r.refuse(
            f"'{upper.because.strip()}' counts rows with few {upper.member}, but the rows with none are not in "
            "the groups the model's joins give: ask how many have at least one, or list them"
        )
        return True
    cube = _counted_cube(k, free[0], r.dimensions) if len(free) == 1 else None
    key = facts.primary_key(k.model, cube) if cube else None
    if (
        cube is None
        or key is None
        or r.compared_segments
        or r.share
        or not all(facts.joined(k.model, cube, m.split(".", 1)[0]) for m in bounded)
    ):
        return False
    r.counted, r.dimensions, r.order = free[0], [key], []
    r.measures = list(dict.fromkeys(f.member for f in r.filters if f.member in bounded))
    r.notes.append(f"{free[0]}: the {cube} rows whose {', '.join(sorted(bounded))} pass the bound, counted")
    return True


def _counted_cube(k: Knowledge, measure: str, grouped: list[str]) -> str | None:
    """The cube whose rows ``measure`` counts: its own (a row count) or the one whose key it counts distinct
    values of ("Ordering customers"); the rows grouped by its key or label only."""
    member = k.model.find_member(measure)
    own = measure.split(".", 1)[0]
    if facts.row_count(k.model, own) == measure:
        cube: str | None = own
    elif getattr(member, "type", "").startswith("count_distinct"):
        cube = next(
            (
                c
                for c in k.model.cubes
                if c != own
                and facts.primary_key(k.model, c)
                and (
                    facts.column(k.model.find_member(facts.primary_key(k.model, c))) == facts.column(member)
                    or facts.fk_column(k.model, own, c) == facts.column(member)  # o_custkey -> customer
                )
            ),
            None,
        )
    else:
        return None
    named = {facts.primary_key(k.model, cube), facts.label(k.model, cube)} if cube else set()
    return cube if all(d in named for d in grouped) else None


_ANAPHOR = re.compile(r"\b(?:that|this|those|these|the same)\s+$|(?:该|这个|那个|这些|那些)$", re.IGNORECASE)


def _referred(r: Reading) -> None:
    """ "who supplies *that part*": a cube named after a word pointing back names rows another part of the
    question names (a mixed question's aggregate restricts them); the reading answers only once a filter
    says which (``verdict``)."""
    for m in r.mentions:
        cubes = [t.path for t in m.of("cube")]
        if cubes and free(r, m) and _ANAPHOR.search(r.text[max(0, m.start - 10) : m.start]) and cubes[0] != r.listing:
            r.referred.append(cubes[0])
            r.use(m.span)


def _unapplied(r: Reading) -> list[str]:
    """ "how many customers bought in our *stores*? *completed orders* only": a value or a segment the
    question names that no pass applied (the measure's cube cannot be filtered by it) is not honoured, though
    its words are the model's (they are no unknown words)."""
    if r.intent is None:
        return []
    return [m.text for m in r.mentions if (m.of("value") or m.of("segment")) and free(r, m) and not m.of("measure")]


def _nobody(r: Reading) -> list[str]:
    """ "who bought the most tracks": an aggregate asked of someone that groups by nothing would answer one
    number where the question asks who; the question word is not honoured."""
    if r.intent != "aggregate" or r.dimensions or r.counted:
        return []
    return [m.text for m in r.marks_of("which") if PERSON_WORD.match(m.text) and free(r, m) and not _relative(r, m)]


def _relative(r: Reading, mark: Mark) -> bool:
    """ "customers *who* live in Canada": the word names the rows before it, it asks nothing."""
    before = r.text[: mark.start].rstrip()
    return any(m.end == len(before) for m in r.mentions) or bool(re.search(r"\b(?:those|people|anyone|ones)$", before))


def _unranked(q: Question) -> list[str]:
    """ "top 3 customers by total spend" read as a plain listing: a ranking that set no order (or a number of
    rows that set no limit) was not honoured."""
    r, ranking = q.reading, q.understanding.ranking
    if (
        ranking is None
        or r.intent is None
        or (r.intent == "aggregate" and not r.dimensions and not q.understanding.granularity)
    ):
        return []
    if not r.order or (names_a_number(ranking.phrase) and r.limit is None):
        return [ranking.phrase]
    return []


_EACH = re.compile(r"^(?:(?:for\s+)?(?:each|every)|per|各|各个|每个|每种|每家)$", re.IGNORECASE)


def _ungrouped_each(r: Reading) -> list[str]:
    """ "average temperature at each of the three airports" answered as one number: an aggregate that groups
    nothing (by no dimension, no period) has not honoured an "each" that no pass used."""
    if r.intent != "aggregate" or r.dimensions or r.granularity or r.counted or r.per or r.compared_segments:
        return []
    return [m.text for m in r.marks_of("group") if _EACH.match(m.text) and free(r, m)]


_DOWN = re.compile(r"^(?:fewest|least|quietest|最少)$", re.IGNORECASE)
_END_TO_END = re.compile(r"^\s*(?:to|through|->|到|至)\s*$", re.IGNORECASE)


def _both_ends(q: Question, k: Knowledge) -> list[str]:
    """ "the most and least expensive item": a question asking for both extremes, answered by one order or
    one extreme, has not honoured the other ("from highest to lowest" orders, it asks for no extreme)."""
    r = q.reading
    ends = [
        (m, m.kind == "min" or (m.kind == "most" and bool(_DOWN.match(m.text))))
        for m in r.marks_of("max", "min", "most")
    ]
    ups, downs = [m for m, down in ends if not down], [m for m, down in ends if down]
    pairs = [(u, d) for u in ups for d in downs if not (u.start < d.end and d.start < u.end)]
    if (
        r.intent is None
        or not pairs
        or any(_END_TO_END.match(r.text[min(u.end, d.end) : max(u.start, d.start)]) for u, d in pairs)
    ):
        return []
    kinds = {getattr(k.model.find_member(m), "type", "") for m in r.measures}
    if {"max", "min"} <= kinds:
        return []
    u, d = pairs[0]
    return [f"{u.text} and {d.text}" if u.start < d.start else f"{d.text} and {u.text}"]


def _owners_of_values(r: Reading, k: Knowledge) -> list[tuple[int, int]]:
    """ "CHINA customers' orders", "中国供应商的供货量": a cube named beside a value the reading filters by, on
    the join path from what is measured or listed to that value's column, says whose value it is."""
    scope = r.scope()
    filtered = {f.member.split(".", 1)[0] for f in r.filters}
    out = []
    for m in r.mentions:
        cubes = [t.path for t in m.of("cube")]
        if not cubes or not free(r, m) or m.of("measure"):
            continue
        between = [
            c
            for c in cubes
            for s in scope
            if c in facts.reach(k.model, s) and any(f == c or f in facts.reach(k.model, c) for f in filtered)
        ]
        if between:
            out.append(m.span)
    return out


def _acronym(raw: str, text: str) -> bool:
    """ "US", "IT": a language word written in capitals inside a question that is not all capitals names
    something (a country, a department), it is not the pronoun."""
    return len(raw) > 1 and raw.isupper() and not text.isupper()


# "each of the three airports": a number after "the" restates how many there are; any other number word a
# pass did not use is unknown, as a number is
_COUNT_RESTATED = re.compile(
    r"\b(?:the|all|those|these)\s+(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b", re.IGNORECASE
)


def check(q: Question, k: Knowledge) -> None:
    """Words in parentheses restate or define ("late = received after the commit date"): what they name
    is used like any other words, but the rest of them is not unknown."""
    r = q.reading
    _restated(r)
    _referred(r)
    unknown: list[tuple[str, int]] = []
    asides = [m.span() for m in ASIDE.finditer(r.text)]
    known = [
        *r.used,
        *(m.span for m in r.marks),
        *(m.span() for m in FILLER_PHRASES.finditer(r.text)),
        *_ranking_span(q),
        *_glossed(r),
        *_date_tails(r, k),
        *_shown_dates(r, k),
        *_units_restated(r, k),
        *_owners_of_values(r, k),
        *(m.span(1) for m in _COUNT_RESTATED.finditer(r.text)),
    ]
    # "average quantity per line *item*": a word of the title of a cube the answer is about restates it
    scope_words = {w for cube in r.scope() for w in facts.title_words(k.model.cubes[cube])}
    events = _about_events(r, k)
    columns = _unused_columns(r)
    for w in words(r.text):
        core = w.end - (len(w.raw) - len(re.sub(r"['’]\w+$", "", w.raw)))  # "Smith's": "Smith"
        if within((w.start, core), known) or within((w.start, w.end), asides):
            continue
        if w.cjk:
            unknown += [
                (x, at)
                for x, at in _cjk_leftover(r.text, w.start, w.end, known)
                if not _verb_of(x, r, k) and not (x in EVENT_VERBS_ZH and events)
            ]
        elif (
            _NUMBER.match(w.raw)
            or (w.raw.lower() in EVENT_VERBS and not events)
            or (
                ((w.norm not in _STOP_STEMS and w.raw.lower() not in STOPWORDS_EN) or _acronym(w.raw, r.text))
                and (
                    within((w.start, w.end), columns)
                    or not _inflects_a_name(w.raw.lower(), k, _particle(r.text, w.end))
                )
                and w.norm not in scope_words
                and not _verb_of_value(r, w.raw, w.end)
                and not _verb_of_bounded(r, w.raw, w.start, w.end)
            )
        ):
            unknown.append((w.raw, w.start))
    r.unknown = list(dict.fromkeys(w for w, _ in unknown))
    r.unknown_spans = [(at, at + len(w)) for w, at in unknown]
    r.unhonoured = (
        [m.text for m in r.marks if m.kind in HONOURED and free(r, m)]
        + _unranked(q)
        + _nobody(r)
        + _unapplied(r)
        + _ungrouped_each(r)
        + _both_ends(q, k)
    )
    _ungrouped_bound(q, k)

"""Pass: the order and the limit of the answer.

- An order phrase ("highest balance first", "cheapest first", "sorted by total price", "按总价从高到低")
  orders by the numeric name in or before it; an adjective names its column ("cheapest" -> a price or
  cost column, "longest" -> a length or duration, "latest" -> the listed cube's time dimension).
- A ranking ("top 5", "the 3 most expensive", "highest", "最多的3个") orders an aggregate by its first
  measure (grouped or over time), a listing by the column its superlative names; "best"/"worst" follow
  the measure's ``meta.better``. A singular question ("which region has the highest ...") keeps one row.
- Without either, a grouped aggregate is ordered by its measure, largest first; a series by time.
"""

from __future__ import annotations

import re
from typing import Any

from router.parse import column_items, facts
from router.parse.context import Knowledge, Question
from router.parse.language import AMOUNT_WORD, names_a_number
from router.parse.nearby import after, before, between, free
from router.parse.reading import Mark, Mention, Reading
from router.parse.text import GLUE, name_key, norm_word, stems, words
from router.understanding._calendar import parse_number
from router.understanding.ranking import ZH_CLASSIFIERS

# adjectives that name what they compare (language: any warehouse's prices are compared by "cheap")
ADJECTIVES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(r"expensive|cheap|pric(?:ey|ier|iest)|cost(?:ly|lier|liest)|贵|便宜", re.IGNORECASE),
        stems("price cost total amount"),
    ),
    (
        re.compile(r"longest|shortest|\blong(?:er)?\b|\bshort(?:er)?\b|最长|最短", re.IGNORECASE),
        stems("length duration millisecond minute second time day"),
    ),
    (
        re.compile(r"biggest|largest|smallest|\bbig\b|\blarge\b|\bsmall\b|最大|最小", re.IGNORECASE),
        stems("size total amount quantity value balance"),
    ),
    (re.compile(r"heaviest|lightest|heavy|heavier|light", re.IGNORECASE), stems("weight")),
    (
        re.compile(r"fastest|slowest|\bfast(?:er)?\b|\bslow(?:er)?\b|最快|最慢", re.IGNORECASE),
        stems("speed velocity mph"),
    ),
)
_ORDINAL = norm_word("number")  # "Day of week number" is a position, not a length of days
_TIME_ADJECTIVE = re.compile(
    r"latest|newest|most recent|recent|oldest|earliest|最新|最近|最早|[从由](?:新到旧|旧到新|近到远|远到近)",
    re.IGNORECASE,
)
_DESC_ADJ = re.compile(
    r"most|expensive|priciest|costliest|longest|biggest|largest|heaviest|latest|newest|recent|highest|最贵|最长|"
    r"最大|最新|最近|最高",
    re.IGNORECASE,
)
_WORST = re.compile(r"\bworst\b|\bbottom\b|最差|垫底", re.IGNORECASE)
_BEST = re.compile(r"\bbest\b|最好", re.IGNORECASE)
_SINGULAR = re.compile(
    rf"\bwhich\b(?!\s+\w+s\b)|\bwho\b|\bwhat(?:'?s| is| was) the\b|哪[{ZH_CLASSIFIERS}]|是谁", re.IGNORECASE
)


def adjective_member(text: str, r: Reading, k: Knowledge, cubes: list[str]) -> Any | None:
    """The numeric column an adjective compares ("longer" -> a length, "cheaper" -> a price), not a time."""
    return None if _TIME_ADJECTIVE.search(text) else _adjective_member(text, r, k, cubes)


def _adjective_member(text: str, r: Reading, k: Knowledge, cubes: list[str]) -> Any | None:
    if _TIME_ADJECTIVE.search(text) and cubes:
        path = r.time_dimension or k.model.cube_time_dimension(cubes[0])
        return k.model.find_member(path) if path else None
    for pattern, nouns in ADJECTIVES:
        if pattern.search(text):
            for cube in cubes:
                if found := _compared_column(k, cube, nouns):
                    return found
    return None


def _compared_column(k: Knowledge, cube: str, nouns: frozenset[str]) -> Any | None:
    """The one numeric column of ``cube`` an adjective's nouns name: by the head word of its title first
    ("Track length"), else by any word, a dimension before a measure; two of a kind ("Air time", "Scheduled
    departure time") name none."""
    members = [
        m
        for m in [*k.model.cubes[cube].dimensions.values(), *k.model.cubes[cube].measures.values()]
        if facts.is_numeric(m) and not getattr(m, "primary_key", False) and m.public
    ]
    keys = [(m, name_key(m.title or m.name)) for m in members]
    keys = [(m, key) for m, key in keys if key and key[-1] != _ORDINAL]
    passes = ([m for m, key in keys if key[-1] in nouns], [m for m, key in keys if set(key) & nouns])
    for dimensions in ([m for m in named if getattr(m, "kind", "") == "dimension"] for named in passes):
        if dimensions:  # a column of the rows first ("Order total price"), then a measure ("Order value")
            return dimensions[0] if len(dimensions) == 1 else None
    chosen = passes[0] or passes[1]
    return chosen[0] if len(chosen) == 1 else None


def _named(r: Reading, span: tuple[int, int], k: Knowledge, cubes: list[str]) -> Any | None:
    """The column an order phrase names inside it ("highest *balance* first": a name, else a word of one
    column's title), else the column named right before it ("sorted by total")."""
    inside = [m for m in r.mentions if span[0] <= m.start and m.end <= span[1]]
    found = _column_of(r, inside, k, cubes) or _title_word(r, span, k, cubes)
    prior = before(r, span, extra=r"by|按|sorted|ordered|order|sort|排序|排|from")
    return found or _column_of(r, [prior] if prior else [], k, cubes) or _part_of_name_zh(r, span, k, cubes)


_BY_ZH = re.compile(r"(?:按照|按|根据)\s*([\u4e00-\u9fff]{1,6}?)\s*(?:排序|排)?\s*$")


def _part_of_name_zh(r: Reading, span: tuple[int, int], k: Knowledge, cubes: list[str]) -> Any | None:
    """ "按余额从低到高" after "账户余额": the Chinese words after 按 that are part of the name of one numeric or
    date column of the answer's cubes order by that column."""
    said = _BY_ZH.search(r.text, 0, span[0])
    answered = [*r.columns, *(m for m, _ in r.order), *(f.member for f in r.filters)]
    member = column_items.chinese(k, cubes, said.group(1), answered) if said else None
    if said is None or member is None or not (facts.is_numeric(member) or member.type == "time"):
        return None
    r.use(said.span(1))
    return member


def _column_of(r: Reading, mentions: list[Mention], k: Knowledge, cubes: list[str]) -> Any | None:
    """The first numeric or date column the mentions name, a column of the answer's cubes first."""
    for m in mentions:
        targets = [*m.of("dimension"), *(m.of("measure") if r.intent == "aggregate" else [])]
        for t in sorted(targets, key=lambda t: t.cube not in cubes):
            member = k.model.find_member(t.path)
            if member is not None and (facts.is_numeric(member) or member.type == "time"):
                r.use(m.span)
                return member
    return None


def _by_member(r: Reading, k: Knowledge, cubes: list[str], sort_only: bool = False) -> Any | None:
    """The numeric column after "by" in a ranked listing; a sort alone also sorts by a date ("sorted by date",
    "按日期排序")."""
    for mark in r.marks_of("group"):
        m = after(r, mark.span)
        if m is not None and (member := _numeric_column(k, m, cubes, times=sort_only)) is not None:
            r.use(mark.span, m.span)
            return member
        said = _WORD_AFTER.match(r.text, mark.end)  # "sorted by balance": a word of one column's title
        if m is None and said and (member := _title_word(r, said.span(1), k, cubes)) is not None:
            r.use(mark.span, said.span(1))
            return member
    return None


_WORD_AFTER = re.compile(r"\s+([a-z][\w-]*)", re.IGNORECASE)


def _numeric_column(k: Knowledge, m: Mention, cubes: list[str], times: bool = False) -> Any | None:
    """The first numeric dimension ``m`` names that the answer's cubes reach (or time dimension, ``times``),
    also the column an extreme it names is over ("the 10 worst departure delays": Departure delay)."""
    extremes = [
        x for t in m.of("measure") if (x := k.model.find_member(t.path)) is not None and x.type in ("max", "min")
    ]
    for member in [
        *(k.model.find_member(t.path) for t in m.of("dimension")),
        *(d for x in extremes for d in facts.numbers_aggregated(k.model, x)),
    ]:
        if (
            member is not None
            and (facts.is_numeric(member) or (times and member.type == "time"))
            and any(facts.joined(k.model, c, member.cube) for c in cubes)
        ):
            return member
    return None


_ORDER_WORDS = stems(
    "highest largest biggest most greatest longest newest latest recent expensive top lowest smallest "
    "least fewest shortest oldest earliest cheapest first"
)


def _title_word(r: Reading, span: tuple[int, int], k: Knowledge, cubes: list[str]) -> Any | None:
    """ "Highest *balance* first" after "account balance": a word of the order phrase that is a word of the
    title of exactly one numeric column of the answer's cubes names that column."""
    said = {w.norm for w in words(r.text[span[0] : span[1]])} - _ORDER_WORDS - GLUE
    return facts.column_titled(k.model, cubes, said)


def _amount_word(r: Reading, span: tuple[int, int], k: Knowledge, cubes: list[str]) -> Any | None:
    """ "按金额从高到低", "by amount, highest first": the generic word for an amount orders by the listed
    cube's amount (the column its sum measure adds up)."""
    near = AMOUNT_WORD.search(r.text, max(0, span[0] - 12), span[1])
    if near is None or not cubes or (member := facts.amount_column(k.model, cubes[0])) is None:
        return None
    r.use(near.span())
    return member


def _explicit(r: Reading, k: Knowledge, cubes: list[str]) -> bool:
    for mark in r.marks_of("order"):
        member = (
            (_adjective_member(mark.text, r, k, cubes) if _TIME_ADJECTIVE.search(mark.text) else None)
            or _named(r, mark.span, k, cubes)
            or _adjective_member(mark.text, r, k, cubes)
            or _amount_word(r, mark.span, k, cubes)
        )
        if member is None and r.measures:
            member = k.model.find_member(r.measures[0])
        if member is None:  # "flights more than an hour late, worst first": the column bounded
            member = _bounded_column(r, k)
        if member is not None:
            r.order = [(member.path, _said_way(k, member, mark.data))]
            r.use(mark.span)
            return True
    return False


def _bounded_column(r: Reading, k: Knowledge) -> Any | None:
    """ "flights more than an hour late, worst first": the one numeric column the question bounds."""
    bounded = {f.member for f in r.filters if f.operator in ("gt", "gte", "lt", "lte", "between")}
    members = [m for p in bounded if (m := k.model.find_member(p)) is not None and m.kind == "dimension"]
    return members[0] if len(members) == 1 else None


def _said_way(k: Knowledge, member: Any, way: str) -> str:
    """ "worst first" / "best first": the direction ``meta.better`` gives (of the member, else of a measure over
    its column); any other order phrase says its own."""
    if way not in ("worst", "best"):
        return way
    return "desc" if (way == "best") == _good_is_high(k, member) else "asc"


def _good_is_high(k: Knowledge, member: Any) -> bool:
    """``meta.better`` of the member, else of a measure over its column (a delay column: lower is better)."""
    return facts.better(member) == "higher" and not any(
        facts.better(m) == "lower"
        for m in facts.measures_over(k.model, member.cube, facts.column(member), ("avg", "max", "min", "sum"))
    )


_SORT_ONLY = re.compile(r"\s*(?:sorted|order(?:ed)? by|排序)\s*", re.IGNORECASE)


def _direction(q: Question, k: Knowledge, member: Any) -> str:
    ranking = q.understanding.ranking
    if (
        ranking
        and _SORT_ONLY.fullmatch(ranking.phrase)
        and (getattr(member, "primary_key", False) or member.type == "time")
    ):
        return "asc"  # "按曲目编号排序", "sorted by date": a key or a date sorts up when no way is said
    direction = ranking.direction if ranking else "desc"
    said = next(
        (
            text
            for text in (ranking.phrase if ranking else "", q.reading.text)
            if _WORST.search(text) or _BEST.search(text)
        ),
        None,
    )  # "which 5 had the worst delay"
    if ranking and said is not None:
        good_is_high = _good_is_high(k, member) if member.kind == "dimension" else facts.better(member) == "higher"
        best = bool(_BEST.search(said)) and not _WORST.search(said)
        direction = "desc" if best == good_is_high else "asc"
    return direction


def _superlative_column(r: Reading, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "customers ... with the lowest account balance": the numeric column named right after the superlative;
    in Chinese right before it ("账户余额最高的3家供应商")."""
    for mark in r.marks_of("max", "min"):
        m = after(r, mark.span)
        if r.language == "zh" and ((m is None or m.start - mark.end > 3) or _numeric_column(k, m, cubes) is None):
            m = before(r, mark.span)
            m = m if m is not None and mark.start - m.end <= 1 else None
        elif m is not None and m.start - mark.end > 3:
            m = None
        if m is None or not free(r, mark):
            continue
        if (member := _numeric_column(k, m, cubes)) is not None:
            r.use(mark.span, m.span)
            return member
    return None


_SUPERLATIVE_WORD = re.compile(r"\b(?:most|least|worst|best|[a-z]{2,}est)\b", re.IGNORECASE)


def _superlative_name(r: Reading, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "the 10 flights with the *longest departure delays*": a name that holds its superlative (a max or min
    measure's title, read as the rows' column) orders by its numeric column."""
    for m in r.mentions:
        if _SUPERLATIVE_WORD.search(m.text) and (member := _numeric_column(k, m, cubes)) is not None:
            r.use(m.span)
            return member
    return None


def _ranked(q: Question, k: Knowledge, cubes: list[str]) -> None:
    r, ranking = q.reading, q.understanding.ranking
    if ranking is None:
        return
    if r.intent == "aggregate" and r.measures:
        ranked, said = _ranked_measure(r)
        r.measures = [ranked, *(p for p in r.measures if p != ranked)]  # the answer leads with what is ranked
        member = k.model.find_member(ranked)
        if said is not None and not r.order:  # "Lowest WHIP ... top 5": the lowest five, not the top
            r.order = [(ranked, "asc" if said.kind == "min" else "desc")]
    else:  # "top 5 customers by account balance", "the 3 most expensive products"
        member = (
            _by_member(r, k, cubes, sort_only=bool(_SORT_ONLY.fullmatch(ranking.phrase)))
            or _superlative_column(r, k, cubes)
            or _superlative_name(r, k, cubes)
            or _adjective_member(ranking.phrase + " " + r.text, r, k, cubes)
        )
    if member is None:
        return
    if not r.order:
        r.order = [(member.path, _direction(q, k, member))]
    one = r.asks_one if r.asks_one is not None else bool(_SINGULAR.search(r.text) or _one_group(r, ranking.phrase))
    explicit = names_a_number(ranking.phrase)
    r.limit = ranking.limit if explicit else 1 if one else ranking.limit or r.limit


def _ranked_measure(r: Reading) -> tuple[str, Mark | None]:
    """Of the measures, the one a superlative is said of ("at least 162 innings ... the lowest ERA": the ERA)
    with that superlative when it says a way ("lowest", not "best"); else the first that no bound restricts
    (the innings only choose who is ranked), else the first."""
    for mark in r.marks_of("max", "min", "most"):
        m = after(r, mark.span) if r.language != "zh" else before(r, mark.span)
        if m is None or len(between(r.text, mark.span, m.span)) > 3:
            continue
        said = [t.path for t in m.of("measure") if t.path in r.measures]
        if said:
            literal = mark.kind in ("max", "min") and not (_BEST.search(mark.text) or _WORST.search(mark.text))
            return said[0], mark if literal else None
    bounded = {f.member for f in r.filters}
    return next((p for p in r.measures if p not in bounded), r.measures[0]), None


def _one_group(r: Reading, phrase: str) -> bool:
    """ "busiest route of 2013": a superlative adjective right before the singular name of the one group ranked
    asks for one group."""
    said = re.search(rf"\b{re.escape(phrase.strip())}\s+", r.text, re.IGNORECASE)
    if len(r.dimensions) != 1 or not re.fullmatch(r"[a-z]+est", phrase.strip().lower()) or said is None:
        return False
    noun = next((m for m in r.mentions if m.start == said.end()), None)
    return (
        noun is not None
        and any(t.path == r.dimensions[0] for t in noun.targets)
        and not noun.text.lower().endswith("s")
    )


def _recent(r: Reading, k: Knowledge, cubes: list[str]) -> bool:
    """ "the latest 5 orders": the N newest rows by the listed cube's time."""
    for mark in r.marks_of("recent"):
        direction, number = mark.data
        path = r.time_dimension or (k.model.cube_time_dimension(cubes[0]) if cubes else None)
        if path is None:
            continue
        r.order, r.limit = [(path, direction)], number
        r.use(mark.span)
        return True
    return False


_TIME_SUPERLATIVE = re.compile(r"earliest|oldest|latest|newest|most recent", re.IGNORECASE)


def _time_superlative(r: Reading, k: Knowledge) -> bool:
    """ "who's our earliest registered customer": a time superlative right before the listed cube's noun orders
    its rows by the cube's time (one row for a singular noun, every row ordered for a plural one)."""
    if r.language != "en" or r.listing is None or r.listed is None:
        return False
    path = r.time_dimension or k.model.cube_time_dimension(r.listing)
    gap = r.text[: r.listed[0]]
    for mark in r.marks_of("max", "min"):
        if not (free(r, mark) and _TIME_SUPERLATIVE.fullmatch(mark.text) and path):
            continue
        if mark.end > r.listed[0] or len(gap[mark.end :].split()) > 2:  # "earliest(-)registered customer"
            continue
        plural = r.text[r.listed[0] : r.listed[1]].lower().endswith("s")
        r.order = [(path, "asc" if mark.text.lower() in ("earliest", "oldest") else "desc")]
        r.limit = None if plural else 1
        r.use(mark.span)
        return True
    return False


_N_ADJECTIVE = re.compile(
    r"\b(?:the\s+)?(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty)\s+"
    r"(shortest|longest|cheapest|most expensive|least expensive|smallest|biggest|largest|"
    r"heaviest|lightest|fastest|slowest|oldest|newest|earliest|latest)\b",
    re.IGNORECASE,
)
_ASCENDING = re.compile(r"shortest|cheapest|least|smallest|lightest|slowest|oldest|earliest", re.IGNORECASE)


def _n_superlative(r: Reading, k: Knowledge, cubes: list[str]) -> bool:
    """ "the 5 shortest Rock songs", "3 most expensive products": the N rows first by the column the
    adjective names."""
    m = _N_ADJECTIVE.search(r.text)
    member = (_by_member(r, k, cubes) or _adjective_member(m.group(2), r, k, cubes)) if m else None
    if m is None or member is None:
        return False
    r.order = [(member.path, "asc" if _ASCENDING.search(m.group(2)) else "desc")]
    r.limit = parse_number(m.group(1)) or r.limit
    r.use(m.span())
    return True


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.refusal or r.intent is None:
        return
    cubes = r.scope()
    if r.intent == "detail" and (_recent(r, k, cubes) or _n_superlative(r, k, cubes) or _time_superlative(r, k)):
        return
    explicit = _explicit(r, k, cubes)
    _ranked(q, k, cubes)
    if explicit or r.order or r.intent != "aggregate" or not r.measures:
        return
    if r.dimensions and not q.understanding.granularity:
        r.order = [(r.measures[0], "desc")]

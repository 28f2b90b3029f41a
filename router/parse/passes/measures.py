"""Pass: the measures a question asks for, read from the names it uses and the aggregation words
beside them.

- A span naming a measure ("revenue", "average order value", "late shipments") is that measure; among
  several, the glossary's first, then the one whose type fits the aggregation word before it ("highest
  retail price" -> a max measure, "how many different ..." -> a distinct count), then the shorter title.
  A span that names a cube and only that cube's counts ("customers") is the cube, unless a count word asks.
- "average <sum measure or numeric column>" is the avg measure over the same column; "total / highest /
  lowest <column>" the sum / max / min measure over it; "how many (different) <column>" its distinct count.
  When the model has no such measure the question is refused, naming what is missing.
- "how many / number of <cube>" counts the cube's rows; asked with another cube ("customers who placed an
  order", "distinct customers ... orders") it is that cube's distinct count of its key to the first.
- "the most <cube>" / "<cube>最多" counts that cube (the rows it ranks are grouped by the group pass).
- "median", "percentile": only a measure that says so in its title answers them; else a refusal.
"""

from __future__ import annotations

import re
from typing import Any

from router.aggregate.measure_match import match_measure, unit_twin
from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.language import MONEY_VERBS, MONEY_VERBS_ZH, RATE_AFTER, names_a_number
from router.parse.nearby import (
    after,
    before,
    close,
    free,
    free_amount_words,
    free_span,
    mark_after,
    mark_before,
    phrase_after,
)
from router.parse.passes import per
from router.parse.passes.order import adjective_member
from router.parse.reading import Mark, Mention, Reading, Span, Target
from router.parse.text import has_cjk, irregular_form, words

UNIT_WORDS = re.compile(
    r"\b(?:minutes?|mins?|hours?|seconds?|secs?|days?|ms|milliseconds?|mb|megabytes?|bytes?)\b|"
    r"分钟|小时|秒|天|毫秒|兆|字节",
    re.IGNORECASE,
)
_UNIT_ASKED = re.compile(r"(?:多少|几)个?$|\bin\s+$", re.IGNORECASE)
COUNT_WORDS = re.compile(r"\bcount\b|\bnumber\b|\bhow many\b|数|量", re.IGNORECASE)
AGGREGATION = ("count", "distinct", "avg", "sum", "max", "min", "median", "most", "share")
_TYPE_FIT = {
    "avg": ("avg", "number"),
    "sum": ("sum", "number"),
    "max": ("max",),
    "min": ("min",),
    "distinct": ("count_distinct", "count_distinct_approx"),
    "count": ("count", "count_distinct"),
    "median": (),
}
_COUNTS = ("count", "count_distinct", "count_distinct_approx")
_LISTED = re.compile(r"\s*(?:,|，|、|;|；)\s*")


def _kind(r: Reading, m: Mention) -> tuple[str | None, list[Mark]]:
    """The aggregation asked of ``m``: the nearest aggregation word before it (Chinese also after it), with
    a count word before a distinct word ("how many different")."""
    if r.language == "zh":  # "平均供货成本", "发票数量", "开票最多的供应商"; "最多的供应商" ranks suppliers
        after = mark_after(r, m.span, ("count", "avg", "sum", "median", "most"))
        if after is not None and _own_column_after(r, m, after):
            after = None  # "供应商平均账户余额": the average is of the suppliers' balance, said next
        mark = (
            mark_before(r, m.span, ("count", "distinct", "avg", "sum", "max", "min", "median"))
            or after
            or _count_over_clause(r, m)
            or _count_among(r, m)
        )
    else:  # "how many FURNITURE customers", "average Rock track length": values may stand between
        mark = mark_before(r, (_values_before(r, m), m.end), AGGREGATION) or _trailing_count(r, m)
        if mark is not None and (head := _counted_head(r, mark)) is not None and head is not m:
            return None, []  # "how many Cy Young Awards has he *won*": the count is the awards'
    if mark is None or any(o.start <= mark.start and mark.end <= o.end for o in r.marks_of("order")):
        return None, []  # "highest balance first" orders the rows: no maximum asked
    if _predicated(r, m):
        return None, []  # "多少个状态为已付的发票": the column says which rows are counted
    if mark.end <= m.start and _LISTED.fullmatch(r.text[mark.end : m.start]):
        return None, []  # "包括数量、折扣": a column named before it in a list, not an aggregation of it
    used = [mark]
    if mark.kind == "distinct" and (count := mark_before(r, mark.span, ("count",))):
        used.append(count)
    if mark.kind == "count" and (distinct := mark_after(r, mark.span, ("distinct",))) and distinct.end <= m.start:
        return "distinct", [mark, distinct]
    if (
        mark.kind == "count"
        and m.of("dimension")
        and not m.of("cube", "measure")
        and (avg := mark_before(r, mark.span, ("avg",)))
        and close(r.text, avg.span, mark.span)
    ):
        return "avg", [avg, mark]  # "the average number of seats": the column's average, not a count
    return mark.kind, used


_RELATIVE_CLAUSE = re.compile(r"[个位家笔条张首]?[^。？！.?!;；]{1,40}的\s*")  # "、" is normalised to ","


def _count_over_clause(r: Reading, m: Mention) -> Mark | None:
    """ "多少个状态为已付、金额超过1000的发票": a count word before a clause ending in 的 counts the
    rows the clause's head noun names."""
    found = [x for x in r.marks if x.kind in ("count", "distinct") and x.end <= m.start]
    if not found or not m.of("cube") or not _RELATIVE_CLAUSE.fullmatch(r.text[found[-1].end : m.start]):
        return None
    return found[-1]


_AMONG = re.compile(r"(?:里|中|当中|之中|里面)\s*[,，]?")
_THOSE_COUNTED = re.compile(r"的\s*(?:有|共有|一共有)?\s*$")


def _count_among(r: Reading, m: Mention) -> Mark | None:
    """ "飞往芝加哥的航班里，到达延误超过3小时的有多少个": a count word after "<rows>里/中, <clause>的" counts
    those rows (the ones the clause keeps)."""
    if not m.of("cube") or not _AMONG.match(r.text, m.end):
        return None
    found = next((x for x in r.marks_of("count") if x.start > m.end), None)
    if found is None or not _THOSE_COUNTED.search(r.text, m.end, found.start):
        return None
    later = [x for x in r.mentions if m.end <= x.start < found.start and x.of("cube") and not x.of("dimension")]
    return found if not later else None


_IS = re.compile(r"\s*(?:为|是|=|等于|:|：)\s*")


def _predicated(r: Reading, m: Mention) -> bool:
    """A column followed by "为"/"是"/"=" and one of its values is a condition on the rows, not what is
    aggregated."""
    nxt = next((x for x in r.mentions if x.start >= m.end), None)
    columns = {t.path for t in m.of("dimension")}
    return (
        nxt is not None
        and bool(_IS.fullmatch(r.text[m.end : nxt.start]))
        and any(t.path in columns for t in nxt.of("value"))
    )


_BARE_COUNT = re.compile(r"\s*(?:[?.!,;]|and\b|$)", re.IGNORECASE)


def _trailing_count(r: Reading, m: Mention) -> Mark | None:
    """ "Frontier's cancellations last year - how many?": a bare "how many" after the only name before it."""
    for mark in r.marks_of("count"):
        if mark.start < m.end or mark.text.lower() != "how many" or not _BARE_COUNT.match(r.text, mark.end):
            continue
        between = [x for x in r.mentions if m.end <= x.start < mark.start]
        return (
            mark if not between and not any(x.end <= m.start and x.of("measure", "cube") for x in r.mentions) else None
        )
    return None


def _values_before(r: Reading, m: Mention) -> int:
    """Where the run of value names right before ``m`` starts (``m.start`` when there is none)."""
    start = m.start
    for x in reversed([x for x in r.mentions if x.end <= m.start]):
        qualifier = x.end == start - 1 and _qualifies(r, x) is m  # "average Rock *track* length"
        if not (qualifier or (x.of("value") and not x.of("measure") and close(r.text, x.span, (start, start)))):
            break
        start = x.start
    return start


def _qualifies(r: Reading, m: Mention) -> Mention | None:
    """ "track length", "invoice total": a cube's name right before one of its own columns qualifies the
    column (the mention of that column), it names nothing by itself."""
    nxt = after(r, m.span)
    cubes = {t.path for t in m.of("cube")}
    if nxt is None or not cubes or r.text[m.end : nxt.start] != " ":
        return None
    return nxt if any(t.cube in cubes for t in nxt.of("dimension")) else None


def _fit_rank(member: Any, kind: str | None, weight: int) -> tuple[int, int, int]:
    fits = kind is not None and member.type in _TYPE_FIT.get(kind, ())
    return (-weight, 0 if fits else 1, len(member.title or member.name))


def _valued_cubes(r: Reading, m: Mention) -> list[set[str]]:
    """For each other mention that names only values, the cubes whose dimensions hold them."""
    return [
        {t.path.split(".", 1)[0] for t in x.targets}
        for x in r.mentions
        if x is not m and x.targets and all(t.kind == "value" for t in x.targets)
    ]


def _misses(k: Knowledge, cube: str, valued: list[set[str]]) -> int:
    """How many of the values named the cube's measures cannot be filtered by (no join path to any holder)."""
    reached = facts.reach(k.model, cube)
    return sum(1 for cubes in valued if not cubes & reached.keys())


def _named_measure(r: Reading, m: Mention, kind: str | None, k: Knowledge) -> Any | None:
    """The measure ``m`` names: one whose cube reaches the values the question names first ("different
    players for the Boston Red Sox": the players counted over team seasons, not the players' table), then
    one of a cube the question names ("which pitcher had the most strikeouts"), then ``_fit_rank``."""
    found = [(k.model.find_member(t.path), m.weights.get(t, 1)) for t in m.of("measure")]
    found = [(member, w) for member, w in found if member is not None]
    if not found:
        return None
    valued = _valued_cubes(r, m)
    named = {t.path for x in r.mentions if x is not m for t in x.of("cube")}  # "which *pitcher* ... strikeouts"
    best = min(
        found,
        key=lambda pair: (
            _misses(k, pair[0].cube, valued),
            pair[0].cube not in named,
            *_fit_rank(pair[0], kind, pair[1]),
        ),
    )[0]
    if (
        kind in ("max", "min", "avg", "sum")
        and best.type not in _TYPE_FIT[kind]
        and m.of("dimension")
        and not _ranks_named_groups(r, k, m, best.cube)
    ):
        return None  # "the biggest departure delay": the column's maximum, not a count its words also name
    return best


_QUANTIFIER = re.compile(r"most|least|fewest|最多|最少", re.IGNORECASE)


def _own_column_after(r: Reading, m: Mention, mark: Mark) -> bool:
    """A column of the cube ``m`` names comes right after the aggregation word that follows ``m``."""
    cubes = {t.path for t in m.of("cube")}
    nxt = next((x for x in r.mentions if x.start >= mark.end), None)
    return (
        bool(cubes)
        and nxt is not None
        and not r.text[mark.end : nxt.start].strip()
        and any(t.cube in cubes for t in nxt.of("dimension"))
    )


def _noun_only(q: Question, m: Mention, k: Knowledge, kind: str | None) -> bool:
    """ "customers", "urgent orders": rows (a cube, a segment), not their count, unless a count word, or a
    grain or group-by with no listing word ("monthly cancellations"), asks for it; a cube's own row count is
    asked through the cube ("how many customers placed an order")."""
    r = q.reading
    counts = all(k.model.find_member(t.path).type in _COUNTS for t in m.of("measure"))
    if not counts or not (m.of("cube") or m.of("segment") or m.of("dimension")):
        return False
    if kind not in ("count", "distinct") and m.of("dimension") and mark_before(r, m.span, ("group", "top", "which")):
        return True  # "by origin", "top 10 destinations": the dimension, not its distinct count
    busiest = mark_before(r, m.span, ("most",))
    if m.of("dimension") and busiest is not None and not _QUANTIFIER.fullmatch(busiest.text):
        return True  # "the busiest route": the route ranked, not the number of routes ("the most routes")
    if kind is None and not m.of("cube") and _cued(q, k) and not r.marks_of("list"):
        return False
    if kind in ("count", "distinct", "most"):
        return bool(m.of("cube"))
    return True


def _over_column(k: Knowledge, dim: Any, kind: str) -> tuple[Any | None, str]:
    """The measure of ``kind`` over the dimension's column, and how to name what is missing."""
    types = {
        "avg": ("avg",),
        "sum": ("sum",),
        "max": ("max",),
        "min": ("min",),
        "distinct": ("count_distinct", "count_distinct_approx"),
        "count": ("count_distinct", "count_distinct_approx"),
        "median": (),
    }[kind]
    found = facts.measures_over(k.model, dim.cube, facts.column(dim), types)
    word = {
        "avg": "average",
        "sum": "total",
        "max": "maximum",
        "min": "minimum",
        "median": "median",
        "distinct": "distinct count",
        "count": "distinct count",
    }[kind]
    return (found[0] if found else None), f"{word} of {dim.title or dim.path}"


def _twin(k: Knowledge, measure: Any, kind: str) -> tuple[Any | None, str]:
    """ "average <sum measure>": the avg measure over the same column."""
    found = facts.measures_over(k.model, measure.cube, facts.column(measure), _TYPE_FIT[kind][:1])
    word = {"avg": "average", "median": "median", "max": "maximum", "min": "minimum"}.get(kind, kind)
    column = next(  # "the highest average list price": the maximum of the list price itself
        (d for d in k.model.cubes[measure.cube].dimensions.values() if facts.column(d) == facts.column(measure)),
        None,
    )
    named = column if column is not None and kind in ("max", "min") else measure
    return (found[0] if found else None), f"{word} of {named.title or named.path}"


def _count_of_cube(q: Question, k: Knowledge, m: Mention, cube: str, kind: str) -> str | None:
    """Rows of ``cube`` counted; with another cube named ("customers who ordered"), that cube's distinct
    count of its key to ``cube``; asked for a period ``cube`` has no date for ("different tracks sold
    each year"), or with values ``cube`` cannot reach ("players for the Boston Red Sox"), the distinct count
    of a cube that has them over its key to ``cube``."""
    others = _other_cubes(q.reading, cube)
    timed = q.understanding.time_ranges or q.understanding.granularity
    if timed and not k.model.cube_time_dimension(cube):
        others += [c for c in k.model.cubes if c not in others and c != cube and k.model.cube_time_dimension(c)]
    valued = _valued_cubes(q.reading, m)
    if _misses(k, cube, valued):
        others += [c for c in k.model.cubes if c not in others and c != cube and not _misses(k, c, valued)]
    for other in others:
        column = facts.fk_column(k.model, other, cube)
        found = facts.measures_over(k.model, other, column or "", ("count_distinct", "count_distinct_approx"))
        if column and found:
            return found[0].path
    return facts.row_count(k.model, cube) if kind in ("count", "distinct", "most") else None


def _other_cubes(r: Reading, cube: str) -> list[str]:
    return list(dict.fromkeys(t.path for m in r.mentions for t in m.of("cube") if t.path != cube))


def _cued(q: Question, k: Knowledge | None) -> bool:
    """A grain, a comparison, a ranking or a group-by word before something to group by (not a number:
    "top 5 customers by account balance" orders customers): what a count is asked for. "each line's part,
    quantity and discount" names the columns of rows, not groups (every word after the possessive can be a
    column; "each region's revenue" groups)."""
    r, u = q.reading, q.understanding

    def groupable(m: Mention) -> bool:
        if k is None:
            return bool(m.of("cube") or m.of("dimension"))
        dims = [k.model.find_member(t.path) for t in m.of("dimension")]
        return bool(m.of("cube")) or any(d is not None and d.type != "number" for d in dims)

    runs = [phrase_after(r, g.span) for g in r.marks_of("group")]
    grouped = any(any(groupable(m) for m in run) for run in runs if not _possessive_rows(r, run))
    columns = bool(r.marks_of("columns"))
    if columns and not grouped:  # "invoices in 2009 and 2010, with their totals": rows and their columns
        return False
    return bool(u.granularity or u.comparison or r.marks_of("dim_grain") or grouped)


_POSSESSIVE = re.compile(r"['’]s$")


def _possessive_rows(r: Reading, run: list[Mention]) -> bool:
    """ "each line's part, quantity and discount": a cube said possessively, then only words that name columns."""
    return (
        len(run) > 1
        and bool(run[0].of("cube"))
        and bool(_POSSESSIVE.search(r.text[run[0].start : run[0].end]))
        and all(m.of("dimension") for m in run[1:])
    )


def _as_rows(q: Question, m: Mention, k: Knowledge, kind: str | None) -> bool:
    """ "list the returned orders", "Jane Doe's completed orders", "lines of order 1024": a count measure
    named after a listing word, or beside a named row with nothing to count by, names the rows it counts —
    its cube, and the segment whose SQL is the measure's filter. The mention is rewritten to name them."""
    r = q.reading
    listed = any(x.start < m.start for x in r.marks_of("list")) or mark_before(r, m.span, ("which",))
    named_rows = (r.keyed or any(x.of("value") for x in r.mentions)) and not _cued(q, k)
    if kind is not None or not (listed or named_rows) or COUNT_WORDS.search(m.text):
        return False  # "the invoice count" asks the count
    counts = [k.model.find_member(t.path) for t in m.of("measure")]
    if not counts or any(c is None or c.type not in _COUNTS for c in counts):
        return False
    if m.of("dimension") and not m.of("cube"):
        return False  # "which composer ...": the column, not the rows "Number of composers" counts
    if m.of("cube"):
        return True  # "list all the airlines": the cube it names, not the rows another cube's count counts
    measure = counts[0]
    wanted = {facts.column_sql(f) for f in measure.filters}
    segments = [s for s in k.model.cubes[measure.cube].segments.values() if facts.column_sql(s.sql) in wanted]
    if measure.filters and len(segments) != len(measure.filters):
        return False
    m.targets = [Target("cube", measure.cube), *(Target("segment", s.path) for s in segments)]
    return True


def _grouped(q: Question) -> bool:
    """The question ranks groups or times ("which region has the highest revenue", "the highest month")."""
    r, u = q.reading, q.understanding
    return bool(
        u.granularity
        or r.marks_of("group", "dim_grain")
        or any(map(_asks_which, r.marks_of("which")))
        or (u.ranking and u.ranking.limit)
    )


def _ranks_groups(q: Question) -> bool:
    """The question ranks groups ("which mode has the longest transit days", "the 3 slowest modes"); "各运输
    方式的最长运输天数" only groups: its extreme is each group's own."""
    r, u = q.reading, q.understanding
    ranked = bool(u.ranking and u.ranking.limit) or bool(r.marks_of("dim_grain"))
    return ranked or any(map(_asks_which, r.marks_of("which")))


def _asks_which(mark: Mark) -> bool:
    """ "which region", "哪个月"; a bare "what" ("what's the biggest single invoice") asks for no group."""
    return mark.text.lower() not in ("what", "what are")


def _column_of_rows(q: Question, m: Mention, k: Knowledge, kind: str | None) -> bool:
    """ "lines of order 1024 ... quantity and extended price", "列出发票4000的明细行，包括数量": a measure's name
    asked with no aggregation word beside rows named by key, value or a listing word is the column the
    measure adds up (the mention is rewritten to name that dimension)."""
    r = q.reading
    if kind is not None or not m.of("measure") or _AGGREGATE_IN_NAME.search(m.text):
        return False  # "the average supply cost for part 100" asks the average, not the column
    # "list ... with quantity", not "..., and list"; Chinese says it last ("可供数量不到1000的有哪些")
    listed = any(x.start < m.start or (r.language == "zh" and _bound_follows(r, m)) for x in r.marks_of("list"))
    if not (listed or r.keyed or any(x.of("value") for x in r.mentions)) or _cued(q, k):
        return False
    if m.of("dimension"):
        return True
    if not (listed or r.keyed):
        return False  # only a listing word or a key makes a measure's name the column it adds up
    for t in m.of("measure"):
        measure = k.model.find_member(t.path)
        dims = [
            d
            for d in k.model.cubes[measure.cube].dimensions.values()
            if measure.sql and d.type == "number" and facts.column(d) == facts.column(measure)
        ]
        if dims:
            m.targets = [Target("dimension", dims[0].path)]
            return True
    return False


_AGGREGATE_IN_NAME = re.compile(r"\b(?:average|avg|mean|median|max(?:imum)?|min(?:imum)?)\b|平均|中位", re.IGNORECASE)
_NAMES_ITS_COLUMN = re.compile(
    r"shortest|longest|cheapest|expensive|heaviest|lightest|fastest|slowest|oldest|"
    r"newest|earliest|latest|最长|最短|最贵|最便宜",
    re.IGNORECASE,
)
_BOUND_GAP = re.compile(r"\s*(?:of|is|was|are|were|=|:)?\s*", re.IGNORECASE)


def _bounded_column(r: Reading, m: Mention) -> bool:
    """ "a quantity of at least 45", "account balance over 9,500": a column named right before a bound is the
    column the bound restricts (a row filter), not a measure asked for."""
    return bool(m.of("dimension")) and _bound_follows(r, m)


def _bound_follows(r: Reading, m: Mention) -> bool:
    return any(_BOUND_GAP.fullmatch(r.text[m.end : mark.start]) for mark in r.marks_of("bound") if mark.start >= m.end)


def _single_row(r: Reading, k: Knowledge, m: Mention, measure: Any, mark: Mark | None, kind: str) -> bool:
    """ "the biggest single invoice amount" without a max measure: the one row with the largest value of the
    column the sum adds up is listed (a total has no "biggest")."""
    column = facts.column(measure)
    dims = [
        d
        for d in k.model.cubes[measure.cube].dimensions.values()
        if column and d.type == "number" and d.public and facts.column(d) == column
    ]
    if not dims or mark is None:
        return False
    r.intent, r.listing, r.limit = "detail", measure.cube, 1
    r.order = [(dims[0].path, "desc" if kind == "max" else "asc")]
    r.use(m.span, mark.span)
    r.notes.append(f"the one row of {measure.cube} with the {kind} {dims[0].path} ({mark.text!r})")
    return True


def _measure_of(q: Question, k: Knowledge, m: Mention) -> tuple[str | None, list[Mark], str | None]:
    """(measure, the marks it used, a refusal) for one mention; (None, [], None) when it names none."""
    r = q.reading
    if UNIT_WORDS.fullmatch(m.text.strip()) and _UNIT_ASKED.search(r.text[: m.start]):
        return None, [], None  # "in minutes", "多少分钟": the unit the answer is shown in (pass ``units``)
    if irregular_form(m.text.strip()) and any(_counted_head(r, mark) for mark in r.marks_of("count")):
        return None, [], None  # "how many Golden Bats were *won*": the verb of the rows counted
    kind, marks = _kind(r, m)
    if _as_rows(q, m, k, kind) or _column_of_rows(q, m, k, kind) or (kind is None and _bounded_column(r, m)):
        return None, [], None
    if kind is None and _groups_named(r, k, m):
        return None, [], None
    named = _named_for(q, k, m, kind)
    if named is not None:
        return _of_named(q, k, m, named, kind, marks)
    cubes = m.of("cube")
    if cubes and kind is not None and _qualifies(r, m) is not None:
        return None, [], None
    if cubes and kind in ("count", "distinct", "most", "share"):
        counted = _count_of_cube(q, k, m, cubes[0].path, "count" if kind == "share" else kind)
        if counted:
            return counted, marks if kind not in ("most", "share") else [], None
    return _of_columns(q, k, m, kind, marks)


def _groups_named(r: Reading, k: Knowledge, m: Mention) -> bool:
    """ "each carrier", "per airline" where the model names only the count of distinct carriers that way:
    after a group-by word the name is the groups (the column counted), not that count."""
    targets = m.of("measure")
    return (
        bool(targets)
        and not m.of("dimension", "cube")
        and mark_before(r, m.span, ("group",)) is not None
        and facts.counts_distinct_values(k.model, [t.path for t in targets])
    )


def _named_for(q: Question, k: Knowledge, m: Mention, kind: str | None) -> Any | None:
    """The measure ``m`` names, unless it names rows ranked by it or a count dated through another cube."""
    named = None if _noun_only(q, m, k, kind) else _named_measure(q.reading, m, kind, k)
    ranking = q.understanding.ranking
    if (
        named is not None
        and ranking is not None
        and names_a_number(ranking.phrase)
        and (named.type in ("max", "min") or (kind in ("max", "min") and m.of("dimension")))
        and not _ranks_named_groups(q.reading, k, m, named.cube)
    ):
        return None  # "the 3 largest orders", "the 5 departures with the biggest delays": rows, not a value
    if (
        named is not None
        and named.type == "count"
        and (kind in ("count", "distinct") or COUNT_WORDS.match(m.text))  # "how many customers" is one name
        and (q.understanding.time_ranges or q.understanding.granularity)
        and not k.model.time_dimension_for(named.path)
    ):
        # "distinct parts shipped in Q4": the lines' distinct parts
        dated = _count_of_cube(q, k, m, named.cube, kind or "count")
        named = k.model.find_member(dated) if dated else named
    return named


def _ranks_named_groups(r: Reading, k: Knowledge, m: Mention, cube: str) -> bool:
    """ "which five pitchers had the lowest ERA": the first name before the measure that names another cube's
    rows (a pitcher is a person) ranks those rows' groups, so the measure is a value of each."""
    head = next((x for x in r.mentions if x.end <= m.start and (x.of("cube") or x.of("dimension"))), None)
    if head is None or head.of("value"):
        return False
    return any(
        t.cube != cube and facts.names_rows(k.model, t.path) and facts.joined(k.model, cube, t.cube)
        for t in head.of("dimension")
    )


def _of_named(
    q: Question, k: Knowledge, m: Mention, named: Any, kind: str | None, marks: list[Mark]
) -> tuple[str | None, list[Mark], str | None]:
    """A named measure as asked: its average or extreme twin when the aggregation word asks another."""
    r = q.reading
    if (
        kind == "avg"
        and named.type in ("count", "sum")
        and named.type not in _TYPE_FIT[kind]
        and (found := per.per_cube(r, k, m.end, named.path))
    ):
        per.take(r, k, found, named.path)  # "average number of tracks per album": tracks over albums
        r.use(m.span, *(mark.span for mark in marks))
        return None, [], None
    if kind in ("avg", "median") and named.type not in _TYPE_FIT[kind]:
        twin, missing = _twin(k, named, kind)
        return (twin.path if twin else None), marks, None if twin else f"the model has no {missing}"
    if kind in ("max", "min") and named.type in _COUNTS and not _grouped(q):
        amount = facts.amount_column(k.model, named.cube)  # "the biggest single purchase": a row's amount
        found, missing = _over_column(k, amount, kind) if amount is not None else (None, f"{kind} of one row")
        return (found.path if found else None), marks, None if found else f"the model has no {missing}"
    if kind in ("max", "min") and named.type == "avg" and not _ranks_groups(q) and not q.understanding.granularity:
        twin, missing = _twin(k, named, kind)  # "零件100的最低供货成本": the cheapest offer, not the average
        return (twin.path if twin else None), marks, None if twin else f"the model has no {missing}"
    if kind in ("max", "min") and named.type == "sum" and not _grouped(q):
        twin, _ = _twin(k, named, kind)  # "the biggest single invoice amount": the max of one row
        if twin is not None:
            return twin.path, marks, None
        if _single_row(r, k, m, named, marks[0] if marks else None, kind):
            return None, [], None
    return named.path, (marks if kind in ("count", "distinct", "avg", "sum") else []), None


def _of_columns(
    q: Question, k: Knowledge, m: Mention, kind: str | None, marks: list[Mark]
) -> tuple[str | None, list[Mark], str | None]:
    """No measure named: an aggregation word over a cube's amount or over the numeric columns ``m`` names."""
    r = q.reading
    ranking = q.understanding.ranking
    cubes = m.of("cube")
    named_elsewhere = any(x.of("measure") and not x.of("cube") for x in r.mentions if x is not m)
    rows_ranked = kind in ("max", "min") and ranking is not None and names_a_number(ranking.phrase)
    rows_ranked = rows_ranked or (bool(marks) and bool(_NAMES_ITS_COLUMN.search(marks[0].text)))  # "shortest"
    if (
        cubes
        and kind in ("avg", "sum", "max", "min")
        and not named_elsewhere
        and not rows_ranked
        and (amount := facts.amount_column(k.model, cubes[0].path))
    ):
        found, missing = _over_column(k, amount, kind)  # "the biggest invoice", "average order"
        return (found.path if found else None), marks, None if found else f"the model has no {missing}"
    dims = [k.model.find_member(t.path) for t in m.of("dimension")]
    dims = [d for d in dims if d is not None and d.type != "time"]
    if kind in ("avg", "sum", "max", "min", "median", "distinct", "count") and dims and not cubes and not rows_ranked:
        return _over_dimensions(r, k, dims, kind, marks)
    return None, [], None


def _over_dimensions(
    r: Reading, k: Knowledge, dims: list[Any], kind: str, marks: list[Mark]
) -> tuple[str | None, list[Mark], str | None]:
    numeric = [d for d in dims if d.type == "number"] if kind not in ("distinct", "count") else dims
    missing = ""
    for dim in numeric or dims:
        found, missing = _over_column(k, dim, kind)
        if found is not None:
            return found.path, marks, None
    titled = match_measure(k.model, r.text)  # "avg file size MB": "Average file size (MB)" by its words
    if titled is not None and titled.strong and k.model.find_member(titled.path).type in _TYPE_FIT[kind]:
        return titled.path, marks, None
    if numeric or kind == "distinct":
        return None, marks, f"the model has no {missing}"
    return None, [], None


def _rows_counted(q: Question, k: Knowledge) -> None:
    """ "orders per year", "customers by nation", "orders 2024 vs 2023": a cube asked by a grain, a group-by
    or a comparison (and no listing word) counts its rows."""
    r = q.reading
    if r.measures or r.marks_of("list", "recent") or not _cued(q, k):
        return
    asked = {m.start for mark in r.marks_of("which", "list") for m in phrase_after(r, mark.span)}
    for m in r.mentions:
        if m.start in asked:
            continue  # "what albums ... by Led Zeppelin", "which German suppliers": rows asked for
        cubes = [t.path for t in m.of("cube") if t.path not in r.keyed]
        counted = facts.row_count(k.model, cubes[0]) if cubes else None
        if counted:
            r.measures.append(counted)
            r.use(m.span)
            r.notes.append(f"measure {counted}: rows of {m.text!r} counted by the grain or group asked")
            return
    _rows_of_groups_counted(r, k)


def _rows_of_groups_counted(r: Reading, k: Knowledge) -> None:
    """ "每种原因各有多少笔", "how many for each reason": a count word with no rows named, beside a group-by on
    a column, counts the rows of the column's cube in each group."""
    count = next((m for m in r.marks_of("count") if free(r, m)), None)
    grouped = [after(r, g.span) for g in r.marks_of("group")]
    dims = [d for m in grouped if m is not None for t in m.of("dimension") if (d := k.model.find_member(t.path))]
    cubes = {d.cube for d in dims if d.type == "string"}
    counted = facts.row_count(k.model, cubes.pop()) if count is not None and len(cubes) == 1 else None
    if counted and count is not None:
        r.measures.append(counted)
        r.use(count.span)
        r.notes.append(f"measure {counted}: '{count.text}' counts the rows in each group")


_SELLING = re.compile(r"\b(?:best|top|worst)[\s-]+sell(?:ing|ers?)\b|畅销", re.IGNORECASE)


_USAGE = re.compile(
    r"\b(?:used|use|popular|common|frequent|frequently|often)\b|最常用|用得最多|最受欢迎|最常见", re.IGNORECASE
)


def _money_verb(r: Reading, k: Knowledge) -> None:
    """ "how much did we sell", "how much did Canada's customers spend": with no measure named, "how much"
    and a verb of money changing hands ask the amount (a sum) the model names that money by ("sales",
    "spend"), on a cube the question's values or cubes reach when it names any."""
    marks = [m for m in r.marks_of("sum") if m.text.lower() == "how much" and free(r, m)]
    marks = marks or [m for m in r.marks_of("sum") if free(r, m)]  # "what has Helena spent in total"
    if r.measures or not marks:
        return
    cubes = {t.cube for m in r.mentions for t in m.of("value", "cube")}
    start = 0 if marks[0].text.lower() != "how much" else marks[0].end
    verbs = [((start + w.start, start + w.end), MONEY_VERBS.get(w.raw.lower(), ())) for w in words(r.text[start:])]
    verbs += _money_verbs_zh(r)
    for span, nouns in verbs:
        for noun in nouns:
            found = [
                t
                for m in k.lexicon.find(noun)
                for t in sorted(m.of("measure"), key=lambda t: -m.weights[t])
                if _an_amount(k, t) and (not cubes or any(_linked(k, t.cube, c) for c in cubes))
            ]
            if found:
                said = [m.span() for m in free_amount_words(r)][: 1 if has_cjk(r.text[span[0] : span[1]]) else 0]
                r.measures.append(found[0].path)
                r.use(marks[0].span, span, *said)  # "卖了多少钱": the word for money with it
                r.notes.append(
                    f"measure {found[0].path}: '{marks[0].text} ... {r.text[span[0] : span[1]]}' asks the {noun}"
                )
                return


def _money_verbs_zh(r: Reading) -> list[tuple[Span, tuple[str, ...]]]:
    """The Chinese verbs of money changing hands said with a word for money ("卖了多少钱"), and their nouns."""
    money = free_amount_words(r)
    if not money:
        return []
    found: list[tuple[Span, tuple[str, ...]]] = []
    for verb, nouns in MONEY_VERBS_ZH.items():
        at = r.text.find(verb)
        if at >= 0 and not any(s <= at < e for (s, e), _ in found):
            found.append(((at, at + len(verb)), nouns))
    return found


def _an_amount(k: Knowledge, t: Target) -> bool:
    return getattr(k.model.find_member(t.path), "type", "") in ("sum", "number")


def _linked(k: Knowledge, a: str, b: str) -> bool:
    return a in facts.reach(k.model, b) or b in facts.reach(k.model, a)


def _how_much(r: Reading, k: Knowledge) -> None:
    """ "how much has Jack Yang paid through WeChat Pay", "the most money", "总金额": with no measure named,
    "how much" or a word for money asks the amount of the one cube the question's values (or cube) belong to
    (its sum measure over its amount column)."""
    marks = [m for m in r.marks_of("sum") if m.text.lower() == "how much" and free(r, m)]
    money = free_amount_words(r)
    if r.measures or not (marks or money):
        return
    cubes = {t.cube for m in r.mentions for t in m.of("value", "cube")}
    found: list[str] = []
    if not marks:  # "the most money", "总金额", "一共...多少钱": the amount of things that happened (dated rows)
        asked = [
            m for m in r.marks_of("sum", "count", "most", "max") if free(r, m) and 0 <= money[0].start() - m.end <= 6
        ]  # "with amount", "按金额排": a column, no total
        if not asked:
            return
        marks = [Mark("sum", *money[0].span(), money[0].group(0)), *asked]
        named, cubes = cubes, {c for c in cubes if k.model.cube_time_dimension(c)}
        if not cubes and len(named) == 1:  # "which album brought in the most money": the sales of its rows
            found = [p for c in _referrers_with_money(k, named.pop()) if (p := _amount_sum(k, c))]
    found = found or [sums[0] for c in cubes if (sums := _sums_over_amount(k, c))]
    if len(found) == 1:
        r.measures.append(found[0])
        r.use(*(m.span for m in marks))
        r.notes.append(f"measure {found[0]}: '{marks[0].text}' of the rows the question names")


_EXTREME_AFTER = re.compile(r"\s*(最大|最高|最多|最小|最低|最少)")


def _amount_extreme(r: Reading, k: Knowledge) -> None:
    """ "发票里金额最大的是多少": a word for money followed by a superlative asks the largest (smallest) amount
    of the one cube the question names: its max (min) measure over its amount column."""
    found = next(((w, e) for w in free_amount_words(r) if (e := _EXTREME_AFTER.match(r.text, w.end()))), None)
    cubes = {t.cube for m in r.mentions for t in m.of("cube")}
    if r.measures or found is None or len(cubes) != 1:
        return
    word, extreme = found
    cube = cubes.pop()
    amount = facts.amount_column(k.model, cube)
    kind = "min" if extreme.group(1) in ("最小", "最低", "最少") else "max"
    over = facts.measures_over(k.model, cube, facts.column(amount), (kind,)) if amount is not None else []
    if not over:
        return
    r.measures.append(over[0].path)
    r.use(
        word.span(), extreme.span(1), *(m.span for m in r.marks_of("max", "min", "most") if m.start >= extreme.start(1))
    )
    r.notes.append(f"measure {over[0].path}: '{word.group(0)}{extreme.group(1)}' of {cube}")


def _referrers_with_money(k: Knowledge, cube: str) -> set[str]:
    """The nearest cubes of dated rows that reach ``cube`` by joins and add up an amount of money (a sum measure
    over their amount column formatted as currency); none when two are equally near."""
    hops: dict[str, int] = {}
    for source in k.model.cubes:
        refers = facts.referred(k.model, source) if k.model.cube_time_dimension(source) else []
        if cube in refers and _money_sums(k, source):  # many-to-one all the way: no row counted twice
            hops[source] = refers.index(cube)
    nearest = min(hops.values(), default=None)
    found = {c for c, n in hops.items() if n == nearest}
    return found if len(found) == 1 else set()


def _amount_sum(k: Knowledge, cube: str) -> str | None:
    """The sum of money over ``cube``'s amount column, else its one sum of money, else the sum over its amount
    column (a model that formats no measure as currency)."""
    over = _sums_over_amount(k, cube)
    money = _money_sums(k, cube)
    return (
        next((p for p in over if p in money), None)
        or (money[0] if len(money) == 1 else None)
        or (over[0] if over and not money else None)
    )


def _sums_over_amount(k: Knowledge, cube: str) -> list[str]:
    """The sum measures over ``cube``'s amount column."""
    amount = facts.amount_column(k.model, cube)
    return [m.path for m in facts.measures_over(k.model, cube, facts.column(amount), ("sum",))] if amount else []


def _money_sums(k: Knowledge, cube: str) -> list[str]:
    return [
        m.path
        for m in k.model.cubes[cube].measures.values()
        if m.type == "sum" and getattr(m, "format", None) == "currency" and getattr(m, "public", True)
    ]


def _money_restated(r: Reading, k: Knowledge) -> None:
    """ "总金额", "一共…多少钱", "the total amount": a word for money beside a measure over its cube's amount, or
    a measure of money (``format: currency``: "营收最高的5个 ... 各卖了多少钱"), says that measure again: used."""
    amounts = {facts.column(a) for p in r.measures if (a := facts.amount_column(k.model, p.split(".", 1)[0]))}
    members = [k.model.find_member(p) for p in r.measures]
    over = [m for m in members if facts.column(m) in amounts or getattr(m, "format", None) == "currency"]
    for m in free_amount_words(r) if over else []:
        r.use(m.span())


def _both_extremes(r: Reading, k: Knowledge) -> None:
    """ "the price of our most expensive beauty product, and of the cheapest one": both superlatives of one
    column and no measure named ask its largest and smallest values (the model's max and min over it)."""
    lows = [m for m in r.marks_of("min") if free(r, m)]
    highs = [m for m in r.marks_of("max") if free(r, m)] or [
        m for m in r.marks_of("most") if lows and re.fullmatch(r"\s+(?:and|or|&)\s+", r.text[m.end : lows[0].start])
    ]  # "the most and least expensive"
    if r.measures or not highs or not lows:
        return
    cubes = list(dict.fromkeys(t.cube for m in r.mentions for t in m.targets))
    column = adjective_member(highs[0].text, r, k, cubes) or adjective_member(lows[0].text, r, k, cubes)
    if column is None or getattr(column, "kind", "") != "dimension":
        return
    ends = [facts.measures_over(k.model, column.cube, facts.column(column), (kind,))[:1] for kind in ("max", "min")]
    if not all(ends):
        return
    r.measures += [ends[0][0].path, ends[1][0].path]
    r.use(highs[0].span, lows[0].span, *(m.span for m in r.marks_of("most") if m.start >= highs[0].start))
    said = [m.span for m in r.mentions if column.path in {t.path for t in m.of("dimension")}]
    titled = facts.title_words(column)  # "the price of": a word of the column's title
    r.use(*said, *((w.start, w.end) for w in words(r.text) if w.norm in titled and free_span(r, (w.start, w.end))))
    r.notes.append(f"measures {ends[0][0].path}, {ends[1][0].path}: '{highs[0].text}' and '{lows[0].text}'")


def _counted_head(r: Reading, mark: Mark) -> Mention | None:
    """The segment or value a count word counts the rows of: right after it ("how many Cy Young Awards has
    he won"), naming rows of one cube and no cube or measure, and not a value qualifying the name after it
    ("how many Rock tracks")."""
    if mark.kind != "count":
        return None
    named = after(r, mark.span)
    if named is None or named.of("cube", "measure", "dimension") or not named.of("segment", "value"):
        return None
    if len({t.cube for t in named.targets}) != 1 or (named.of("value") and not named.of("segment")):
        return None
    nxt = after(r, named.span)
    return named if nxt is None or nxt.start > named.end + 1 else None


def _segment_counted(r: Reading, k: Knowledge) -> None:
    """ "How many premium members joined last month", "高级会员有多少": a count word beside a segment's name
    (and no cube's) counts the segment's cube rows; the segment stays to filter them. So does "the most"
    before it ("which player has the most Cy Young Awards"): the rows counted are ranked."""
    if r.measures:
        return
    for mark in (m for m in r.marks_of("count", "most") if free(r, m)):
        if mark.kind == "most":  # "which player has the most Cy Young Awards": the segment's rows, ranked
            named = after(r, mark.span)
        else:
            named = _counted_head(r, mark) or after(r, mark.span) or before(r, mark.span)
        if named is None or not named.of("segment") or named.of("cube", "measure") or _other_values(named):
            continue
        counted = facts.row_count(k.model, named.of("segment")[0].cube)
        if counted:
            r.measures.append(counted)
            r.use(mark.span)
            r.notes.append(f"measure {counted}: '{mark.text} {named.text}' counts the segment's rows")
            return


def _other_values(named: Mention) -> bool:
    """Values in a segment's mention of another cube than the segment's (a name shared by two things)."""
    cubes = {t.cube for t in named.of("segment")}
    return any(t.cube not in cubes for t in named.of("value"))


def _segment_rate(r: Reading, k: Knowledge) -> None:
    """ "late delivery rate for each ship mode", "退货率": with no measure named, a rate word right after a
    segment's name asks the model's rate of that segment (``_rate_of``), else its cube's row count, which the
    share pass divides by the segment's part."""
    if r.measures:
        return
    for m in r.mentions:
        found = RATE_AFTER.match(r.text, m.end)
        segments = [s for t in m.of("segment") if (s := k.model.find_member(t.path)) is not None]
        if found is None or not segments or not free(r, m) or not free_span(r, found.span(1)):
            continue
        rate = _rate_of(k, segments[0])
        if rate is not None:
            r.measures.append(rate)
            r.use(m.span, found.span(1))
            r.notes.append(f"measure {rate}: '{m.text} {found.group(1)}' is the model's rate of {segments[0].path}")
        elif counted := facts.row_count(k.model, segments[0].cube):
            r.measures.append(counted)
            r.notes.append(f"measure {counted}: the rows a '{m.text} {found.group(1)}' divides")
        return


def _rate_of(k: Knowledge, segment: Any) -> str | None:
    """The one public number measure of the segment's cube that divides a count filtered as the segment is by
    the row count ("1.0 * {late_count} / NULLIF({count}, 0)"), if the model has one."""
    cube = k.model.cubes[segment.cube]
    total = (facts.row_count(k.model, segment.cube) or "").rpartition(".")[2]
    same = facts.column_sql(segment.sql)
    parts = {
        m.name
        for m in cube.measures.values()
        if m.type == "count" and [facts.column_sql(f) for f in m.filters] == [same]
    }
    found = [
        m.path
        for m in cube.measures.values()
        if m.type == "number"
        and m.public
        and (refs := re.findall(r"\{(\w+)\}", m.sql or ""))
        and len(refs) == 2
        and refs[0] in parts
        and refs[1] == total
        and "-" not in re.sub(r"\{\w+\}", "", m.sql or "")  # not "1 - late / all" (the on-time rate)
    ]
    return found[0] if len(found) == 1 else None


def _usage_counted(q: Question, k: Knowledge) -> None:
    """ "which payment method is used most", "最常用的支付方式": the rows of the named dimension's cube counted
    per value (the group pass groups by it)."""
    r = q.reading
    if r.measures or not (_USAGE.search(r.text) and (r.marks_of("most", "top") or q.understanding.ranking)):
        return
    for m in r.mentions:
        dims = [k.model.find_member(t.path) for t in m.of("dimension")]
        dims = [d for d in dims if d is not None and d.type == "string"]
        counted = facts.row_count(k.model, dims[0].cube) if dims else None
        if counted:
            r.measures.append(counted)
            r.notes.append(f"measure {counted}: how often each {dims[0].path} is used")
            return


def _ranked_by(q: Question, k: Knowledge) -> None:
    """ "best selling 5 products by sales": the measure after "by" ranks; one a ranking phrase named ("best
    selling" = units sold) gives way to it."""
    r = q.reading
    if q.understanding.ranking is None or len(r.measures) < 2:
        return
    for mark in r.marks_of("group"):
        m = after(r, mark.span)
        by = [t.path for t in (m.of("measure") if m else []) if t.path in r.measures]
        if by:
            phrased = [p for x in r.mentions if _SELLING.search(x.text) for p in (t.path for t in x.of("measure"))]
            r.measures = [by[0], *(p for p in r.measures if p != by[0] and p not in phrased)]
            r.use(mark.span)
            return


_IN_TOTAL = re.compile(r"in total\b", re.IGNORECASE)


def _summed_too(r: Reading, k: Knowledge) -> None:
    """ "how many invoices ..., and what did they add up to?": a total asked with nothing named after it is
    the sum of the counted cube's amount column, beside the count."""
    if len(r.measures) != 1 or k.model.find_member(r.measures[0]).type not in _COUNTS:
        return
    for mark in r.marks_of("sum"):
        if not free(r, mark) or _IN_TOTAL.match(r.text, max(0, mark.start - 3)):
            continue  # "placed more than 30 orders with us in total": all told, no amount asked
        following = [m for m in r.mentions if m.start >= mark.end and m.start - mark.end < 30]
        amount = facts.amount_column(k.model, r.measures[0].split(".", 1)[0])
        found = facts.measures_over(k.model, amount.cube, facts.column(amount), ("sum",)) if amount else []
        if not following and found:
            r.measures.append(found[0].path)
            r.use(mark.span)
            r.notes.append(f"measure {found[0].path}: the total '{mark.text}' asks of the counted rows")
            return


def _units(r: Reading, k: Knowledge) -> None:
    """ "average track length in minutes", "几分钟": the measure's twin in the unit the question names; the
    unit's words are then used."""
    twins = [unit_twin(k.model, m, r.text) for m in r.measures]
    if twins == r.measures:
        return
    r.notes.append("unit asked: " + ", ".join(f"{a} -> {b}" for a, b in zip(r.measures, twins, strict=True) if a != b))
    r.measures = twins
    for m in r.mentions:
        if UNIT_WORDS.search(m.text) and not m.of("measure") and free(r, m):
            r.use(m.span)


_ZH_UNITS = {"分钟": "minute", "小时": "hour", "秒": "second", "天": "day", "毫秒": "ms", "兆": "mb", "字节": "byte"}


def _unit_words(r: Reading, k: Knowledge) -> None:
    """ "in MB", "几分钟": a unit the chosen measure's title names is said, not unknown."""
    titles = " ".join((getattr(k.model.find_member(m), "title", "") or "").lower() for m in r.measures)
    for found in UNIT_WORDS.finditer(r.text):
        word = _ZH_UNITS.get(found.group(0), found.group(0).lower())
        if word.rstrip("s") in titles or word in titles:
            r.use(found.span())


_PAIR_GLUE = re.compile(r"\s*(?:,|，|、|and|or|&|和|与|及)\s*(?:the\s+)?", re.IGNORECASE)
_PAIRED_KINDS = ("avg", "sum", "max", "min")


def _paired(r: Reading, k: Knowledge, m: Mention, path: str, marks: list[Mark]) -> list[str]:
    """ "lowest and highest list price", "min, max and average supply cost": the aggregation words joined to
    the one next to the name (or in it) each ask their measure of the same column (the cube's measure of that
    type over it); one the model has no measure for is refused."""
    member = k.model.find_member(path)
    if member is None or not facts.column(member) or (marks and marks[0].kind not in _PAIRED_KINDS):
        return []
    out: list[str] = []
    start = marks[0].start if marks else m.start
    for mark in reversed([x for x in r.marks if x.kind in _PAIRED_KINDS and x.end <= start]):
        if not _PAIR_GLUE.fullmatch(r.text[mark.end : start]):
            break
        start = mark.start
        found = facts.measures_over(k.model, member.cube, facts.column(member), _TYPE_FIT[mark.kind])
        if not found:
            title = member.title or member.name
            r.refuse(
                f"the model has no '{mark.text}' of {title}: ask for what it has, or add that measure to the model"
            )
        elif found[0].path not in (*r.measures, path):
            out.insert(0, found[0].path)
            r.use(mark.span)
    return out


# what stands between a verb and the things it counts: "won the most games", "lost 10 more games", "won more"
_VERB_OBJECT_GAP = re.compile(r"\s+(?:the\s+)?(?:most|more|fewest|fewer|least|less|\d+(?:\s+more)?)\s+$", re.I)


def _verb_ranks(r: Reading, verb: Mention, m: Mention) -> bool:
    """``verb`` ends in an irregular verb ("won", "team won") and a ranking word or number stands between it
    and ``m`` ("won the most games", "lost 10 more games")."""
    return irregular_form(verb.text.split()[-1]) and bool(_VERB_OBJECT_GAP.fullmatch(r.text[verb.end : m.start]))


def _object_of_verb(r: Reading, verb: Mention, m: Mention) -> bool:
    """ "which team won the most games": a measure named by an irregular verb ("won": Wins) already chosen,
    then a ranking word, then a noun naming another measure ("games"): the noun is what the verb's measure
    counts, no measure of its own."""
    return _verb_ranks(r, verb, m) and any(t.path in r.measures for t in verb.of("measure")) and bool(m.of("measure"))


def _verb_of_rows(r: Reading, i: int) -> bool:
    """ "who has won the most MVP awards", "which players won the AL MVP": an irregular verb naming a measure,
    then (past a ranking word or an article, and values qualifying it) a segment's name (rows of a cube, no
    measure): the verb only says how the rows came; the segment's rows are counted or listed."""
    verb = r.mentions[i]
    if not irregular_form(verb.text.split()[-1]) or not verb.of("measure"):
        return False
    at = verb.end
    for m in r.mentions[i + 1 :]:
        gap = r.text[at : m.start]
        if not (_VERB_OBJECT_GAP.fullmatch(gap) or _ARTICLE_GAP.fullmatch(gap)) or m.of("measure", "cube"):
            return False
        if m.of("segment"):
            return True
        if not m.of("value"):
            return False
        at = m.end
    return False


_ARTICLE_GAP = re.compile(r"\s+(?:(?:the|a|an)\s+)?", re.IGNORECASE)


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.column_list:
        return  # "? name, brand and price" with no aggregate asked: rows, not measures (passes.tail)
    for i, m in enumerate(r.mentions):
        if i and _object_of_verb(r, r.mentions[i - 1], m):
            r.use(m.span)  # "won the most games": the games are what the wins count
            continue
        if _verb_of_rows(r, i):
            r.use(m.span)  # "won the most MVP awards": the awards' rows are counted (``_segment_counted``)
            continue
        path, marks, refusal = _measure_of(q, k, m)
        if refusal:
            r.refuse(refusal + ": ask for what it has, or add that measure to the model")
            return
        if path and path not in r.measures:
            r.measures += [*_paired(r, k, m, path, marks), path]
            r.use(m.span, *(mark.span for mark in marks))
            r.notes.append(f"measure {path} for {m.text!r}" + (f" ({marks[0].text})" if marks else ""))
    _ranked_by(q, k)
    _amount_extreme(r, k)
    _how_much(r, k)
    _money_verb(r, k)
    _usage_counted(q, k)
    _rows_counted(q, k)
    _segment_counted(r, k)
    _segment_rate(r, k)
    _both_extremes(r, k)
    _summed_too(r, k)
    _money_restated(r, k)
    _units(r, k)
    _unit_words(r, k)
    if r.measures:
        r.intent = "aggregate"
    elif r.marks_of("median"):
        r.refuse(f"the model has no measure for '{r.marks_of('median')[0].text}'")

"""Pass: a list of columns closing the question ("which employees were born before 1960? *name, title,
birth date*", "grocery under 15 yuan? *name, brand, price, cheapest first*", "... - *with product, qty and
amount*", "……，列出*名称、电话和余额*"). Such a list says the question asks for rows, and its words name the
columns those rows show, not measures ("model" is the planes' model column, not the count of models).

The list is found by its shape only: after a break (?, :, ;, a dash, "with their", "give me", "包括"...), two
or more short items joined by commas or "and", most of them names of the model's columns or tables, none of
them a number or a date; an ordering phrase may close it ("cheapest first", "按余额从高到低"). When the rest
of the question asks for no aggregate (no count, average, total, share, ranking word outside the list), the
reading is a listing: the measures pass leaves it alone and the listing passes take the items as columns.
"""

from __future__ import annotations

import re

from router.parse.column_items import DATE_ITEM
from router.parse.context import Knowledge, Question
from router.parse.language import HOW_MANY_UNITS
from router.parse.reading import Mention, Reading, Span
from router.parse.text import has_cjk, overlaps, within, words

# where a list of columns may start: after a break in the sentence or a phrase asking for columns
_BREAK = re.compile(
    r"[?:;!]|\s[-–—]+\s|。|\b(?:with|incl(?:uding|\.)?|plus)(?:\s+(?:their|its|the|his|her))?\s|"
    r"\b(?:give|show|get|send|pull|list)(?:\s+me)?(?:\s+(?:their|its|the|his|her))?\s|"
    r"包括|包含|带上|附上|并?列出|显示|要有|需要|给我看看?|给我列一?下?|的",
    re.IGNORECASE,
)
_ITEM_GAP = re.compile(r"\s*(?:,|，|、|;|&|/|\band\b|\bplus\b|以及|和|及|与)\s*", re.IGNORECASE)
_LEAD = re.compile(r"^(?:(?:the|their|its|his|her|each|also|just|only|and|pls|please|me)\s+)+", re.IGNORECASE)
# what closes an item: punctuation, and on the last item the rows it is shown for ("ship date for each line")
_TRAIL = re.compile(r"(?:\s+(?:(?:for|of)\s+(?:each|every)|per)\s+\w+)?[\s.?!。？！]*$", re.IGNORECASE)
# an item that orders the rows instead of naming a column ("fastest first", "sorted by date", "价格从高到低",
# "price high to low")
_ORDERING = re.compile(
    r"^(?:[a-z]+(?:\s+[a-z]+){0,2}\s+first|(?:sorted|ordered|order|sort|ranked)\s+by\b.*|by\s+[a-z ]+|"
    r"(?:newest|latest|oldest|earliest|highest|lowest|biggest|largest|smallest)\s+(?:to|->)\s+\w+|"
    r"按[^,，、]{1,10}?(?:排序|排列|排|从.到.|[降升]序)|[^,，、\s]{0,6}?(?:(?:从|由)(?:高|低|大|小|多|少|新|旧|早|晚)到.{1,2}|"
    r"[降升]序|倒序)|(?:[a-z]+\s+){0,2}(?:from\s+)?(?:high|low|big|small|new|old)(?:est)?\s+to\s+(?:high|low|big|small|new|old)(?:est)?|"
    r"pls|please|thanks?)$",
    re.IGNORECASE,
)
# items any listing's rows have a column for: an amount, a date (and "when they paid": column_items.DATE_ITEM)
_GENERIC_ITEM = re.compile(r"^(?:amounts?|金额|日期|时间)$", re.IGNORECASE)
_MAX_WORDS = 4  # an English item longer than this is a clause, not a column
_MAX_CJK = 8
# language marks that ask for an aggregate; outside the list they keep the question an aggregate
AGGREGATING = ("count", "distinct", "avg", "sum", "median", "share", "most", "top", "max", "min", "compare")


def _items(text: str, start: int, end: int) -> list[Span]:
    """The spans of the comma/and-separated items of ``text[start:end]``, leading articles and trailing
    punctuation left out."""
    out: list[Span] = []
    at = start
    for gap in [*_ITEM_GAP.finditer(text, start, end), None]:
        stop = gap.start() if gap is not None else end
        at += len(text[at:stop]) - len(text[at:stop].lstrip())
        lead = _LEAD.match(text[at:stop])
        s = at + (lead.end() if lead else 0)
        trail = _TRAIL.search(text[s:stop])
        e = s + trail.start() if trail and trail.start() else stop
        if s < e:
            out.append((s, e))
        at = gap.end() if gap is not None else end
    return out


def _short(text: str) -> bool:
    if has_cjk(text):
        return len(text) <= _MAX_CJK and not re.search(r"[的是了吗呢]|哪|多少", text)
    return len(text.split()) <= _MAX_WORDS and not re.search(r"\d", text)


def _asks(r: Reading, span: Span) -> bool:
    """An item that asks something itself ("how many", "which flights", "lowest balance"): a clause, not a
    column; a language word that is the whole item ("total") may name a column."""
    if re.match(HOW_MANY_UNITS + r"\w+$", r.text[span[0] : span[1]], re.IGNORECASE):
        return False  # "how many minutes late": the column in that unit
    return any(
        overlaps(mk.span, span) and mk.kind in (*AGGREGATING, "which", "list") and mk.span != span for mk in r.marks
    )


def _generic(item: str) -> bool:
    return bool(_GENERIC_ITEM.match(item) or DATE_ITEM.match(item))


def _names_column(r: Reading, span: Span) -> bool:
    """A mention inside ``span`` names a column or a table of the model (not only a measure or a value)."""
    return any(overlaps(m.span, span) and (m.of("dimension") or m.of("cube")) for m in r.mentions if span[0] <= m.start)


def _list_after(r: Reading, start: int) -> tuple[list[Span], list[Span]] | None:
    """The column items and the ordering items of the text after ``start`` when it is a list of columns."""
    items = _items(r.text, start, len(r.text))
    ordering = [s for s in items if _ORDERING.match(r.text[s[0] : s[1]])]
    columns = [s for s in items if s not in ordering]
    if len(columns) < 2 or not all(_short(r.text[s[0] : s[1]]) and not _asks(r, s) for s in columns):
        return None
    if any(overlaps(s, t) for s in columns for t in r.time_spans):
        return None
    named = sum(_names_column(r, s) or _generic(r.text[s[0] : s[1]]) for s in columns)
    return (columns, ordering) if named * 2 >= len(columns) and named >= 1 else None


def find(r: Reading) -> tuple[list[Span], list[Span]]:
    """The column items and ordering items of the list of columns that closes the question (the last break
    that starts one: "，带上型号、座位数" after "……的所有飞机"), or two empty lists."""
    for brk in reversed(list(_BREAK.finditer(r.text))):
        if brk.end() >= len(r.text) or not words(r.text[: brk.start()]):
            continue
        found = _list_after(r, brk.end())
        if found:
            return found
    return [], []


def _as_columns(m: Mention) -> bool:
    """A name in the list is a column (or a table, whose label it shows): not a measure, value or segment;
    False when it names none (its words are then matched to columns by ``router.parse.column_items``)."""
    m.targets = m.of("dimension", "cube")
    m.weights = {t: w for t, w in m.weights.items() if t in m.targets}
    return bool(m.targets)


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    items, ordering = find(r)
    if not items:
        return
    ordering += [mk.span for mk in r.marks if mk.kind == "order"]
    outside = [mk for mk in r.marks if mk.kind in AGGREGATING and not within(mk.span, items)]
    if any(not within(mk.span, ordering) for mk in outside):
        return  # "top 5 customers by revenue: name and country": an aggregate with the columns of its groups
    r.column_list = items
    # "date, priority, total": a language word that is an item names a column, not an aggregate
    r.marks = [mk for mk in r.marks if not (mk.kind in AGGREGATING and within(mk.span, items))]
    r.mentions = [m for m in r.mentions if not within(m.span, items) or _as_columns(m)]
    r.notes.append("columns asked: " + ", ".join(repr(r.text[s:e]) for s, e in items))

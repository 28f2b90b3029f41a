"""Passes for detail questions (no measure asked): which cube's rows are listed, and which of its
columns the listing shows.

- The listed cube is the head of the names after a listing or question word ("list *the line items* on
  order 7", "which *customers* ..."), else the first cube named that is not only a key's owner ("show
  order 7" lists orders), else the cube of a named value or row.
- The columns: the cube's key and label, then every dimension the question filters, orders by or names
  ("with their phone and address"), and the time dimension a period is on; when it names none, the
  cube's first public dimensions (``DISPLAY_CAP``) and its amount, as a "show me the orders" expects.
"""

from __future__ import annotations

import re

from router.parse import column_items, facts
from router.parse.context import Knowledge, Question
from router.parse.language import STOPWORDS_EN, names_a_number
from router.parse.nearby import free, free_amount_words, phrase_after
from router.parse.reading import Filter, Mention, Reading, Span
from router.parse.text import GLUE, Word, norm_word, words

DISPLAY_CAP = 8  # columns a listing shows of its cube when the question names none


def _run_head(r: Reading, k: Knowledge) -> Mention | None:
    for mark in r.marks_of("list", "which"):
        run = phrase_after(r, mark.span)
        for m in reversed(run):
            if any(t.path in r.keyed for t in m.of("cube")):
                continue  # "which supplier names offer part 1000": a row named by its key is no head
            if m.of("cube") or m.of("segment") or _counts_rows(m, k) or _labels_rows(m, k, r.language):
                return m
    return None


def _labels_rows(m: Mention, k: Knowledge, language: str) -> bool:
    """ "which supplier names offer part 1000": the label of a cube's rows, asked for, names those rows."""
    dims = [t for t in m.of("dimension") if not m.of("value")]
    return len(dims) == 1 and facts.label(k.model, dims[0].cube, language) == dims[0].path


def _counts_rows(m: Mention, k: Knowledge) -> bool:
    """ "which planes in the registry": a name the model gives only to the count of a cube's rows names
    those rows after a question or listing word."""
    return bool(m.of("measure")) and all(facts.row_count(k.model, t.cube) == t.path for t in m.of("measure"))


_VERB_AFTER_WHO = re.compile(r"\s*([a-z]{3,})\b", re.IGNORECASE)


def _agent(r: Reading, k: Knowledge) -> Mention | None:
    """ "who supplies that part": the cube whose name is the agent noun of the verb after "who" (supplies ->
    supplier, manufactures -> manufacturer, sells -> seller) is the one whose rows are asked."""
    for mark in r.marks_of("which"):
        verb = _VERB_AFTER_WHO.match(r.text, mark.end) if mark.text.lower() == "who" else None
        if verb is None:
            continue
        word = verb.group(1).lower()
        base = (
            re.sub(r"i(?:es|ed)$", "y", word) if re.search(r"i(?:es|ed)$", word) else re.sub(r"(?:es|s|ed)$", "", word)
        )
        for noun in dict.fromkeys((base[:-1] + "ier" if base.endswith("y") else base + "er", base + "r", word + "r")):
            cubes = [t for m in k.lexicon.find(noun) if m.text.lower() == noun for t in m.of("cube")]
            if cubes:
                return Mention(verb.start(1), verb.end(1), verb.group(1), [cubes[0]])
    return None


def _cube_of(m: Mention) -> str | None:
    for kind in ("cube", "segment", "dimension", "value", "measure"):
        found = m.of(kind)
        if found:
            return found[0].cube
    return None


# "……的航班，包括航空公司、航班号": what follows names the columns shown, not the rows listed
_COLUMNS_CUE = re.compile(r"[，,；;:：]?\s*(?:包括|包含|含有|带上|附上|并显示|显示出?)")


def _last_noun(r: Reading) -> Mention | None:
    """Chinese puts the head noun last ("播放列表 X 里的所有曲目": tracks): the last cube named, not a key's owner,
    before the columns the question asks to include ("……的航班，包括航空公司": flights)."""
    cubes = [
        m
        for m in r.mentions
        if (m.of("cube") or m.of("segment")) and not m.of("value") and not any(t.path in r.keyed for t in m.of("cube"))
    ]
    cue = _COLUMNS_CUE.search(r.text)
    starts = [*([cue.start()] if cue else []), *(s for s, _ in r.column_list[:1])]  # "……，给我看日期和金额"
    before = [m for m in cubes if starts and m.end <= max(starts)]
    return (before or cubes)[-1] if cubes else None


_RELATIVE = re.compile(r"\s+(?:who|that|which)\b", re.IGNORECASE)


def _relative_rows(r: Reading) -> bool:
    """ "Staff who joined in 2003 - name, title": a cube followed by a relative clause names its rows."""
    return any(m.of("cube") and _RELATIVE.match(r.text, m.end) for m in r.mentions)


def _described_rows(r: Reading) -> Mention | None:
    """ "our business customers: which company are they with and what country": with no measure, "which/what
    <column>" of a cube whose rows the question names before it asks for those rows with that column."""
    if r.measures:
        return None
    for mark in r.marks_of("which"):
        run = phrase_after(r, mark.span)
        columns = [t.cube for m in run[-1:] if not m.of("value") and not m.of("cube") for t in m.of("dimension")]
        named = [
            m
            for m in r.mentions
            if m.end <= mark.start and not m.of("value") and any(t.cube in columns for t in m.of("cube", "segment"))
        ]
        if named:
            return named[-1]
    return None


def head(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.intent == "aggregate" or r.refusal or r.listing:
        return
    if q.understanding.granularity and not r.marks_of("list"):
        return  # "what has Canada brought in each year": a grain asks for a total, not rows
    # a listing word, a key, a value, or a restriction on rows ("flights on July 22 that arrived 5 hours late")
    ranking = q.understanding.ranking  # ... or a number of ranked rows ("the 3 largest orders")
    asked = bool(
        r.marks_of("list", "bound", "sign", "string_op", "string_in", "recent")
        or r.keyed
        or any(m.of("value") for m in r.mentions)
        or (ranking and names_a_number(ranking.phrase))
        or _relative_rows(r)
        or r.column_list
    )
    chosen = _last_noun(r) if r.language == "zh" and asked else None
    chosen = chosen or _run_head(r, k) or _agent(r, k) or (None if ranking else _described_rows(r))
    if chosen is None and not asked:
        return  # "what about the other region?", "那个大供应商最近怎么样": nothing asks for rows
    if chosen is None:  # a name outside the closing list of columns ("the 10 worst delays - date, carrier")
        outside = [m for m in r.mentions if not r.listed_column(m.span)]
        cubes = [m for m in outside if m.of("cube")] or [m for m in r.mentions if m.of("cube")]
        unkeyed = [m for m in cubes if m.of("cube")[0].path not in r.keyed]
        columns = [m for m in outside if m.of("dimension") and not m.of("value")]  # "tracks priced 0.99"
        chosen = next(iter(unkeyed or cubes or columns[:1] or [m for m in r.mentions if _cube_of(m)]), None)
    if chosen is None:
        return
    cube = chosen.of("cube")[0].path if chosen.of("cube") else _cube_of(chosen)
    if cube is None:
        return
    cube = _rows_under(r, k, cube, chosen)
    r.listing, r.listed, r.intent = cube, chosen.span, "detail"
    if chosen.of("cube") or (chosen.of("segment") and not chosen.of("value")) or _counts_rows(chosen, k):
        r.use(chosen.span)
        r.segments += [t.path for t in chosen.of("segment") if t.cube == cube and t.path not in r.segments]
    r.notes.append(f"rows of {cube} ({chosen.text!r})")
    _in_role(r, k, cube, chosen.text)


def _rows_under(r: Reading, k: Knowledge, cube: str, chosen: Mention) -> str:
    """ "which suppliers carry part 777? show available qty and supply cost": columns asked of a cube whose rows
    refer to the named one (the part's supplier offers) make those rows the listed ones, one per offer,
    when exactly one cube the columns belong to refers to every cube they and the named rows belong to."""
    bounds = r.marks_of("bound")
    asked = [
        m
        for m in r.mentions
        if r.listed_column(m.span) or any(0 <= b.start - m.end <= 3 for b in bounds)  # "可供数量不到1000"
    ]
    reached = set(facts.referred(k.model, cube))
    beyond = [m.of("dimension") for m in asked if m.of("dimension") and not m.of("cube")]
    # a named value of rows the listed ones do not refer to ("Supplier#000000010's parts")
    beyond += [m.of("value") for m in r.mentions if m.of("value") and not m.of("cube") and beyond]
    beyond = [ts for ts in beyond if not any(t.cube in reached for t in ts)]
    if not beyond:
        return _rows_of_named_values(r, k, cube, reached, chosen)
    cubes = {cube} | {ts[0].cube for ts in beyond}
    under = [c for c in cubes if cubes <= set(facts.referred(k.model, c))]
    if len(under) != 1:
        return cube
    r.notes.append(f"columns of {under[0]} asked: its rows, each naming its {cube}")
    return under[0]


def _rows_of_named_values(r: Reading, k: Knowledge, cube: str, reached: set[str], chosen: Mention) -> str:
    """ "the Dodgers' five highest-paid players in 2016": a value of rows the listed ones do not refer to (a
    team: players belong to none) lists the rows of the one cube that refers to both and that another word of
    the question names (the salaries, by "highest-paid"): one row per salary, each naming its player."""
    if r.listed_column(chosen.span):
        return cube  # rows named only by a column asked for ("with album and artist"): no head to go under
    apart = [{t.cube for t in m.of("value")} for m in r.mentions if m.of("value") and not m.of("cube")]
    apart = [cubes for cubes in apart if not cubes & reached]
    others = [m for m in r.mentions if m is not chosen and not m.of("value")]  # not the words naming the rows
    named = {t.cube for m in others for t in m.of("cube", "measure", "dimension")}
    under = facts.rows_under(k.model, cube, apart, named) if apart else None
    if under is None:
        return cube
    r.notes.append(f"rows of {under}: each names its {cube} and the values named")
    return under


def _named_rows(r: Reading, k: Knowledge, cube: str) -> list[str]:
    """The label of the rows the question named when it lists rows under them (``_rows_under``)."""
    named = next((m for m in r.mentions if m.span == r.listed), None)
    other = named.of("cube")[0].path if named is not None and named.of("cube") else None
    if other is None or other == cube or other not in facts.referred(k.model, cube):
        return []
    name = facts.label(k.model, other, r.language)
    return [*_foreign_key(k, cube, other), *([name] if name else [])]


def _existence(k: Knowledge, f: Filter) -> bool:
    """A key set or unset says a joined row exists or not ("no albums", the rows flights refer to): no column."""
    return f.operator in ("set", "notSet") and bool(getattr(k.model.find_member(f.member), "primary_key", False))


def _in_role(r: Reading, k: Knowledge, cube: str, said: str) -> None:
    """ "our destination airports": a cube that is one role of a table another cube also reads (origin and
    destination airports), named by its role's own word, lists the rows the one cube joining it refers to,
    not every row of the table ("which airports ..." asks for the table's rows)."""
    table = k.model.cubes[cube].sql_table
    siblings = [c for c in k.model.cubes.values() if c.name != cube and table and c.sql_table == table]
    own = facts.title_words(k.model.cubes[cube]) - {w for c in siblings for w in facts.title_words(c)}
    if not siblings or not own & {w.norm for w in words(said)}:
        return
    joining = [c for c in k.model.cubes.values() if any(j.target == cube for j in c.joins)]
    key = facts.primary_key(k.model, joining[0].name) if len(joining) == 1 else None
    if key is not None:
        r.filters.append(Filter(key, "set", [], f"the {cube} rows {joining[0].name} refer to"))
        r.notes.append(f"{cube} is a role of {table}: the rows {joining[0].name} refer to")


def _key_parts(k: Knowledge, cube: str) -> list[str]:
    """The dimensions a composite key is made of ("l_orderkey || '-' || l_linenumber": order key, line
    number): shown beside the key, as a row is usually named by them."""
    key = k.model.find_member(facts.primary_key(k.model, cube) or "")
    sql = facts.column(key) if key is not None else ""
    if "||" not in sql:
        return []
    return [
        d.path
        for d in k.model.cubes[cube].dimensions.values()
        if not d.primary_key and (col := facts.column(d)) and col.isidentifier() and col in sql
    ]


_LIST_GAP = re.compile(r"\s*(?:,|，|、|;|&|\band\b|\bor\b|和|及)\s*", re.IGNORECASE)


_NAME = norm_word("name")


def _titled_words(r: Reading, k: Knowledge, cube: str) -> list[str]:
    """ "name, phone, *balance*": a free word in a list of columns (right after "with their", or beside another
    column named with only a comma or "and" between) that is a word of the title of exactly one column of the
    listed cube (and not of the cube's own title) asks for that column."""
    own = facts.title_words(k.model.cubes[cube])
    dims = [d for d in k.model.cubes[cube].dimensions.values() if d.public]
    taken = [*r.used, *(m.span for m in r.marks)]
    found: list[tuple[Word, str]] = []
    for w in words(r.text):
        if (
            w.cjk
            or w.norm in GLUE
            or w.raw.lower() in STOPWORDS_EN
            or w.norm in own
            or any(u[0] <= w.start and w.end <= u[1] for u in taken)
        ):
            continue
        titled = [d.path for d in dims if w.norm in facts.title_words(d)]
        if len(titled) > 1 and w.norm == _NAME:  # "name, title and start date": the rows' own name
            titled = [label] if (label := facts.label(k.model, cube, r.language)) else titled
        if len(titled) == 1:
            found.append((w, titled[0]))
    columns = [*column_spans(r), *((w.start, w.end) for w, _ in found)]
    out = []
    for w, path in found:
        if in_column_list(r, (w.start, w.end), columns):
            out.append(path)
            r.use((w.start, w.end))
    return out


def column_spans(r: Reading) -> list[Span]:
    """Where the question names columns: its dimension mentions."""
    return [m.span for m in r.mentions if m.of("dimension") and not m.of("value")]


def in_column_list(r: Reading, span: Span, columns: list[Span]) -> bool:
    """A word right after "with (their)", or beside another column with only a comma or "and" between."""
    asked = [m.end for m in r.marks_of("columns")]
    if r.listed_column(span):
        return True
    return any(not r.text[end : span[0]].strip() for end in asked) or any(
        _LIST_GAP.fullmatch(r.text[a[1] : span[0]]) or _LIST_GAP.fullmatch(r.text[span[1] : a[0]])
        for a in columns
        if a != span
    )


def _joined_labels(r: Reading, k: Knowledge, cube: str) -> list[str]:
    """ "the lines of order 5 with *product*, quantity and price": another cube named in a list of columns,
    one row of it per listed row (a join from the listed cube), shows its label."""
    out = []
    ahead, columns = facts.reach(k.model, cube), column_spans(r)
    for m in r.mentions:
        other = next((t.path for t in m.of("cube") if t.path != cube and t.path in ahead), None)
        name = facts.label(k.model, other, r.language) if other and free(r, m) else None
        if name and in_column_list(r, m.span, columns):
            out += [*_foreign_key(k, cube, other), name]
            r.use(m.span)
    return out


def _foreign_key(k: Knowledge, cube: str, other: str | None) -> list[str]:
    """The listed cube's own columns its join to ``other`` uses (the part key beside the part's name; a team's
    code and season beside the team's name)."""
    fks = facts.fk_columns(k.model, cube, other) if other else []
    dims = [d for d in k.model.cubes[cube].dimensions.values() if d.public]
    return [d.path for fk in fks for d in dims if facts.column(d).lower() == fk][: len(fks)]


def _amount(r: Reading, k: Knowledge, cube: str) -> list[str]:
    """ "Give date and *amount*", "带上金额": the generic amount word shows the listed cube's amount."""
    found = next(iter(free_amount_words(r)), None)
    amount = facts.amount_column(k.model, cube) if found else None
    if found is None or amount is None:
        return []
    r.use(found.span())
    return [amount.path]


def _display(k: Knowledge, cube: str) -> list[str]:
    """The columns of a listing that names none: the cube's first public dimensions, its amount among
    them ("every invoice" shows what each came to)."""
    shown = [d.path for d in k.model.cubes[cube].dimensions.values() if d.public][:DISPLAY_CAP]
    amount = facts.amount_column(k.model, cube)
    if amount is not None and amount.public and amount.path not in shown:
        shown = [*shown[: DISPLAY_CAP - 1], amount.path]
    return shown


def columns(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.intent != "detail" or r.listing is None or r.refusal:
        return
    cube = r.listing
    shown = [facts.primary_key(k.model, cube), *_key_parts(k, cube), facts.identity(k.model, cube, r.language)]
    shown += [
        f.member
        for f in r.filters
        if getattr(k.model.find_member(f.member), "kind", "") == "dimension" and not _existence(k, f)
    ]
    shown += [member for member, _ in r.order]
    shown += _named_rows(r, k, cube)
    referred = facts.referred(k.model, cube)
    for m in r.mentions:
        if not free(r, m):
            continue
        listed = r.listed_column(m.span)  # a column of the rows or of a row they refer to (a one-to-many
        dims = [  # cube's column would repeat the rows)
            t.path for t in m.of("dimension") if (t.cube in referred if listed else facts.joined(k.model, cube, t.cube))
        ]
        own = [p for p in dims if p.split(".", 1)[0] == cube]
        if own or dims:
            column = (own or dims)[0]
            other = column.split(".", 1)[0]
            named = other != cube and facts.label(k.model, other, r.language) == column
            shown += [*(_foreign_key(k, cube, other) if named else []), column]
            r.use(m.span)
    shown += _joined_labels(r, k, cube) + column_items.resolve(r, k, cube, r.used)
    _row_measures(r, k, cube)
    shown += _titled_words(r, k, cube) + _amount(r, k, cube)
    time_dim = r.time_dimension or k.model.cube_time_dimension(cube)
    if q.understanding.time_ranges and time_dim:
        shown.append(time_dim)
    keys = {p for c in k.model.cubes[cube].joins for p in _foreign_key(k, cube, c.target)}
    keys |= {*_key_parts(k, cube), time_dim}  # a composite key's parts, the date the rows are dated by
    ordered = {member for member, _ in r.order}  # "the 10 priciest parts": the order asks for no column
    # one column asked beside the key, label and filters adds to the usual ones; two or more replace them
    asked = len(set(shown) - {None} - keys - ordered) > 2 + len(r.filters)
    if not asked and not r.column_list:
        shown = [*facts.with_referred_labels(k.model, cube, [c for c in shown + _display(k, cube) if c], r.language)]
    r.columns = [c for c in dict.fromkeys(shown) if c and not _key_shown_twice(k, cube, c, shown)]


# measures whose value over one row is that row's own value (a count is 1, a distinct count too)
ROW_VALUED = frozenset({"sum", "min", "max", "avg", "number"})


def _row_measures(r: Reading, k: Knowledge, cube: str) -> None:
    """ "the batting lines for player X: season, hits, homers": an item of the list of columns that no column
    holds but one measure of the listed rows is called (a sum, an average, a ratio: not a count) is shown per
    row: grouped by the rows' key, the measure is each row's own value. None for a cube without a key."""
    if facts.primary_key(k.model, cube) is None:
        return
    for start, end in r.column_list:
        if any(s <= start and end <= e for s, e in r.used):
            continue
        found = k.lexicon.find(r.text[start:end])
        own = [t.path for m in found for t in m.of("measure") if t.cube == cube]
        whole = len(found) == 1 and found[0].text == r.text[start:end].strip()
        if whole and len(own) == 1 and getattr(k.model.find_member(own[0]), "type", "") in ROW_VALUED:
            r.row_measures.append(own[0])
            r.use((start, end))


def _key_shown_twice(k: Knowledge, cube: str, column: str, shown: list[str | None]) -> bool:
    """The key of a joined cube whose foreign key on the listed cube is shown already ("order 1124"'s
    order key beside the line items' own order key column): the same number twice."""
    other = column.split(".", 1)[0]
    if other == cube or column != facts.primary_key(k.model, other):
        return False
    fk = _foreign_key(k, cube, other)
    return bool(fk) and fk[0] in shown

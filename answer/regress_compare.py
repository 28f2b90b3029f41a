"""Gold vs answer comparison for the regression suite: cells, one-to-one rows, key sets, ORDER BY ... LIMIT.

* Cells: numbers within ``REL_TOL`` relative, dates/timestamps as ISO text, other text case-insensitively.
  A gold number the gold SQL rounds (``ROUND(x, 2)``: 6.52) is matched by any answer number that rounds to
  it (6.517): the answer keeps its precision, the gold's author chose to round.
* Rows: a gold row matches an answer row when each of its non-NULL cells equals some cell of that answer
  row (the answer may be wider). Gold rows and answer rows are paired one-to-one (maximum bipartite
  matching), so one answer row never satisfies two gold rows, and the row counts must be equal.
* Key sets: a one-column gold (loan ids, member ids) matches when one answer column holds exactly the
  gold values, compared as a set.
* Compared periods: a one-row gold of the periods' numbers (and, optionally, their difference) matches an
  answer of one row per period (the answer states the change itself).
* Order: when the outermost SELECT of the gold SQL has ``ORDER BY ... LIMIT``, the answer must list its
  rows in the gold order. Ties may come in any order: position ``i`` of the answer must carry the same
  ORDER BY key values as position ``i`` of the gold, not the same row. ORDER BY expressions that are not
  output columns are appended to the gold query (``__order_<n>``) so their values are known.
* Ties at the cut: that LIMIT ``n`` is run as ``FETCH FIRST n ROWS WITH TIES``. When more than ``n`` rows
  come back, the cut falls inside a tie and the gold's own choice of rows would be arbitrary: an answer is
  right with the rows above the cut plus any of the tied rows to make ``n``, or with every tied row
  (``Gold.limit``). A nested ORDER BY ... LIMIT is ``answer.regress_ties``'s.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp

REL_TOL = 1e-4
Row = Sequence[Any]


@dataclass(frozen=True)
class GoldQuery:
    """The SQL to run and, when ordered, where the ORDER BY keys are in its output rows."""

    sql: str
    width: int | None  # output columns of the original query (None: all columns, no key columns appended)
    key_columns: tuple[int, ...] | None  # None: the gold is a set, order does not matter
    limit: int | None = None  # the LIMIT run WITH TIES (None: no literal LIMIT, or with an OFFSET)
    rounded: bool = False  # the SQL calls ROUND: its decimal numbers are rounded (``Rounded``)


@dataclass(frozen=True)
class Gold:
    rows: list[list[Any]]
    keys: list[tuple[Any, ...]] | None  # per gold row, its ORDER BY key values; None when unordered
    limit: int | None = None  # the LIMIT the rows were fetched WITH TIES at; more rows than it: a tie at the cut

    @property
    def ordered(self) -> bool:
        return self.keys is not None

    @property
    def tied(self) -> bool:
        """The LIMIT cuts between rows with the same ORDER BY keys (they all came back, WITH TIES)."""
        return self.limit is not None and self.keys is not None and len(self.rows) > self.limit

    def counts(self) -> tuple[int, ...]:
        """The row counts a right answer may have: the gold's; when tied, the LIMIT or every tied row."""
        return (self.limit, len(self.rows)) if self.tied and self.limit is not None else (len(self.rows),)

    def required(self) -> list[int]:
        """The gold rows every right answer has: all of them; when tied, those above the cut."""
        if not self.tied or self.keys is None:
            return list(range(len(self.rows)))
        cut = self.keys[-1]
        return [i for i, key in enumerate(self.keys) if not _same_keys(key, cut)]


# -- cells -----------------------------------------------------------------------------------------------


class Rounded(Decimal):
    """A gold number a ROUND of the gold SQL made: it stands for every number that rounds to it."""

    def covers(self, value: float) -> bool:
        places = -int(self.as_tuple().exponent)
        return places > 0 and abs(value - float(self)) <= 0.5 * 10**-places + 1e-9


def _shown_rounded(gold: float, got: float) -> bool:
    """An answer number that is the gold number rounded to two or more decimals (43.79 for 43.785083, 5.4
    i.e. 5.40 for 5.396: a model column that rounds to cents or hundredths, its trailing zero dropped)."""
    if not math.isfinite(got):
        return False
    exponent = Decimal(repr(got)).normalize().as_tuple().exponent
    places = -exponent if isinstance(exponent, int) else 0
    return places > 0 and round(gold, max(places, 2)) == got


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", ""))
        except ValueError:
            return None
    return None


def _text(value: Any) -> str:
    """Case-folded text; dates and timestamps as ISO ("2024-03-01", "2024-03-01 10:00:00")."""
    s = value.isoformat() if isinstance(value, dt.date) else str(value)
    s = s.strip().lower()
    if len(s) >= 10 and s[4] == "-" and s[7] == "-" and s[:4].isdigit():
        rest = s[10:].lstrip("t ").removesuffix("z").removesuffix(".000")
        return s[:10] if rest in ("", "00:00:00", "00:00:00+00:00") else f"{s[:10]} {rest[:8]}"
    return s


def shown(value: Any) -> float | str:
    """A cell as it is reported in a reason: a number, or its normalised text."""
    number = _num(value)
    return _text(value) if number is None else number


_MONTHS: dict[str, int] = {
    name: i + 1
    for i, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
}

_PERIOD_LABELS = (  # a compared period's label -> the ISO date its period starts on
    (re.compile(r"^(\d{4})\s*年?$"), lambda m: f"{m[1]}-01-01"),
    (re.compile(r"^(\d{4})\s*[-年/]\s*(\d{1,2})\s*月?$"), lambda m: f"{m[1]}-{int(m[2]):02d}-01"),
    (
        re.compile(r"^q([1-4])\s*(?:of\s+)?(\d{4})$|^(\d{4})\s*[- ]?\s*q([1-4])$|^(\d{4})\s*年?\s*第?([1-4])\s*季度$"),
        lambda m: f"{m[2] or m[3] or m[5]}-{3 * int(m[1] or m[4] or m[6]) - 2:02d}-01",
    ),
    (  # a half year: "H1 1997", "1997 H2", "1997年上半年"
        re.compile(r"^h([12])\s*(\d{4})$|^(\d{4})\s*[- ]?\s*h([12])$|^(\d{4})\s*年?\s*([上下])半年$"),
        lambda m: f"{m[2] or m[3] or m[5]}-{'01' if (m[1] or m[4] or m[6]) in ('1', '上') else '07'}-01",
    ),
    (
        re.compile(r"^([a-z]{3,9})\.?\s+(?:of\s+)?(\d{4})$"),  # "june 1998", "sep 2024"
        lambda m: f"{m[2]}-{_MONTHS[m[1][:3]]:02d}-01" if m[1][:3] in _MONTHS else None,
    ),
)


def _period_start(label: str) -> str | None:
    """ "1995", "1995年", "2024-03", "Q1 2024", "2024年1季度" -> the start date; None for other text. What
    follows the period after a comma or in parentheses says which it is ("2011-11, last month",
    "2011-11 (last month)")."""
    for text in dict.fromkeys((label.strip().lower(), _ASIDE_AFTER.sub("", label).strip().lower())):
        for pattern, start in _PERIOD_LABELS:
            if m := pattern.match(text):
                return start(m)
    return None


_ASIDE_AFTER = re.compile(r"\s*(?:[,，]\s*[^,，]*|[(（][^()（）]*[)）])$")


_PERIOD_START = re.compile(r"^\d{4}-(\d{2})-01(?:[T ]00:00:00(?:\.0+)?)?$")


def _period_number(gold: Any, got: Any) -> bool:
    """A gold month or quarter number (``EXTRACT(MONTH ...)``: 6, ``EXTRACT(QUARTER ...)``: 2) is the period
    an answer row shows by its start ("2013-06-01", "2013-04-01T00:00:00.000"); the row counts still have to
    agree, so a series over several years does not pass for one year's months."""
    if isinstance(gold, bool) or not isinstance(gold, int | Decimal | float) or not isinstance(got, str):
        return False
    m = _PERIOD_START.match(_period_start(got) or got.strip())  # "June 2013" is the period 2013-06-01
    if m is None or float(gold) != int(gold) or not 1 <= int(gold) <= 12:
        return False
    month = int(m[1])
    return month == int(gold) or (month % 3 == 1 and (month + 2) // 3 == int(gold))


def _period_year(gold: Any, got: Any) -> bool:
    """A gold year (``EXTRACT(YEAR ...)``: 2007) is the year an answer row shows by its start ("2007-01-01")."""
    if isinstance(gold, bool) or not isinstance(gold, int | Decimal | float) or not isinstance(got, str):
        return False
    if float(gold) != int(gold) or not 1000 <= int(gold) <= 2999:
        return False
    return (_period_start(got) or _text(got)) == f"{int(gold)}-01-01"


def cell_matches(gold: Any, got: Any) -> bool:
    g, a = _num(gold), _num(got)
    if g is not None and a is not None and not isinstance(gold, str):
        if g == a or (isinstance(gold, Rounded) and gold.covers(a)) or _shown_rounded(g, a):
            return True
        return math.isclose(g, a, rel_tol=REL_TOL, abs_tol=1e-9)
    if isinstance(gold, dt.date) and isinstance(got, str) and _period_start(got) == _text(gold):
        return True  # a compared period shown by its label ("1995年") is the gold's period start (1995-01-01)
    if _period_number(gold, got) or _period_year(gold, got):
        return True
    if isinstance(gold, str) and isinstance(got, str) and _period_start(gold) is not None:
        # "Q1 2013" is "Q1 of 2013"; a gold month "2024-01" is the period an answer shows by its start date
        return _period_start(gold) == (_period_start(got) or _text(got))
    return gold is not None and got is not None and _text(gold) == _text(got)


def row_matches(gold_row: Row, answer_row: Row, joined: dict[int, tuple[str, ...]] | None = None) -> bool:
    """Every gold cell is some answer cell (or, a name split over two gold columns, one answer cell holding
    both); ``joined`` is ``_joined_names(gold_row)`` when the caller has it already."""
    joined = _joined_names(gold_row) if joined is None else joined
    return all(
        any(cell_matches(g, a) for a in answer_row) or any(_text(a) in joined.get(i, ()) for a in answer_row)
        for i, g in enumerate(gold_row)
        if g is not None
    )


def _joined_names(gold_row: Row) -> dict[int, tuple[str, ...]]:
    """A gold name split over two text columns (first_name, last_name; origin, dest) is one answer column
    holding both ("Luís Gonçalves", "EWR-ORD"): for each text cell, its text joined with the text cell beside
    it."""
    texts = {i: _text(g) for i, g in enumerate(gold_row) if isinstance(g, str) and _period_start(g) is None}
    return {
        i: tuple(
            f"{texts[a]}{glue}{texts[b]}"
            for a, b in ((i - 1, i), (i, i + 1))
            if a in texts and b in texts
            for glue in _NAME_GLUE
        )
        for i in texts
    }


_NAME_GLUE = (" ", "-", " - ", "–", " → ", "→")


def _same_keys(left: tuple[Any, ...], right: tuple[Any, ...]) -> bool:
    return all((a is None and b is None) or cell_matches(a, b) for a, b in zip(left, right, strict=True))


# -- gold query ------------------------------------------------------------------------------------------


def gold_query(sql: str) -> GoldQuery:
    """The gold SQL, rewritten when the outermost SELECT has ORDER BY ... LIMIT: to also return its ORDER BY
    keys, and with a literal LIMIT ``n`` (no OFFSET) fetched ``FIRST n ROWS WITH TIES``."""
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return GoldQuery(sql, None, None)
    rounded = tree.find(exp.Round) is not None
    order = tree.args.get("order") if isinstance(tree, exp.Select) else None
    if not isinstance(tree, exp.Select) or order is None or tree.args.get("limit") is None:
        return GoldQuery(sql, None, None, rounded=rounded)
    outputs = list(tree.expressions)
    width = len(outputs)
    extra: list[exp.Expr] = []
    keys: list[int] = []
    for ordered in order.expressions:
        index = _output_index(ordered.this, outputs)
        if index is None:
            index = width + len(extra)
            extra.append(exp.alias_(ordered.this.copy(), f"__order_{len(extra)}"))
        keys.append(index)
    rewritten = tree.copy()
    rewritten.set("expressions", [*outputs, *extra])
    limit = with_ties(rewritten)
    if not extra and limit is None:
        return GoldQuery(sql, None, tuple(keys), rounded=rounded)
    return GoldQuery(rewritten.sql(dialect="postgres"), width if extra else None, tuple(keys), limit, rounded)


def with_ties(select: exp.Select) -> int | None:
    """Turns ``select``'s literal ``LIMIT n`` (ordered, no OFFSET) into ``FETCH FIRST n ROWS WITH TIES`` in
    place; returns ``n``, or None when the LIMIT is not such (the query is left as it is)."""
    limit = select.args.get("limit")
    count = limit.expression if isinstance(limit, exp.Limit) else None
    if select.args.get("order") is None or select.args.get("offset") is not None:
        return None
    if not isinstance(count, exp.Literal) or not count.is_int:
        return None
    options = exp.LimitOptions(rows=True, with_ties=True)
    select.set("limit", exp.Fetch(direction="FIRST", count=count.copy(), limit_options=options))
    return int(count.this)


def _output_index(key: exp.Expression, outputs: list[exp.Expression]) -> int | None:
    """Which output column an ORDER BY key is: a position (ORDER BY 2), an alias, or the same expression."""
    if isinstance(key, exp.Literal) and key.is_int:
        return int(key.this) - 1
    for i, out in enumerate(outputs):
        plain = out.this if isinstance(out, exp.Alias) else out
        if isinstance(key, exp.Column) and not key.table and key.name == out.alias_or_name:
            return i
        if key == plain:
            return i
    return None


def gold_result(query: GoldQuery, rows: list[list[Any]]) -> Gold:
    if query.rounded:
        rows = [[Rounded(v) if isinstance(v, Decimal) else v for v in row] for row in rows]
    if query.key_columns is None:
        return Gold(rows, None)
    keys = [tuple(row[i] for i in query.key_columns) for row in rows]
    width = query.width
    return Gold([row[:width] for row in rows] if width is not None else rows, keys, query.limit)


# -- rows ------------------------------------------------------------------------------------------------


def assign(gold_rows: list[list[Any]], answer_rows: Sequence[Row]) -> list[int | None]:
    """For each answer row, the gold row it is paired with (maximum bipartite matching, Kuhn's algorithm)."""
    options: list[list[int]] = []
    for g in gold_rows:
        joined = _joined_names(g)  # once per gold row, not once per answer row
        options.append([j for j, a in enumerate(answer_rows) if row_matches(g, a, joined)])
    owner: list[int | None] = [None] * len(answer_rows)

    def augment(gi: int, seen: set[int]) -> bool:
        for aj in options[gi]:
            if aj in seen:
                continue
            seen.add(aj)
            current = owner[aj]
            if current is None or augment(current, seen):
                owner[aj] = gi
                return True
        return False

    for gi in range(len(gold_rows)):
        augment(gi, set())
    return owner


def compare(gold: Gold, answer_rows: Sequence[Row]) -> str | None:
    """None when the answer rows match the gold rows one-to-one (and in order when the gold is ordered); a
    gold tied at its cut is matched by the rows above the cut plus some tied rows (``Gold.counts``)."""
    if _transposed(gold, answer_rows):
        return None
    if len(answer_rows) not in gold.counts():
        return f"row count {len(answer_rows)} != gold {_counts_text(gold)}"
    owner = assign(gold.rows, answer_rows)
    paired = set(owner) - {None}
    for gi in gold.required():
        if gi not in paired:
            return f"gold row {[shown(v) for v in gold.rows[gi]]} has no answer row of its own"
    for aj, paired_with in enumerate(owner):
        if paired_with is None:
            return f"answer row {[shown(v) for v in answer_rows[aj]]} is none of the {len(gold.rows)} tied gold rows"
    return _order_problem(gold, [g for g in owner if g is not None])


def _transposed(gold: Gold, answer_rows: Sequence[Row]) -> bool:
    """A one-row gold of several numbers ("this year's orders, last year's orders") shown as one answer row
    per number (the periods compared, one row each): every gold number pairs with an answer row of its own."""
    if gold.ordered or gold.tied or len(gold.rows) != 1 or len(answer_rows) < 2:
        return False
    cells = gold.rows[0]
    if any(_num(c) is None or isinstance(c, str) for c in cells):
        return False
    if len(cells) == len(answer_rows) + 1 == 3:  # the two periods and their difference: the answer states the change
        cells = _without_difference(cells)
    return len(cells) == len(answer_rows) and None not in assign([[c] for c in cells], answer_rows)


def _without_difference(cells: Row) -> list[Any]:
    """Of three numbers, the two whose change the third is (as a difference, or relative: a ratio or a
    percentage, either way round) for two compared periods, the last one tried first (any of three such
    numbers is the difference of the other two)."""
    values = [_num(c) or 0.0 for c in cells]
    for i in (2, 1, 0):
        a, b = (values[j] for j in range(3) if j != i)
        if any(cell_matches(values[i], change) for change in _changes(a, b)):
            return [c for j, c in enumerate(cells) if j != i]
    return list(cells)


def _changes(a: float, b: float) -> list[float]:
    relative = [x / y - 1 for x, y in ((a, b), (b, a)) if y]
    return [a - b, b - a, *relative, *(100 * r for r in relative)]


def _counts_text(gold: Gold) -> str:
    if not gold.tied:
        return str(len(gold.rows))
    return f"{gold.limit} (or all {len(gold.rows)}: a tie at the gold's LIMIT {gold.limit})"


def _order_problem(gold: Gold, sequence: list[int]) -> str | None:
    """Why the answer order (gold index at each answer position) breaks the gold ORDER BY, or None."""
    if gold.keys is None:
        return None
    for position, gi in enumerate(sequence):
        if not _same_keys(gold.keys[gi], gold.keys[position]):
            want = [shown(v) for v in gold.keys[position]]
            got = [shown(v) for v in gold.keys[gi]]
            return f"row {position + 1} is out of order: ORDER BY key {got}, gold has {want}"
    return None


# -- key sets --------------------------------------------------------------------------------------------


def _key(value: Any) -> float | str | None:
    if value is None:
        return None
    number = _num(value)
    return _text(value) if number is None else number


def key_column(
    gold: Gold, columns: Sequence[str], answer_rows: Sequence[Row], *, stated_total: int | None = None
) -> str | None:
    """None when one answer column holds exactly the gold keys (a one-column gold), in gold order if ordered.

    Rows the answer states were cut at a limit (``stated_total``: the rows it says there are, its
    ``provenance.truncation``) pass when a column holds only gold keys and the stated total covers them all.
    """
    wanted = [_key(row[0]) for row in gold.rows]
    if not wanted and not answer_rows:
        return None
    width = len(columns) if columns else max((len(r) for r in answer_rows), default=0)
    near: str | None = None
    for c in range(width):
        values = [_key(row[c]) if c < len(row) else None for row in answer_rows]
        if stated_total is not None and values and set(values) < set(wanted) and stated_total >= len(set(wanted)):
            return None
        if not _key_set_matches(gold, wanted, values):
            continue
        problem = _key_order_problem(gold, wanted, values)
        if problem is None:
            return None
        near = problem
    if near:
        return near
    return (
        f"no answer column holds the {len(set(wanted))} gold keys "
        f"(e.g. {wanted[:3]}) among {len(answer_rows)} answer rows"
    )


def _key_set_matches(gold: Gold, wanted: list[Any], values: list[Any]) -> bool:
    """The column's keys are the gold keys; a gold tied at its cut: its required keys plus tied ones, as many
    as the LIMIT or all of them."""
    if not gold.tied:
        return set(values) == set(wanted)
    required = {wanted[i] for i in gold.required()}
    return required <= set(values) <= set(wanted) and len(set(values)) in gold.counts()


def _key_order_problem(gold: Gold, wanted: list[Any], values: list[Any]) -> str | None:
    if gold.keys is None:
        return None
    if len(values) not in gold.counts():
        return f"row count {len(values)} != gold {_counts_text(gold)}"
    first: dict[Any, int] = {}
    for gi, key in enumerate(wanted):
        first.setdefault(key, gi)
    return _order_problem(gold, [first[v] for v in values])

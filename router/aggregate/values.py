"""Values of the model's low-cardinality string dimensions named in a question ("the Pulse brand",
"customers in 杭州") as filters of an aggregate query.

Built once from the warehouse: every public string dimension over a plain column of a cube's table with
at most ``MAX_VALUES`` distinct values (``SELECT DISTINCT`` on tables up to ``SCAN_ROWS`` rows, bounded by
a statement timeout; the most common values of ``pg_stats`` on larger ones). A cube defined by a SELECT has
its column traced to what each branch of the SELECT reads (``_sources``): a string literal is a value, a
column of a table is read as that table's column; only a column it computes or filters on is scanned through
the SELECT (a join of millions of rows outlasts the timeout, and its values would be lost). A traced column
may name a value the cube's joins leave out (its query then finds no rows), never miss one. A bilingual value
("杭州 Hangzhou") is also found by each of its words. Latin values match whole words only; values
shorter than two characters, numbers and a few words that are ordinary English ("other", "none") are
not matched. Members the glossary already binds
to a value keep the glossary's meaning.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

import psycopg
import sqlglot
from psycopg import sql as pgsql
from sqlglot import exp

from cube_models.model import SemanticModel
from cube_models.physical import plain_column

MAX_VALUES = 300
SCAN_ROWS = 1_000_000  # larger tables are read from PostgreSQL's statistics (pg_stats), never scanned
SCAN_TIMEOUT_MS = 2000
IGNORED = frozenset({"other", "others", "none", "null", "unknown", "yes", "no", "true", "false", "n/a", "all"})
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass
class ValueIndex:
    """Lower-cased surface form -> [(member, value)]."""

    surfaces: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @classmethod
    def load(cls, conn: Any, model: SemanticModel, default_schema: str = "public") -> ValueIndex:
        index, memo = cls(), Memo()
        for cube in model.cubes.values():
            if not cube.sql_table:
                _index_query_cube(conn, cube, index, default_schema, memo)
                continue
            schema, _, table = cube.sql_table.rpartition(".")
            for dim, column in _indexed_dimensions(cube):
                values = _column_values(conn, (schema or default_schema, table, column), memo)
                if values is None:
                    break  # not a table of this database (a view, another catalog): nothing to index
                for value in values if len(values) <= MAX_VALUES else []:
                    index.add(dim.path, value)
        return index

    def add(self, member: str, value: str) -> None:
        words = value.split()
        bilingual = len(words) > 1 and any(_CJK.search(w) for w in words) and any(not _CJK.search(w) for w in words)
        for surface in {value, *(words if bilingual else [])}:
            key = surface.strip().lower()
            if len(key) >= 2 and not key.replace(".", "").isdigit() and key not in IGNORED:
                self.surfaces.setdefault(key, []).append((member, value))

    def filters(self, text: str, skip_members: set[str], skip_words: Set[str] = frozenset()) -> list[dict[str, Any]]:
        """``equals`` filters for the values named in ``text`` (longest surface first, no overlaps);
        ``skip_words``: words the glossary already read as a value ("德国" -> countries.country_code)."""
        lowered = text.lower()
        taken = [m.span() for w in skip_words if w for m in re.finditer(re.escape(w.lower()), lowered)]
        found: dict[str, list[str]] = {}
        for surface in sorted(self.surfaces, key=len, reverse=True):
            for m in re.finditer(re.escape(surface), lowered):
                start, end = m.span()
                if any(s < end and start < e for s, e in taken) or not _bounded(lowered, start, end):
                    continue
                written = text[start:end]
                pairs = [(m, v) for m, v in self.surfaces[surface] if _as_written(v, written)]
                if not pairs:
                    continue
                taken.append((start, end))
                for member, value in pairs:
                    if member not in skip_members and value not in found.setdefault(member, []):
                        found[member].append(value)
        return [{"member": m, "operator": "equals", "values": v} for m, v in found.items() if v]


def _as_written(value: str, written: str) -> bool:
    """A short upper-case code ("IN", "OR", "AL") is a value only where the question writes it so, not the
    word "in"."""
    return not (value.isupper() and len(value) <= 3) or written == value


def _indexed_dimensions(cube: Any) -> list[tuple[Any, str]]:
    """The public string dimensions over one plain column (``name``, ``{CUBE}.name``), with that column."""
    found = []
    for d in cube.dimensions.values():
        if d.type == "string" and not d.primary_key and d.public and (column := plain_column(cube.name, d.sql)):
            found.append((d, column))
    return found


Memo = dict[tuple[str, str, str], "list[str] | None"]  # (schema, table, column) -> values read in this load


def _column_values(conn: Any, where: tuple[str, str, str], memo: Memo) -> list[str] | None:
    """A table column's values (``_distinct`` or ``_common`` by the table's size); None: no such table."""
    if where not in memo:
        memo[where] = _read_column(conn, *where)
    return memo[where]


def _read_column(conn: Any, schema: str, table: str, column: str) -> list[str] | None:
    rows = conn.execute(
        "SELECT c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s",
        (schema, table),
    ).fetchone()
    if rows is None:
        return None
    return _distinct(conn, schema, table, column) if rows[0] <= SCAN_ROWS else _common(conn, schema, table, column)


def _index_query_cube(conn: Any, cube: Any, index: ValueIndex, default_schema: str, memo: Memo) -> None:
    """A cube defined by a SELECT (``sql:``): its string columns' values, traced to the tables the SELECT
    reads, else read through the SELECT under the scan timeout (none when it outlasts it). SQL with Cube
    templating is not run."""
    sql = (cube.sql or "").strip().rstrip(";")
    if not sql or "{" in sql or not re.match(r"(?is)\s*(?:select|with)\b", sql):
        return
    for dim, column in _indexed_dimensions(cube):
        values = _traced(conn, _sources(sql, column), default_schema, memo)
        if values is None:
            query = pgsql.SQL(
                "SELECT DISTINCT {col} FROM ({sql}) AS cube_rows WHERE {col} IS NOT NULL LIMIT {n}"
            ).format(col=pgsql.Identifier(column), sql=pgsql.SQL(sql), n=pgsql.Literal(MAX_VALUES + 1))
            values = _bounded_scan(conn, query)
        for value in values if len(values) <= MAX_VALUES else []:
            index.add(dim.path, value)


Source = tuple[str, str, str] | str  # (schema, table, column) of a table, or a string literal


def _sources(sql: str, column: str) -> list[Source] | None:
    """What each branch of the SELECT ``sql`` outputs as ``column``; None when a branch computes it, takes it
    from a subquery or filters on it (its values would then not be the source's)."""
    try:
        tree = sqlglot.parse_one(sql, dialect="postgres")
    except sqlglot.errors.ParseError:
        return None
    parts = list(tree.flatten()) if isinstance(tree, exp.Union) else [tree]
    branches = [b for b in parts if isinstance(b, exp.Select)]
    if len(branches) != len(parts):
        return None
    out = [_branch_source(b, column) for b in branches]
    return None if any(s is None for s in out) else [s for s in out if s is not None]


def _branch_source(select: exp.Select, column: str) -> Source | None:
    picked = next((p.unalias() for p in select.selects if p.alias_or_name == column), None)
    if isinstance(picked, exp.Literal) and picked.is_string:
        return picked.this
    if not isinstance(picked, exp.Column) or select.args.get("with_") is not None:
        return None
    tables = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
    if any(t.find_ancestor(exp.Select) is not select for t in select.find_all(exp.Table)):
        return None  # a subquery somewhere: its tables and filters are not traced
    named = [t for t in tables if t.alias_or_name == picked.table] if picked.table else tables
    where = select.args.get("where")
    filtered = where is not None and any(
        c.name == picked.name and c.table in ("", picked.table) for c in where.find_all(exp.Column)
    )
    if len(named) != 1 or filtered:
        return None
    return (named[0].db, named[0].name, picked.name)


def _traced(conn: Any, sources: list[Source] | None, default_schema: str, memo: Memo) -> list[str] | None:
    if sources is None:
        return None
    values: list[str] = []
    for source in dict.fromkeys(sources):
        found = (
            [source]
            if isinstance(source, str)
            else _column_values(conn, (source[0] or default_schema, source[1], source[2]), memo)
        )
        if found is None:
            return None
        values += [v for v in found if v not in values]
    return values


def _bounded_scan(conn: Any, query: pgsql.Composed) -> list[str]:
    try:
        with conn.transaction():
            conn.execute(pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(SCAN_TIMEOUT_MS)))
            return [str(r[0]) for r in conn.execute(query).fetchall()]
    except (
        psycopg.errors.QueryCanceled,
        psycopg.errors.UndefinedTable,
        psycopg.errors.UndefinedColumn,
        psycopg.errors.SyntaxError,
        psycopg.errors.InsufficientPrivilege,
    ):
        return []


def _distinct(conn: Any, schema: str, table: str, column: str) -> list[str]:
    """Up to ``MAX_VALUES + 1`` distinct values (none when the scan outlasts the timeout)."""
    query = pgsql.SQL("SELECT DISTINCT {col} FROM {tbl} WHERE {col} IS NOT NULL LIMIT {n}").format(
        col=pgsql.Identifier(column), tbl=pgsql.Identifier(schema, table), n=pgsql.Literal(MAX_VALUES + 1)
    )
    return _bounded_scan(conn, query)


def _common(conn: Any, schema: str, table: str, column: str) -> list[str]:
    """The most common values PostgreSQL's statistics know, when they are all of the column's values."""
    row = conn.execute(
        "SELECT n_distinct, most_common_vals::text::text[] FROM pg_stats "
        "WHERE schemaname = %s AND tablename = %s AND attname = %s",
        (schema, table, column),
    ).fetchone()
    if row is None or row[1] is None or not 0 < row[0] <= MAX_VALUES or len(row[1]) < row[0]:
        return []
    return [str(v) for v in row[1]]


def _bounded(text: str, start: int, end: int) -> bool:
    """Latin surfaces sit on word boundaries ("Pulse" not inside "impulse")."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (text[start].isascii() and before.isascii() and before.isalnum()) and not (
        text[end - 1].isascii() and after.isascii() and after.isalnum()
    )

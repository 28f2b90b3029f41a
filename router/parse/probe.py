"""Literals the lexicon cannot know ("Clerk#000000286", "Brand#23", "INV-2024-0042"): which string
dimension holds them, asked of the warehouse.

Built once per model from PostgreSQL's statistics (no scan): the *shape* of the sample values ``pg_stats``
keeps for each public string dimension over a plain column (letters before the first digit or symbol, lower
case, then letters as ``a`` and digits as ``9``, runs collapsed: "Clerk#000000286" -> ``clerk:a#9``); a column
whose coded samples begin with varied letters (ids made from names: "aardsda01", "abbotji01") also by its
loose shape, leading letters as ``a`` too (``*a9``). A literal of the question is looked up only in the
dimensions whose samples have its shape, one indexed or bounded equality query each (read-only, 500 ms
timeout), so a question costs no scan of columns that cannot hold it. A dimension that runs plain columns
together ("{CUBE}.carrier || {CUBE}.flight": "UA1545") is shaped from its first values and looked up by the
same expression. A name in title case ("Smells Like Teen Spirit") is looked up in the columns whose samples
are mostly such names (track, album or product names the value index leaves out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql as pgsql

from cube_models.physical import physical_table
from router.parse.reading import Target

TIMEOUT_MS = 500
LITERAL = re.compile(
    r"(?<![A-Za-z0-9_#])(?=[A-Za-z0-9_#./-]*[A-Za-z])(?=[A-Za-z0-9_#./-]*\d)"
    r"[A-Za-z0-9][A-Za-z0-9_#./-]*[A-Za-z0-9]"
)


CAPS_PHRASE = re.compile(r"\b[A-Z][A-Z0-9]+(?:[ -][A-Z][A-Z0-9]+)+\b")  # "ECONOMY ANODIZED STEEL"
# "Smells Like Teen Spirit", "The Dark Side of the Moon": a name in title case, two words or more
TITLE_PHRASE = re.compile(
    r"\b[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|and|in|on|a|an|to|for|at|by|with|de|la|le|del)\s+)*"
    r"[A-Z0-9][\w'’.&-]*)+"
)
_TITLE = "title:"
# a name in quotes ("《Lost, Season 1》", "“Let It Be”"): looked up as a whole title, whatever its case
QUOTED = re.compile(r"《([^》]+)》|“([^”]+)”|「([^」]+)」|\"([^\"]+)\"")


def shape(value: str) -> str:
    letters = re.match(r"[A-Za-z]*", value)  # `*`: matches (maybe empty) at the start of every value
    head = letters.group(0).lower() if letters else ""
    body = re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", value[len(head) :]))
    return f"{head}:{body}"


def loose_shape(value: str) -> str:
    """The shape with its leading letters as ``a`` too ("ohtansh01" -> ``*a9``): how the values of a column of
    codes that begin with varied letters (a person's id from their name) are told apart from other codes."""
    return "*" + re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", value))


LOOSE_HEADS = 4  # distinct leading letters among a column's coded samples that make its codes loose


@dataclass(frozen=True)
class _Column:
    member: str
    schema: str
    table: str
    column: str
    parts: tuple[str, ...] = ()  # a concatenation ("{CUBE}.carrier || {CUBE}.flight"): its columns, in order

    def expression(self) -> pgsql.Composable:
        if not self.parts:
            return pgsql.Identifier(self.column)
        return pgsql.SQL(" || ").join([pgsql.SQL("{}::text").format(pgsql.Identifier(c)) for c in self.parts])


# a dimension made of plain columns run together ("{CUBE}.carrier || {CUBE}.flight": "UA1545")
_CONCAT = re.compile(r"^\s*\{CUBE\}\.(\w+)(?:\s*\|\|\s*\{CUBE\}\.(\w+))+\s*$")
_PART = re.compile(r"\{CUBE\}\.(\w+)")


@dataclass(frozen=True)
class _Computed:
    """A string dimension computed by an SQL expression over its cube's one table (a subquery naming
    another row: "the manager's name"): its values are looked up by that expression."""

    schema: str
    table: str
    sql: str  # the dimension's SQL, ``{CUBE}`` standing for the table

    def query(self) -> pgsql.Composed:
        expression = pgsql.SQL(self.sql.replace("{CUBE}", "probed"))  # the model's own SQL, trusted as Cube does
        return pgsql.SQL("SELECT 1 FROM {t} AS probed WHERE ({e}) = %s LIMIT 1").format(
            t=pgsql.Identifier(self.schema, self.table), e=expression
        )


@dataclass
class Probe:
    url: str
    shapes: dict[str, list[_Column]] = field(default_factory=dict)
    computed: dict[str, _Computed] = field(default_factory=dict)

    @classmethod
    def load(cls, conn: psycopg.Connection, url: str, model: Any, default_schema: str) -> Probe:
        probe = cls(url)
        for cube in model.cubes.values():
            found = physical_table(cube, default_schema)
            if found is None:
                continue
            for name, col in found.columns.items():
                dim = cube.dimensions[name]
                if dim.type != "string" or not dim.public:
                    continue
                for sample_shape in _sample_shapes(conn, found.schema, found.table, col):
                    probe.shapes.setdefault(sample_shape, []).append(_Column(dim.path, found.schema, found.table, col))
            for dim in cube.dimensions.values():
                if dim.type == "string" and dim.public and dim.name not in found.columns and "%" not in (dim.sql or ""):
                    probe.computed[dim.path] = _Computed(found.schema, found.table, dim.sql or "")
                if (
                    dim.type == "string"
                    and dim.public
                    and dim.name not in found.columns
                    and _CONCAT.match(dim.sql or "")
                ):
                    column = _Column(dim.path, found.schema, found.table, "", tuple(_PART.findall(dim.sql or "")))
                    for sample_shape in _joined_shapes(conn, column):
                        probe.shapes.setdefault(sample_shape, []).append(column)
        return probe

    def holds(self, member: str, value: str) -> bool:
        """``value`` is a value of ``member``, a string dimension computed by an expression ("Manager"); False
        when it is none, or unknown."""
        found = self.computed.get(member)
        if found is None:
            return False
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                return bool(read_only(conn, found.query(), (value,)))
        except psycopg.Error:
            return False

    def find(self, literal: str) -> list[Target]:
        """Value targets for ``literal`` in the dimensions whose samples have its shape."""
        quoted = QUOTED.fullmatch(literal)  # a quoted name is looked up without its quotes, as a title
        literal = next(g for g in quoted.groups() if g) if quoted else literal
        columns = list(self.shapes.get(shape(literal), []))
        columns += [c for c in self.shapes.get(loose_shape(literal), []) if c not in columns]
        if TITLE_PHRASE.fullmatch(literal) or quoted:
            columns += [c for c in self.shapes.get(_TITLE, []) if c not in columns]
        if not columns:
            return []
        found = []
        with psycopg.connect(self.url, autocommit=True) as conn:
            for col in columns:
                if _holds(conn, col, literal):
                    found.append(Target("value", col.member, literal, "probe"))
        return found


def _sample_shapes(conn: psycopg.Connection, schema: str, table: str, column: str) -> set[str]:
    row = conn.execute(
        "SELECT most_common_vals::text::text[], histogram_bounds::text::text[] FROM pg_stats "
        "WHERE schemaname = %s AND tablename = %s AND attname = %s",
        (schema, table, column),
    ).fetchone()
    samples = [v for part in (row or ()) for v in (part or [])][:50]
    coded = [v for v in samples if LITERAL.fullmatch(v)]
    shapes = {shape(v) for v in samples if LITERAL.fullmatch(v) or CAPS_PHRASE.fullmatch(v)}
    if len({shape(v).split(":", 1)[0] for v in coded}) >= LOOSE_HEADS:  # "aardsda01", "abbotji01", ...
        shapes |= {loose_shape(v) for v in coded}
    titled = [v for v in samples if TITLE_PHRASE.fullmatch(v)]
    return shapes | ({_TITLE} if len(titled) >= max(3, len(samples) // 4) else set())


def _joined_shapes(conn: psycopg.Connection, col: _Column) -> set[str]:
    """The shapes of the first values of a concatenated dimension."""
    query = pgsql.SQL("SELECT {e} FROM {t} WHERE {e} IS NOT NULL LIMIT 50").format(
        e=col.expression(), t=pgsql.Identifier(col.schema, col.table)
    )
    try:
        samples = [str(row[0]) for row in read_only(conn, query)]
    except psycopg.Error:
        return set()
    return {shape(v) for v in samples if LITERAL.fullmatch(v)}


def _holds(conn: psycopg.Connection, col: _Column, literal: str) -> bool:
    query = pgsql.SQL("SELECT 1 FROM {t} WHERE {c} = %s LIMIT 1").format(
        t=pgsql.Identifier(col.schema, col.table), c=col.expression()
    )
    try:
        return bool(read_only(conn, query, (literal,)))
    except psycopg.errors.QueryCanceled:
        return False


def read_only(conn: psycopg.Connection, query: str | pgsql.Composed, params: Sequence[Any] = ()) -> list[Any]:
    """The rows of ``query`` in a read-only transaction bounded by ``TIMEOUT_MS`` (a compiled Cube query's
    ``$n`` parameters need a connection with raw cursors)."""
    with conn.transaction():
        conn.execute("SET TRANSACTION READ ONLY")
        conn.execute(pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(TIMEOUT_MS)))
        return conn.execute(query, params).fetchall()

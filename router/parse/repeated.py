"""The names of rows that are shown with the rows' key: labels rows share (two playlists called "Music", two
customers called "John Smith"), whose groups would add the namesakes' numbers together, and every name of the
rows of a table of things a reader tells apart by key (more than ``ENTITY_ROWS`` rows: customers, players, not
the few kinds of a list like regions or genres).

Shared labels are read from PostgreSQL's statistics (no scan): ``pg_stats.n_distinct`` of the label's column
is -1 when every row has its own value; a value above ``NAMESAKES`` of the rows but below all of them (a
share of the rows, or a count below the row count) means some rows share one; fewer distinct values mean the
label names kinds most rows share, not namesakes. A label with no statistics (a computed name, a table not analysed) is
taken as unique. A table's size is counted up to ``ENTITY_ROWS + 1`` rows.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from cube_models.physical import physical_table
from router.parse import facts

_STATS = (
    "SELECT s.n_distinct, c.reltuples FROM pg_stats s "
    "JOIN pg_namespace n ON n.nspname = s.schemaname "
    "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename "
    "WHERE s.schemaname = %s AND s.tablename = %s AND s.attname = %s"
)


ENTITY_ROWS = 50


def keyed_labels(conn: psycopg.Connection, model: Any, default_schema: str) -> frozenset[str]:
    """The dimensions naming a cube's rows (``facts.label`` in English and Chinese, ``facts.names_rows``) that
    groups show with the cube's key."""
    found: set[str] = set()
    for cube in model.cubes.values():
        table = physical_table(cube, default_schema)
        key = facts.primary_key(model, cube.name)
        if table is None or key is None:
            continue
        names = {d.path for d in cube.dimensions.values() if d.public and facts.names_rows(model, d.path)}
        if names and model.find_member(key).public and _many(conn, table.schema, table.table):
            found |= names
        for path in {p for lang in ("en", "zh") if (p := facts.label(model, cube.name, lang))}:
            column = table.columns.get(path.split(".", 1)[1])
            if column is not None and _repeats(conn, table.schema, table.table, column):
                found.add(path)
    return frozenset(found)


def _many(conn: psycopg.Connection, schema: str, table: str) -> bool:
    """More than ``ENTITY_ROWS`` rows; False for a table the warehouse lacks (the model check reports it)."""
    found = conn.execute("SELECT to_regclass(%s)", (sql.Identifier(schema, table).as_string(conn),)).fetchone()
    if found is None or found[0] is None:
        return False
    query = sql.SQL("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT %s) AS rows").format(sql.Identifier(schema, table))
    row = conn.execute(query, (ENTITY_ROWS + 1,)).fetchone()
    return row is not None and int(row[0]) > ENTITY_ROWS


NAMESAKES = 0.5  # a label shared by some rows, most rows having their own: namesakes, not kinds


def _repeats(conn: psycopg.Connection, schema: str, table: str, column: str) -> bool:
    """Some rows share the label, but most have their own (two playlists called "Music"): namesakes. A label
    most rows share (an award's name over its winners' rows) names kinds, and groups alone."""
    row = conn.execute(_STATS, (schema, table, column)).fetchone()
    if row is None or row[0] is None:
        return False
    n_distinct, rows = float(row[0]), float(row[1] or 0)
    if n_distinct < 0:  # a share of the rows
        return -1 < n_distinct <= -NAMESAKES
    return 0 < n_distinct < rows and n_distinct >= NAMESAKES * rows

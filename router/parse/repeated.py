"""Labels that repeat: the name columns two rows of one cube can share (two playlists called "Music", two
customers called "John Smith"). Grouping by such a label alone would add the namesakes' numbers together,
so the groups pass groups by the cube's key too.

Read once per model from PostgreSQL's statistics (no scan): ``pg_stats.n_distinct`` of the label's column
is -1 when every row has its own value; any other value (a share of the rows, or a count below the row
count) means some rows share one. A label with no statistics (a computed name, a table not analysed) is
taken as unique, as before.
"""

from __future__ import annotations

from typing import Any

import psycopg

from cube_models.physical import physical_table
from router.parse import facts

_STATS = (
    "SELECT s.n_distinct, c.reltuples FROM pg_stats s "
    "JOIN pg_namespace n ON n.nspname = s.schemaname "
    "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename "
    "WHERE s.schemaname = %s AND s.tablename = %s AND s.attname = %s"
)


def repeated_labels(conn: psycopg.Connection, model: Any, default_schema: str) -> frozenset[str]:
    """The label dimensions (``facts.label``, English and Chinese) whose values repeat across rows."""
    found: set[str] = set()
    for cube in model.cubes.values():
        table = physical_table(cube, default_schema)
        if table is None or facts.primary_key(model, cube.name) is None:
            continue
        for path in {p for lang in ("en", "zh") if (p := facts.label(model, cube.name, lang))}:
            column = table.columns.get(path.split(".", 1)[1])
            if column is not None and _repeats(conn, table.schema, table.table, column):
                found.add(path)
    return frozenset(found)


def _repeats(conn: psycopg.Connection, schema: str, table: str, column: str) -> bool:
    row = conn.execute(_STATS, (schema, table, column)).fetchone()
    if row is None or row[0] is None:
        return False
    n_distinct, rows = float(row[0]), float(row[1] or 0)
    return -1 < n_distinct < 0 or (n_distinct > 0 and rows > n_distinct)

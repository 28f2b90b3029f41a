"""The one physical table behind a cube: ``sql_table``, or the base table of a single-table ``sql`` SELECT.

``physical_table(cube, default_schema)`` gives the table, the plain-column dimensions (dimension name ->
column of the table) and, for a SQL cube, which output column is which base-table column. Views, unions and
templated SQL have no single table (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from cube_models.export import plain_sql
from cube_models.model import Cube, SemanticModel


@dataclass(frozen=True)
class Physical:
    schema: str
    table: str
    columns: dict[str, str]  # dimension name -> column of the table (plain columns only)
    exposed: dict[str, str] | None  # a SQL cube's output column -> column of its base table (None: sql_table)

    def column(self, name: str) -> str | None:
        """The table column behind ``name`` as the cube's own SQL (joins, members) sees it."""
        return name if self.exposed is None else self.exposed.get(name)


def physical_table(cube: Cube, default_schema: str) -> Physical | None:
    """The one physical table behind ``cube`` and its plain-column dimensions, or None (views, unions...)."""
    if cube.sql_table:
        table = exp.to_table(cube.sql_table, dialect="postgres")
        exposed: dict[str, str] | None = None
    else:
        found = _single_table_select(cube.sql or "")
        if found is None:
            return None
        table, exposed = found
    columns: dict[str, str] = {}
    for dim in cube.dimensions.values():
        column = _dimension_column(cube, dim.sql)
        if column is not None and exposed is not None:
            column = exposed.get(column)
        if column is not None:
            columns[dim.name] = column
    return Physical(table.db or default_schema, table.name, columns, exposed)


def _single_table_select(sql: str) -> tuple[exp.Table, dict[str, str]] | None:
    """``SELECT a.x, a.y AS z, b.w FROM s.t a JOIN ...`` -> (s.t, {x: x, z: y}): the base table's columns."""
    if "{" in sql:
        return None  # templated SQL is not a plain table
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Select):
        return None
    from_ = tree.args.get("from_") or tree.args.get("from")
    base = from_.this if from_ is not None else None
    if not isinstance(base, exp.Table):
        return None
    own = {base.alias_or_name, base.name}
    single = not tree.args.get("joins")
    exposed: dict[str, str] = {}
    for projection in tree.expressions:
        source = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(source, exp.Column) and (source.table in own or (not source.table and single)):
            exposed[projection.alias_or_name] = source.name
    return base, exposed


def _dimension_column(cube: Cube, sql: str) -> str | None:
    """The column a dimension's SQL names (``invoice_id``, ``{CUBE}.invoice_id``), else None (an expression)."""
    try:
        tree = sqlglot.parse_one(sql if "{" not in sql else plain_sql(cube, sql, _solo(cube)), read="postgres")
    except (sqlglot.errors.ParseError, KeyError, ValueError):
        return None
    if isinstance(tree, exp.Column) and tree.table in ("", cube.name):
        return tree.name
    return None


def _solo(cube: Cube) -> SemanticModel:
    return SemanticModel(cubes={cube.name: cube})


def plain_column(cube: str, member_sql: str | None) -> str | None:
    """The column a member's SQL is: ``name``, ``{CUBE}.name``, ``{orders}.name`` or ``orders.name`` of the
    cube ``orders`` -> ``name``; None for an expression."""
    prefix = rf"(?:\{{CUBE\}}\.|\{{{re.escape(cube)}\}}\.|{re.escape(cube)}\.)?"
    match = re.fullmatch(prefix + r'"?(\w+)"?', (member_sql or "").strip())
    return match.group(1) if match else None

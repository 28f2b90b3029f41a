"""Models from outside (API ingest) may read only the configured warehouse schemas: checked with sqlglot.

Every SQL text a cube carries is parsed: its ``sql_table``, its ``sql`` (a SELECT) and the SQL of its
measures (and their filters), dimensions, segments and joins (``{CUBE}``-style references become
placeholders first). A table must be named with one of ``schemas`` (PostgreSQL resolves unqualified
names through ``pg_catalog`` first, so they are refused), cross-database names and table functions are
refused, and so are the functions of :mod:`cubesage_core.sql_safety`. SQL that does not parse is
refused too: what cannot be checked is not trusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from cube_models._refs import to_placeholders
from cube_models.model import Cube, SemanticModel
from cubesage_core.sql_safety import denied


def _texts(cube: Cube) -> Iterator[tuple[str, str]]:
    """(where, SQL expression) for every member-level SQL text of ``cube``."""
    for measure in cube.measures.values():
        if measure.sql:
            yield f"measure {measure.name}", measure.sql
        for i, condition in enumerate(measure.filters):
            yield f"measure {measure.name} filter {i + 1}", condition
    for dimension in cube.dimensions.values():
        yield f"dimension {dimension.name}", dimension.sql
    for segment in cube.segments.values():
        yield f"segment {segment.name}", segment.sql
    for join in cube.joins:
        yield f"join {join.target}", join.sql


def _tree_problems(tree: exp.Expr, schemas: frozenset[str]) -> list[str]:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    names = ", ".join(sorted(schemas))
    problems: list[str] = []
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            problems.append(f"table function {table.this.sql(dialect='postgres')} is not allowed")
        elif table.catalog:
            problems.append(f"cross-database table {table.sql(dialect='postgres')} is not allowed")
        elif not table.db and table.name.lower() not in ctes:
            problems.append(f"table {table.name} must be qualified with a warehouse schema ({names})")
        elif table.db and table.db.lower() not in schemas:
            problems.append(f"table {table.db}.{table.name} is outside the warehouse schemas ({names})")
    for func in tree.find_all(exp.Func):
        name = func.name if isinstance(func, exp.Anonymous) else func.sql_name()
        if name and denied(name):
            problems.append(f"function {name.lower()}() is not allowed")
    return problems


def _parse(sql: str, as_query: bool) -> exp.Expr:
    text = to_placeholders(sql)[0]
    statements = [s for s in sqlglot.parse(text if as_query else f"SELECT {text}", read="postgres") if s is not None]
    if len(statements) != 1:
        raise ParseError("exactly one statement is allowed")
    if as_query and not isinstance(statements[0], exp.Query):
        raise ParseError("a cube's sql must be a SELECT")
    return statements[0]


def _check(where: str, sql: str, schemas: frozenset[str], *, as_query: bool = False) -> list[str]:
    try:
        tree = _parse(sql, as_query)
    except (ParseError, TokenError, ValueError) as err:
        return [f"{where}: the SQL cannot be checked ({str(err).splitlines()[0][:200]})"]
    return [f"{where}: {p}" for p in _tree_problems(tree, schemas)]


def cube_problems(cube: Cube, schemas: Sequence[str]) -> list[str]:
    """What in ``cube`` reads outside ``schemas`` or calls a denied function (empty = trusted)."""
    allowed = frozenset(s.lower() for s in schemas)
    problems: list[str] = []
    if cube.sql_table:
        try:
            table = exp.to_table(cube.sql_table, dialect="postgres")
        except (ParseError, TokenError, ValueError):
            return [f"cube {cube.name}: sql_table {cube.sql_table!r} is not a table name"]
        problems += [f"sql_table: {p}" for p in _tree_problems(exp.select("*").from_(table), allowed)]
    if cube.sql:
        problems += _check("sql", cube.sql, allowed, as_query=True)
    for where, sql in _texts(cube):
        problems += _check(where, sql, allowed)
    return [f"cube {cube.name}: {p}" for p in problems]


def model_problems(model: SemanticModel, schemas: Sequence[str], files: Iterable[str] | None = None) -> list[str]:
    """:func:`cube_problems` of every cube of ``model`` (only those defined in the files named ``files``)."""
    wanted = set(files) if files is not None else None
    return [
        p
        for cube in model.cubes.values()
        if wanted is None or Path(cube.file).name in wanted
        for p in cube_problems(cube, schemas)
    ]

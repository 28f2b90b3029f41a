"""Gold SQL whose nested ORDER BY ... LIMIT cuts inside a tie: one gold variant per tie-consistent choice.

A gold detail query such as ``... WHERE t.owner_id = (SELECT ... ORDER BY COUNT(*) DESC LIMIT 1)``
returns the rows of whichever of two tied owners PostgreSQL happens to put first; the rows of the other
are as right. Each nested SELECT that is not correlated (a subquery or a CTE) and has ORDER BY with a
literal LIMIT ``n`` and no OFFSET is run alone ``WITH TIES`` (``answer.regress_compare.gold_query``). When
more than ``n`` rows come back, its choices are: the rows above the cut plus any ``n - above`` of the tied
rows, or every row (an answer may show all the tied rows). Each choice replaces that SELECT by its rows as
``VALUES`` (``SELECT * FROM (VALUES ...) AS __tie(<its output names>)``; ``x = (SELECT ...)`` turned into
``x IN (SELECT ...)`` for a choice of several rows) in one variant of the gold; an
answer matching any variant is right. Cuts not inside a tie leave the gold as it is. At most
``MAX_VARIANTS`` variants are made (in order); the outermost SELECT's own LIMIT is ``regress_compare``'s.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from answer.regress_compare import Gold, gold_query, gold_result

MAX_VARIANTS = 24
RowsRunner = Callable[[str], list[list[Any]]]  # SQL -> its rows (read-only)


def nested_cuts(tree: exp.Expr) -> list[exp.Select]:
    """The nested SELECTs of ``tree`` that can be run alone and keep ``n`` rows by ORDER BY ... LIMIT n."""
    found: list[exp.Select] = []
    for scope in traverse_scope(tree):
        select = scope.expression
        if scope.is_root or not isinstance(select, exp.Select) or select is tree:
            continue
        if scope.is_correlated_subquery or any(c.table for c in scope.external_columns):
            continue  # it reads a column of an outer query (an unqualified column is taken as its own)
        limit = select.args.get("limit")
        if select.args.get("order") is None or not isinstance(limit, exp.Limit) or select.args.get("offset"):
            continue
        if isinstance(limit.expression, exp.Literal) and limit.expression.is_int:
            found.append(select)
    return found


def tie_choices(gold: Gold) -> list[list[list[Any]]]:
    """The row sets a cut inside a tie allows (the rows above it plus enough tied rows, or all rows);
    ``[]`` when the cut is not inside a tie."""
    if not gold.tied or gold.limit is None:
        return []
    required = gold.required()
    tied = [i for i in range(len(gold.rows)) if i not in set(required)]
    picks = itertools.islice(itertools.combinations(tied, gold.limit - len(required)), MAX_VARIANTS - 1)
    choices = [[gold.rows[i] for i in sorted([*required, *pick])] for pick in picks]
    return [*choices, gold.rows]


def _values_select(select: exp.Select, rows: list[list[Any]]) -> exp.Select:
    """``SELECT * FROM (VALUES <rows>) AS __tie(<select's output names>)``."""
    names = [out.alias_or_name or f"column{i + 1}" for i, out in enumerate(select.expressions)]
    values = exp.Values(
        expressions=[exp.Tuple(expressions=[exp.convert(v) for v in row]) for row in rows],
        alias=exp.TableAlias(this=exp.to_identifier("__tie"), columns=[exp.to_identifier(n) for n in names]),
    )
    return exp.select("*").from_(values)


def _as_set_if_scalar(select: exp.Select, rows: list[list[Any]]) -> exp.Select:
    """``x = (SELECT ...)`` becomes ``x IN (SELECT ...)`` when the choice has more than one row (every tied
    row): the scalar comparison the gold wrote for its one row, made for each of them. Returns the SELECT
    now in the tree."""
    subquery = select.parent
    eq = subquery.parent if isinstance(subquery, exp.Subquery) else None
    if len(rows) < 2 or not isinstance(eq, exp.EQ) or subquery is None:
        return select
    other = eq.this if eq.expression is subquery else eq.expression
    inner = subquery.copy()
    eq.replace(exp.In(this=other.copy(), query=inner))
    return inner.this


def variants(sql: str, run_rows: RowsRunner) -> list[str]:
    """The gold SQL once per tie-consistent choice of its nested cuts; ``[sql]`` when no nested cut falls
    inside a tie (or the SQL does not parse)."""
    try:
        cuts = nested_cuts(sqlglot.parse_one(sql, read="postgres"))
    except sqlglot.errors.SqlglotError:
        return [sql]
    per_cut: list[tuple[int, list[list[list[Any]]]]] = []
    for index, select in enumerate(cuts):
        query = gold_query(select.sql(dialect="postgres"))
        choices = tie_choices(gold_result(query, run_rows(query.sql)))
        if choices:
            per_cut.append((index, choices))
    if not per_cut:
        return [sql]
    combinations: list[list[list[list[Any]]]] = [[]]  # one choice per tied cut, every way (at most MAX_VARIANTS)
    for _, choices in per_cut:
        combinations = [[*done, choice] for done in combinations for choice in choices][:MAX_VARIANTS]
    out: list[str] = []
    for combination in combinations:
        copy = sqlglot.parse_one(sql, read="postgres")
        targets = nested_cuts(copy)
        for (index, _), rows in zip(per_cut, combination, strict=True):
            target = _as_set_if_scalar(targets[index], rows)
            target.replace(_values_select(target, rows))
        out.append(copy.sql(dialect="postgres"))
    return out

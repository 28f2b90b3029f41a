"""Distinct counts a rollup holds additively: a ``count_distinct`` whose key determines each rollup row.

A ``count_distinct`` measure is not additive in general: one key can fall in several rollup rows and a sum of
the rows' counts would count it more than once. It is additive over a rollup when every value of its key lands
in exactly one rollup row, that is when the key determines every member the rollup groups by:

- the key is a primary key of its own cube (a distinct count of invoices over the invoice cube's key), or a
  column of the measure's cube that a many-to-one join equates with another cube's primary key (the invoice
  key of invoice lines, joined to the invoices); that cube is the *key cube*;
- each rollup member (dimension, segment, time dimension at any granularity) belongs to the key cube or to a
  cube the rollup's join tree reaches from it through joins that do not multiply its rows (many-to-one, or a
  one-to-many join walked from the many side), and its SQL references no other cube.

The measure's own filters only drop rows, so they keep this true. Cube 0.33 does not reason so (it matches a
distinct count only exactly): the matcher uses it only when Cube's own rules find no rollup.
"""

from __future__ import annotations

import re

from cube_models._joins import JoinTree, build_join_tree
from cube_models._refs import REF_RE
from cube_models.model import Join, Measure, PreAggregation, SemanticModel

DISTINCT = ("count_distinct", "count_distinct_approx")
_EQUALS = re.compile(r"^\s*\{(\w+)\}\.(\w+)\s*=\s*\{(\w+)\}\.(\w+)\s*$")
_COLUMN = re.compile(r"^\s*(?:\{(\w+)\}\.)?([A-Za-z_]\w*)\s*$")


def _column(sql: str | None, cube: str) -> str | None:
    """The bare column ``sql`` names (``col`` or ``{CUBE}.col``), else None."""
    match = _COLUMN.match(sql or "")
    if match is None or match.group(1) not in (None, "CUBE", cube):
        return None
    return match.group(2)


def _primary_column(model: SemanticModel, cube: str) -> str | None:
    keys = model.cubes[cube].primary_keys
    return _column(keys[0].sql, cube) if len(keys) == 1 else None


def _key_join(join: Join, column: str, model: SemanticModel) -> bool:
    """``join`` (declared by the measure's cube) equates ``column`` with its target's primary key one to one."""
    match = _EQUALS.match(join.sql)
    if match is None or join.relationship not in ("many_to_one", "one_to_one"):
        return False
    sides = {(match.group(1), match.group(2)), (match.group(3), match.group(4))}
    own = {("CUBE", column), (join.source, column)}
    target = (join.target, _primary_column(model, join.target))
    return len(sides & own) == 1 and target in sides


def key_cube(measure: Measure, model: SemanticModel, tree: JoinTree) -> str | None:
    """The cube one row of which each value of the distinct key names, if the tree holds it."""
    column = _column(measure.sql, measure.cube)
    if measure.type not in DISTINCT or column is None:
        return None
    if column == _primary_column(model, measure.cube):
        return measure.cube
    for join in tree.joins:
        if join.source == measure.cube and _key_join(join, column, model):
            return join.target
    return None


def _determined(tree: JoinTree, start: str) -> set[str]:
    """``start`` and the cubes the tree reaches from it through joins that do not multiply its rows."""
    out, todo = {start}, [start]
    while todo:
        current = todo.pop()
        for join in tree.joins:
            if join.source == current and join.relationship in ("many_to_one", "one_to_one"):
                nxt = join.target
            elif join.target == current and join.relationship in ("one_to_many", "one_to_one"):
                nxt = join.source
            else:
                continue
            if nxt not in out:
                out.add(nxt)
                todo.append(nxt)
    return out


def _member_cubes(model: SemanticModel, path: str) -> set[str]:
    member = model.member(path)
    named = {m.group(1) for m in REF_RE.finditer(getattr(member, "sql", "") or "")}
    return {member.cube} | {n for n in named if n in model.cubes}


def rollup_tree(pre: PreAggregation, model: SemanticModel) -> JoinTree:
    """The join tree the rollup's build query uses (hints in the compiler's order: measures, dimensions,
    segments, the time dimension)."""
    paths = [*pre.measures, *pre.dimensions, *pre.segments, *([pre.time_dimension] if pre.time_dimension else [])]
    return build_join_tree(model, list(dict.fromkeys(model.member(p).cube for p in paths)))


def additive_over(measure: Measure, pre: PreAggregation, model: SemanticModel) -> bool:
    """Does summing ``measure`` over rows of ``pre`` count each distinct key once?"""
    if measure.type not in DISTINCT or measure.path not in pre.measures:
        return False
    tree = rollup_tree(pre, model)
    key = key_cube(measure, model, tree)
    if key is None:
        return False
    determined = _determined(tree, key)
    grouped = [*pre.dimensions, *pre.segments, *([pre.time_dimension] if pre.time_dimension else [])]
    return all(_member_cubes(model, p) <= determined for p in grouped)

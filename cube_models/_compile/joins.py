"""The built-in compiler's joins phase: the cubes a query needs (Cube's join hints) and the FROM clause
along the join tree (physical tables, SQL cubes as CTEs, or the rollup table that answers the query)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from cube_models import _joins, _rollup_sql
from cube_models._compile.sql import (
    _physical_table,
)
from cube_models._refs import Ref, classify
from cube_models.model import Dimension, Measure, Segment

if TYPE_CHECKING:
    from cube_models._compile.state import CompilerState


class JoinsPhase:
    """FROM and JOINs of a query (mixed into ``cube_models.compiler._Compiler``)."""

    def _hints(self: CompilerState, path: str) -> list[_joins.Hint]:
        """Join hints of a query member (Cube's collectJoinHints): a view member brings its join path as a chain,
        then the cubes its SQL references."""
        view_name, _, name = path.partition(".")
        view = self.model.views.get(view_name)
        cubes: list[str] = []
        self._collect_cubes(self.model.member(self.model.resolve_path(path)), cubes, set())
        if view is not None and name in view.join_paths:
            return [list(view.join_paths[name]), *cubes]
        return list(cubes)

    def _collect_cubes(
        self: CompilerState, member: Measure | Dimension | Segment, out: list[str], seen: set[str]
    ) -> None:
        if member.path in seen:
            return
        seen.add(member.path)
        if member.cube not in out:
            out.append(member.cube)
        cube = self.model.cubes[member.cube]
        for text in [member.sql or "", *getattr(member, "filters", ())]:
            for _, ref in classify(
                text, cube.name, set(self.model.cubes), {*cube.measures, *cube.dimensions, *cube.segments}
            ):
                if not isinstance(ref, Ref):
                    continue
                if ref.kind == "cube":
                    if ref.cube not in out:
                        out.append(ref.cube)
                else:
                    self._collect_cubes(self.model.member(ref.path), out, seen)

    def _from(self: CompilerState, select: exp.Select, tree: _joins.JoinTree) -> exp.Select:
        if self.rollup is not None:
            table = exp.to_table(self.rollups[self.rollup.path], dialect="postgres")
            table.set("alias", exp.TableAlias(this=exp.to_identifier(_rollup_sql.ROLLUP_ALIAS, quoted=True)))
            return select.from_(table, copy=False)
        select = select.from_(self._table(tree.root), copy=False)
        for join in tree.joins:
            on = self.render(self.model.cubes[join.source], join.sql)
            select = select.join(self._table(join.target), on=on, join_type="left", copy=False)
        return select

    def _table(self: CompilerState, name: str) -> exp.Expr:
        cube = self.model.cubes[name]
        alias = exp.TableAlias(this=exp.to_identifier(name, quoted=True))
        if cube.sql_table:
            table = _physical_table(cube.sql_table).copy()
            table.set("alias", alias)
            return table
        # a SQL cube is one NOT MATERIALIZED CTE (inlined by PostgreSQL like a subquery), rendered once
        cte = f"__cube_{name}"
        self.ctes.setdefault(cte, cube.sql or "")
        return exp.Table(this=exp.to_identifier(cte, quoted=True), alias=alias)

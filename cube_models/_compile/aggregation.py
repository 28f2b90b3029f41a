"""The built-in compiler's aggregation phase: measures as aggregates (derived ``number`` measures from their
leaves), GROUP BY, fan-out safe aggregation of multiplied measures and rolling windows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from cube_models import _rolling
from cube_models._compile.sql import (
    _NOT_MULTIPLIED,
    TEXT,
    _date_trunc,
    _utc,
    alias_of,
)
from cube_models._refs import Ref, classify
from cube_models.dates import resolve_date_range
from cube_models.errors import QueryError
from cube_models.model import Dimension, Measure, RollingWindow
from cube_models.query import CubeQuery

if TYPE_CHECKING:
    from cube_models._compile.state import CompilerState


class AggregationPhase:
    """The SELECT list and grouping of a query (mixed into ``cube_models.compiler._Compiler``)."""

    def leaves(self: CompilerState, measure: Measure) -> list[Measure]:
        """Measures that aggregate rows (a number measure is computed from its referenced measures)."""
        if measure.type != "number":
            return [measure]
        cube = self.model.cubes[measure.cube]
        refs = [
            r
            for _, r in classify(
                measure.sql or "", cube.name, set(self.model.cubes), {*cube.measures, *cube.dimensions, *cube.segments}
            )
            if isinstance(r, Ref) and r.kind == "member"
        ]
        found = [self.model.member(r.path) for r in refs]
        subs = [m for m in found if isinstance(m, Measure)]
        if not subs:
            return [measure]
        out: list[Measure] = []
        for sub in subs:
            for leaf in self.leaves(sub):
                if leaf not in out:
                    out.append(leaf)
        return out

    def is_multiplied_leaf(self: CompilerState, leaf: Measure) -> bool:
        if not self.multiplied.get(leaf.cube):
            return False
        return leaf.type not in _NOT_MULTIPLIED and not (leaf.type == "count" and not leaf.sql)

    def measure_expr(self: CompilerState, measure: Measure, rendered: dict[str, exp.Expr]) -> exp.Expr:
        if measure.path in rendered:
            return rendered[measure.path].copy()
        cube = self.model.cubes[measure.cube]
        if measure.type == "number" and self.leaves(measure) != [measure]:
            return self.render(cube, measure.sql or "", rendered)
        inner = self.measure_value(measure)
        multiplied = bool(self.multiplied.get(measure.cube))
        if measure.type in ("count_distinct", "count_distinct_approx") or (
            measure.type == "count" and not measure.sql and multiplied
        ):
            return exp.Count(this=exp.Distinct(expressions=[inner]))
        if measure.type == "count":
            return exp.Count(this=inner)
        if measure.type == "number":
            return inner
        func = {"sum": exp.Sum, "avg": exp.Avg, "min": exp.Min, "max": exp.Max}[measure.type]
        return func(this=inner)

    def measure_value(self: CompilerState, measure: Measure) -> exp.Expr:
        """The per-row value a measure aggregates: its SQL (or primary key, or ``*``) under its ``filters``."""
        cube = self.model.cubes[measure.cube]
        if measure.sql:
            inner: exp.Expr = self.render(cube, measure.sql)
        elif len(cube.primary_keys) == 1:
            inner = self.raw_expr(cube.primary_keys[0])
        elif cube.primary_keys:
            parts = [exp.Cast(this=self.raw_expr(pk), to=TEXT.copy()) for pk in cube.primary_keys]
            inner = parts[0]
            for part in parts[1:]:
                inner = exp.DPipe(this=inner, expression=part)
        else:
            inner = exp.Star()
        if measure.filters:
            conds = [exp.Paren(this=self.render(cube, f)) for f in measure.filters]
            value = exp.Literal.number(1) if isinstance(inner, exp.Star) else inner
            inner = exp.Case(ifs=[exp.If(this=exp.and_(*conds), true=value)])
        return inner

    def _needed_leaves(self: CompilerState, having_needed: bool) -> list[Measure]:
        """Aggregating measures the query needs: leaves of its measures, and of measure filters (HAVING)."""
        leaves: list[Measure] = []
        for _, m in self.measures:
            leaves += [leaf for leaf in self.leaves(m) if leaf not in leaves]
        if having_needed:
            for f in self.q.filters:
                for path in CubeQuery(filters=[f]).members():
                    found = self.model.find_member(self.model.resolve_path(path))
                    if isinstance(found, Measure):
                        leaves += [leaf for leaf in self.leaves(found) if leaf not in leaves]
        return leaves

    def _group(self: CompilerState, select: exp.Select, n: int) -> exp.Select:
        if n:
            select = select.group_by(*(exp.Literal.number(i + 1) for i in range(n)), copy=False)
        return select

    def _simple(self: CompilerState, where: list[exp.Expr], rendered: dict[str, exp.Expr] | None = None) -> exp.Select:
        rendered = rendered or {}
        select = exp.select(
            *(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
            *(exp.alias_(self.measure_expr(m, rendered), alias_of(p)) for p, m in self.measures),
        )
        select = self._from(select, self.tree)
        if where:
            select = select.where(*(w.copy() for w in where), copy=False)
        select = self._group(select, len(self.dim_selects))
        having = self._having(rendered)
        if having:
            select = select.having(*having, copy=False)
        return select

    def _aggregated(
        self: CompilerState, where: list[exp.Expr], leaves: list[Measure], multiplied_leaves: list[Measure]
    ) -> exp.Select:
        """Cube's fullKeyQueryAggregate: regular measures in one subquery, each multiplied cube's measures
        over its distinct primary keys per dimension tuple, joined on the dimensions."""
        subqueries: list[exp.Select] = []
        location: dict[str, int] = {}
        regular = [leaf for leaf in leaves if leaf not in multiplied_leaves]
        dim_aliases = [a for _, a in self.dim_selects]
        if regular:
            main = exp.select(
                *(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
                *(exp.alias_(self.measure_expr(m, {}), alias_of(m.path)) for m in regular),
            )
            main = self._from(main, self.tree)
            if where:
                main = main.where(*(w.copy() for w in where), copy=False)
            subqueries.append(self._group(main, len(dim_aliases)))
            location.update({m.path: 0 for m in regular})
        by_cube: dict[str, list[Measure]] = {}
        for leaf in multiplied_leaves:
            by_cube.setdefault(leaf.cube, []).append(leaf)
        for cube_name, measures in by_cube.items():
            cube = self.model.cubes[cube_name]
            if not cube.primary_keys:
                raise QueryError(
                    f"measures of cube '{cube_name}' would be multiplied by a one_to_many join and "
                    f"'{cube_name}' has no primary key to aggregate them safely"
                )
            for m in measures:
                cubes: list[str] = []
                self._collect_cubes(m, cubes, set())
                if any(c != cube_name for c in cubes):
                    raise QueryError(
                        f"'{m.path}' references other cubes and would be multiplied by the join; "
                        "rewrite it or query it without the one_to_many join"
                    )
            pks = [(self.raw_expr(pk), f"{alias_of(pk.path)}") for pk in cube.primary_keys]
            keys = exp.select(
                *(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
                *(exp.alias_(e, a) for e, a in pks if a not in dim_aliases),
            ).distinct()
            keys = self._from(keys, self.tree)
            if where:
                keys = keys.where(*(w.copy() for w in where), copy=False)
            on = exp.and_(*(exp.EQ(this=exp.column(a, table="keys", quoted=True), expression=e.copy()) for e, a in pks))
            agg = exp.select(
                *(exp.column(a, table="keys", quoted=True) for a in dim_aliases),
                *(exp.alias_(self.measure_expr(m, {}), alias_of(m.path)) for m in measures),
            )
            agg = agg.from_(
                exp.Subquery(this=keys, alias=exp.TableAlias(this=exp.to_identifier("keys", quoted=True))), copy=False
            )
            agg = agg.join(self._table(cube_name), on=on, join_type="left", copy=False)
            location.update({m.path: len(subqueries) for m in measures})
            subqueries.append(self._group(agg, len(dim_aliases)))
        return self._combine(subqueries, location)

    def _combine(self: CompilerState, subqueries: list[exp.Select], location: dict[str, int]) -> exp.Select:
        """Subqueries ``q_i`` of the same dimension columns joined on them (NULL matches NULL); the query's
        measures computed from the leaf measure columns (``location``: leaf path -> subquery index)."""
        dim_aliases = [a for _, a in self.dim_selects]
        rendered: dict[str, exp.Expr] = {
            path: exp.column(alias_of(path), table=f"q_{i}") for path, i in location.items()
        }
        outer = exp.select(
            *(exp.column(a, table="q_0") for a in dim_aliases),
            *(exp.alias_(self.measure_expr(m, rendered), alias_of(p)) for p, m in self.measures),
        )
        outer = outer.from_(
            exp.Subquery(this=subqueries[0], alias=exp.TableAlias(this=exp.to_identifier("q_0"))), copy=False
        )
        for i, sub in enumerate(subqueries[1:], start=1):
            target = exp.Subquery(this=sub, alias=exp.TableAlias(this=exp.to_identifier(f"q_{i}")))
            if dim_aliases:
                on = exp.and_(
                    *(
                        exp.or_(
                            exp.EQ(this=exp.column(a, table="q_0"), expression=exp.column(a, table=f"q_{i}")),
                            exp.and_(
                                exp.Is(this=exp.column(a, table="q_0"), expression=exp.Null()),
                                exp.Is(this=exp.column(a, table=f"q_{i}"), expression=exp.Null()),
                            ),
                        )
                        for a in dim_aliases
                    )
                )
                outer = outer.join(target, on=on, join_type="inner", copy=False)
            else:
                outer = outer.join(target, join_type="cross", copy=False)
        having = self._having(rendered)
        if having:
            outer = outer.where(*having, copy=False)
        return outer

    def _rolling(self: CompilerState, leaves: list[Measure]) -> exp.Select:
        """Cube's overTimeSeriesQuery: each rolling measure over the date series of the one time dimension,
        the subqueries joined on the dimensions and the series date."""
        plain = [leaf.path for leaf in leaves if not leaf.rolling_window]
        if plain:
            raise QueryError(
                f"rolling-window measures cannot be queried with other measures ({', '.join(plain)}) "
                "by the built-in compiler; query them separately"
            )
        if len(self.tds) != 1 or self.tds[0][0].date_range is None:
            raise QueryError("a rolling-window measure needs exactly one time dimension with a dateRange")
        for leaf in leaves:
            if self.multiplied.get(leaf.cube):
                raise QueryError(
                    f"rolling-window measure '{leaf.path}' would be multiplied by a one_to_many join; "
                    "query it without the joined cube"
                )
        td, dim = self.tds[0]
        assert td.date_range is not None  # checked above
        start, end = resolve_date_range(td.date_range, self.today)
        if not td.granularity:
            return self._combine(
                [
                    self._rolling_total(leaf, leaf.rolling_window, dim, start, end)
                    for leaf in leaves
                    if leaf.rolling_window
                ],
                {leaf.path: i for i, leaf in enumerate(leaves)},
            )
        start_p, end_p = self.param(f"{start}Z"), self.param(f"{end}Z")
        series = _rolling.series(td.granularity, start_p, end_p)
        span = _rolling.bounds(td.granularity, start_p.copy(), end_p.copy())
        subqueries = [
            self._rolling_measure(leaf, leaf.rolling_window, dim, series, span)
            for leaf in leaves
            if leaf.rolling_window
        ]
        return self._combine(subqueries, {leaf.path: i for i, leaf in enumerate(leaves)})

    def _rolling_total(
        self: CompilerState, measure: Measure, window: RollingWindow, dim: Dimension, start: str, end: str
    ) -> exp.Select:
        """Without a granularity Cube aggregates the one window that ends (offset start: starts) at the
        dateRange, instead of the dateRange itself."""
        in_window = _rolling.window_condition(
            window,
            lambda: exp.Cast(this=self.param(f"{start}Z"), to=_rolling.TIMESTAMP.copy()),
            lambda: exp.Cast(this=self.param(f"{end}Z"), to=_rolling.TIMESTAMP.copy()),
            _utc(self.raw_expr(dim)),
        )
        select = exp.select(
            *(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
            exp.alias_(self.measure_expr(measure, {}), alias_of(measure.path)),
        )
        select = self._from(select, self.tree).where(*(w.copy() for w in self._where(False)), in_window, copy=False)
        return self._group(select, len(self.dim_selects))

    def _rolling_measure(
        self: CompilerState,
        measure: Measure,
        window: RollingWindow,
        dim: Dimension,
        series: exp.Select,
        span: tuple[exp.Expr, exp.Expr],
    ) -> exp.Select:
        """One rolling measure: base rows (grouped per dimensions and truncated time for count/sum/min/max,
        raw values for count_distinct/avg) LEFT JOINed to the series on the window, aggregated per bucket."""
        granularity = self.tds[0][0].granularity or ""
        dims, (_, td_alias) = self.dim_selects[:-1], self.dim_selects[-1]
        raw = _utc(self.raw_expr(dim))
        grouped = measure.type in ("count", "sum", "min", "max")
        value = self.measure_expr(measure, {}) if grouped else self.measure_value(measure)
        base = exp.select(
            *(exp.alias_(e.copy(), a) for e, a in dims),
            exp.alias_(_date_trunc(_rolling.base_granularity(window, granularity), self.raw_expr(dim)), "ts"),
            exp.alias_(value, "value"),
        )
        in_span = _rolling.window_condition(window, span[0].copy, span[1].copy, raw, whole_range=True)
        base = self._from(base, self.tree).where(*(w.copy() for w in self._where(False)), in_span, copy=False)
        if grouped:
            base = self._group(base, len(dims) + 1)
        column = exp.column("value", table="base")
        outer_agg = {"count": exp.Sum, "sum": exp.Sum, "min": exp.Min, "max": exp.Max, "avg": exp.Avg}.get(measure.type)
        agg = outer_agg(this=column) if outer_agg else exp.Count(this=exp.Distinct(expressions=[column]))
        on = _rolling.window_condition(
            window,
            lambda: exp.column("date_from", table="series"),
            lambda: exp.column("date_to", table="series"),
            exp.column("ts", table="base"),
        )
        sub = exp.select(
            *(exp.column(a, table="base").as_(a) for _, a in dims),
            exp.column("date_from", table="series").as_(td_alias),
            exp.alias_(agg, alias_of(measure.path)),
        )
        sub = sub.from_(exp.Subquery(this=series.copy(), alias=exp.TableAlias(this=exp.to_identifier("series"))))
        sub = sub.join(
            exp.Subquery(this=base, alias=exp.TableAlias(this=exp.to_identifier("base"))),
            on=on,
            join_type="left",
            copy=False,
        )
        return self._group(sub, len(dims) + 1)

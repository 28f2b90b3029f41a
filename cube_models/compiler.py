"""Built-in compiler: Cube query + Cube YAML model -> one PostgreSQL SELECT built as a sqlglot AST.

Follows Cube 0.33's PostgresQuery: LEFT JOINs along the directed join graph, measure filters as
``CASE WHEN``, derived ``number`` measures, fan-out safe aggregation of multiplied measures
(distinct primary keys per dimension tuple, then aggregate, as Cube's aggregateSubQuery), time
dimensions ``date_trunc(g, col::timestamptz AT TIME ZONE 'UTC')``, Cube's default order and limits.
User values are bind parameters (``$1``...), never SQL text.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import walk_in_scope

from cube_models import _joins, _rollup_sql
from cube_models._compile.aggregation import AggregationPhase
from cube_models._compile.filters import FiltersPhase
from cube_models._compile.joins import JoinsPhase
from cube_models._compile.ordering import OrderingPhase
from cube_models._compile.sql import (
    Column,
    Compiled,
    _date_trunc,
    _parse_template,
    alias_of,
    to_cube_value,
)
from cube_models._refs import PLACEHOLDER_PREFIX, Ref, classify
from cube_models.errors import QueryError
from cube_models.model import Cube, Dimension, Measure, PreAggregation, Segment, SemanticModel
from cube_models.query import CubeQuery, TimeDimension

DEFAULT_LIMIT = 10_000
ROW_CAP = 50_000

__all__ = ["DEFAULT_LIMIT", "ROW_CAP", "Column", "Compiled", "compile_query", "compile_rollup", "to_cube_value"]


class _Compiler(JoinsPhase, FiltersPhase, AggregationPhase, OrderingPhase):
    """One query's compilation: members and their SQL here, each phase in ``cube_models._compile``."""

    def __init__(
        self,
        model: SemanticModel,
        query: CubeQuery,
        today: date | datetime | None,
        default_limit: int,
        row_cap: int,
        rollups: Mapping[str, str] | None = None,
        build: PreAggregation | None = None,
    ) -> None:
        self.model, self.q, self.today = model, query, today
        self.default_limit, self.row_cap = default_limit, row_cap
        self.params: list[str] = []
        self.ctes: dict[str, str] = {}
        self.rollups = rollups or {}
        self.build = build  # compiling the rows of this rollup: no order, no limit, segments as columns
        self.rollup: PreAggregation | None = None
        self.rollup_cols: dict[str, str] = {}

    # ---- members ------------------------------------------------------------------------
    def _get(self, path: str, kinds: tuple[type, ...], where: str) -> Any:
        member = self.model.find_member(path)
        if member is None:
            raise QueryError(f"{where}: unknown member '{path}'")
        if not isinstance(member, kinds):
            wanted = " or ".join(k.__name__.lower() for k in kinds)
            raise QueryError(f"{where}: '{path}' is a {member.kind}, expected a {wanted}")
        return member

    def param(self, value: str) -> exp.Expr:
        self.params.append(value)
        return exp.Parameter(this=exp.Literal.number(len(self.params)))

    # ---- SQL templates -> AST -----------------------------------------------------------
    def _template(self, sql: str) -> exp.Expr:
        return _parse_template(sql).copy()

    def render(self, cube: Cube, sql: str, rendered: dict[str, exp.Expr] | None = None) -> exp.Expr:
        """Member SQL of ``cube`` -> AST: ``{CUBE}``/``{cube}`` become table aliases, ``{member}`` the member's
        expression; bare column names of the outermost scope are prefixed with the cube alias (Cube's
        autoPrefixWithCubeName). Columns of subqueries (``x IN (SELECT id FROM t WHERE amount > 0)``) belong
        to the subquery's tables and are left as written."""
        refs = [
            r
            for _, r in classify(
                sql, cube.name, set(self.model.cubes), {*cube.measures, *cube.dimensions, *cube.segments}
            )
        ]
        tree = self._template(sql)
        outer = {id(node) for node in walk_in_scope(tree) if isinstance(node, exp.Column)}

        def ref_at(name: str) -> Ref | None:
            if name.startswith(PLACEHOLDER_PREFIX):
                ref = refs[int(name[len(PLACEHOLDER_PREFIX) :])]
                if isinstance(ref, str):
                    raise QueryError(ref)
                return ref
            return None

        def swap(node: exp.Expr) -> exp.Expr:
            if not isinstance(node, exp.Column):
                return node
            table_ref = ref_at(node.table) if node.table else None
            if table_ref is not None:
                return exp.column(node.name, table=table_ref.cube, quoted=True)
            name_ref = ref_at(node.name) if not node.table else None
            if name_ref is not None:
                if name_ref.kind == "cube":
                    return exp.column("*", table=name_ref.cube)
                return exp.Paren(this=self.member_expr(name_ref.path, rendered))
            if not node.table and id(node) in outer:
                return exp.Column(this=node.this, table=exp.to_identifier(cube.name, quoted=True))
            return node

        return tree.transform(swap, copy=False)

    def member_expr(self, path: str, rendered: dict[str, exp.Expr] | None = None) -> exp.Expr:
        member = self.model.member(path)
        if isinstance(member, Measure):
            return self.measure_expr(member, rendered or {})
        return self.raw_expr(member)

    def raw_expr(self, member: Dimension | Segment) -> exp.Expr:
        if member.path in self.rollup_cols:
            return exp.column(self.rollup_cols[member.path], table=_rollup_sql.ROLLUP_ALIAS, quoted=True)
        return self.render(self.model.cubes[member.cube], member.sql)

    # ---- the query ----------------------------------------------------------------------------
    def compile(self) -> Compiled:
        q, model = self.q, self.model
        self.measures = [(p, self._get(model.resolve_path(p), (Measure,), "measures")) for p in q.measures]
        self.dims = [(p, self._get(model.resolve_path(p), (Dimension,), "dimensions")) for p in q.dimensions]
        self.tds: list[tuple[TimeDimension, Dimension]] = []
        for td in q.time_dimensions:
            dim = self._get(model.resolve_path(td.dimension), (Dimension,), "timeDimensions")
            if dim.type != "time":
                raise QueryError(f"timeDimensions: '{td.dimension}' is a {dim.type} dimension, not a time dimension")
            self.tds.append((td, dim))
        self.segs = [self._get(model.resolve_path(s), (Segment,), "segments") for s in q.segments]
        kinds: set[bool] = set()
        for f in q.filters:
            kinds |= self._filter_kinds(f)
        limit = q.limit if q.limit is not None else min(self.default_limit, self.row_cap)
        if limit > self.row_cap:
            raise QueryError(f"limit {limit} is over the row cap of {self.row_cap}")
        filter_paths = [
            m
            for m in q.members()
            if isinstance(model.find_member(m), Measure | Dimension)
            and m not in q.measures
            and m not in q.dimensions
            and m not in (t.dimension for t in q.time_dimensions)
        ]
        hints: list[_joins.Hint] = []
        for path in [*q.measures, *q.dimensions, *q.segments, *filter_paths, *(t.dimension for t in q.time_dimensions)]:
            hints += self._hints(path)
        self.tree = _joins.build_join_tree(model, hints)
        self.multiplied = {c: _joins.multiplied(c, self.tree) for c in self.tree.cubes()}
        leaves = self._needed_leaves(True in kinds)
        multiplied_leaves = [leaf for leaf in leaves if self.is_multiplied_leaf(leaf)]
        self.rollup = _rollup_sql.choose(self, leaves, bool(multiplied_leaves), self.rollups)
        if self.rollup is not None:
            self.rollup_cols = _rollup_sql.columns_of(self.rollup)
        columns = self._columns()
        if self.rollup is not None:
            select = self._simple(self._where(), _rollup_sql.rendered_measures(self, self.rollup, leaves))
        elif any(leaf.rolling_window for leaf in leaves):
            select = self._rolling(leaves)
        elif not multiplied_leaves:
            select = self._simple(self._where())
        else:
            select = self._aggregated(self._where(), leaves, multiplied_leaves)
        return self._finish(select, columns, limit)

    def _columns(self) -> list[Column]:
        """Result columns (dimensions, time dimensions with granularity, measures); fills ``dim_selects``."""
        q = self.q
        columns: list[Column] = []
        self.dim_selects: list[tuple[exp.Expr, str]] = []
        for path, dim in self.dims:
            alias = alias_of(path)
            columns.append(Column(path, alias, dim.path, "dimension", dim.type))
            self.dim_selects.append((self.raw_expr(dim), alias))
        seen_td: set[str] = set()
        for td, dim in self.tds:
            if not td.granularity:
                continue
            key = f"{td.dimension}.{td.granularity}"
            if key in seen_td:
                continue
            seen_td.add(key)
            alias = f"{alias_of(td.dimension)}_{td.granularity}"
            extra = td.dimension if td.dimension not in q.dimensions else None
            columns.append(Column(key, alias, dim.path, "time", "time", extra))
            self.dim_selects.append((_date_trunc(td.granularity, self.raw_expr(dim)), alias))
        for segment in self.build.segments if self.build else ():
            columns.append(Column(segment, alias_of(segment), segment, "dimension", "boolean"))
            self.dim_selects.append((self.raw_expr(self.model.member(segment)), alias_of(segment)))  # type: ignore[arg-type]
        for path, measure in self.measures:
            columns.append(Column(path, alias_of(path), measure.path, "measure", measure.type))
        return columns

    def _finish(self, select: exp.Select, columns: list[Column], limit: int) -> Compiled:
        """CTEs of SQL cubes, order, limit/offset and the total query around the main SELECT."""
        q = self.q
        order = self._order(columns)
        for cte, sql in self.ctes.items():
            select = select.with_(
                exp.to_identifier(cte, quoted=True), as_=self._template(sql), materialized=False, copy=False
            )
        base = select.copy() if q.total else select
        if self.build is not None:
            return Compiled(sql=select.sql(dialect="postgres"), params=list(self.params), columns=columns)
        if order:
            select = select.order_by(*order, copy=False)
        select = select.limit(exp.Literal.number(limit), copy=False)
        if q.offset:
            select = select.offset(exp.Literal.number(q.offset), copy=False)
        total_sql = None
        if q.total:
            total = exp.select(exp.alias_(exp.Count(this=exp.Star()), "total_count")).from_(
                exp.alias_(exp.Subquery(this=base), "original_query")
            )
            total_sql = total.sql(dialect="postgres")
        return Compiled(
            sql=select.sql(dialect="postgres"),
            params=list(self.params),
            columns=columns,
            total_sql=total_sql,
            join_root=self.tree.root,
            annotation=self._annotation(columns),
            rollup=self.rollup.path if self.rollup else None,
        )

    def _annotation(self, columns: list[Column]) -> dict[str, Any]:
        out: dict[str, dict[str, Any]] = {"measures": {}, "dimensions": {}, "timeDimensions": {}}
        for c in columns:
            member = self.model.member(c.member)
            info = {"title": member.title or member.name, "type": "number" if c.kind == "measure" else c.type}
            number_format = getattr(member, "format", None)
            if number_format:
                info["format"] = number_format
            group = {"measure": "measures", "dimension": "dimensions", "time": "timeDimensions"}[c.kind]
            out[group][c.key] = info
        return out


def compile_query(
    query: CubeQuery | dict[str, Any] | str,
    model: SemanticModel,
    today: date | datetime | None = None,
    default_limit: int = DEFAULT_LIMIT,
    row_cap: int = ROW_CAP,
    rollups: Mapping[str, str] | None = None,
) -> Compiled:
    """Compile a Cube query against ``model`` to PostgreSQL (``$n`` bind parameters in ``.params``).
    ``rollups`` (pre-aggregation path -> built table) lets a matching rollup answer the query."""
    return _Compiler(model, CubeQuery.parse(query), today, default_limit, row_cap, rollups).compile()


def compile_rollup(pre: PreAggregation, model: SemanticModel) -> str:
    """The SELECT whose rows are the rollup table of ``pre`` (no order, no limit)."""
    query = _rollup_sql.build_query(pre)
    return _Compiler(model, query, None, DEFAULT_LIMIT, ROW_CAP, build=pre).compile().sql

"""Built-in compiler: Cube query + Cube YAML model -> one PostgreSQL SELECT built as a sqlglot AST.

Follows Cube 0.33's PostgresQuery: LEFT JOINs along the directed join graph, measure filters as
``CASE WHEN``, derived ``number`` measures, fan-out safe aggregation of multiplied measures
(distinct primary keys per dimension tuple, then aggregate, as Cube's aggregateSubQuery), time
dimensions ``date_trunc(g, col::timestamptz AT TIME ZONE 'UTC')``, Cube's default order and limits.
User values are bind parameters (``$1``...), never SQL text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import walk_in_scope

from cube_models import _joins, _rolling, _rollup_sql
from cube_models._refs import PLACEHOLDER_PREFIX, Ref, classify, to_placeholders
from cube_models.dates import filter_bound, fmt, resolve_date_range
from cube_models.errors import QueryError
from cube_models.model import Cube, Dimension, Measure, PreAggregation, RollingWindow, Segment, SemanticModel
from cube_models.query import DATE_OPERATORS, CubeQuery, Filter, FilterGroup, TimeDimension

DEFAULT_LIMIT = 10_000
ROW_CAP = 50_000
_NOT_MULTIPLIED = ("count_distinct", "count_distinct_approx")


@dataclass(frozen=True)
class Column:
    """One result column: ``key`` is Cube's row key; ``extra_key`` the granularity-less alias of a time dim."""

    key: str
    alias: str
    member: str
    kind: str  # dimension | time | measure
    type: str
    extra_key: str | None = None


@dataclass
class Compiled:
    sql: str
    params: list[str]
    columns: list[Column]
    total_sql: str | None = None
    join_root: str = ""
    annotation: dict[str, Any] = field(default_factory=dict)
    rollup: str | None = None  # the pre-aggregation (cube.name) whose table answered the query

    def rows(self, records: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        """Database tuples -> Cube-shaped rows (ISO time strings, Python numbers)."""
        out = []
        for rec in records:
            row: dict[str, Any] = {}
            for col, value in zip(self.columns, rec, strict=False):
                value = to_cube_value(value)
                row[col.key] = value
                if col.extra_key:
                    row[col.extra_key] = value
            out.append(row)
        return out


def _whole_exponent(value: Decimal) -> bool:
    exponent = value.as_tuple().exponent
    return isinstance(exponent, int) and exponent >= 0


def to_cube_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return fmt(value.replace(tzinfo=None))
    if isinstance(value, date):
        return f"{value.isoformat()}T00:00:00.000"
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and _whole_exponent(value) \
            else float(value)
    return value


TIMESTAMPTZ = exp.DataType.build("timestamptz")
TEXT = exp.DataType.build("text")


@lru_cache(maxsize=1024)
def _physical_table(name: str) -> exp.Table:
    return exp.to_table(name, dialect="postgres")


@lru_cache(maxsize=4096)
def _parse_template(sql: str) -> exp.Expr:
    """Model SQL parsed once per process (callers copy the tree before changing it)."""
    return sqlglot.parse_one(to_placeholders(sql)[0], read="postgres")


def alias_of(path: str) -> str:
    return path.replace(".", "__").lower()


def _utc(raw: exp.Expr) -> exp.Expr:
    """A time column as a UTC timestamp (Cube's convertedToTz): ``raw::timestamptz AT TIME ZONE 'UTC'``."""
    return exp.AtTimeZone(this=exp.Cast(this=raw, to=TIMESTAMPTZ.copy()), zone=exp.Literal.string("UTC"))


def _date_trunc(granularity: str, raw: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string(granularity), exp.Paren(this=_utc(raw))])


def _or_null(column: exp.Expr, expr: exp.Expr, add: bool) -> exp.Expr:
    """``expr OR column IS NULL`` when ``add``."""
    return exp.or_(expr, exp.Is(this=column.copy(), expression=exp.Null())) if add else expr


class _Compiler:
    def __init__(self, model: SemanticModel, query: CubeQuery, today: date | datetime | None,
                 default_limit: int, row_cap: int, rollups: Mapping[str, str] | None = None,
                 build: PreAggregation | None = None) -> None:
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
        refs = [r for _, r in classify(sql, cube.name, set(self.model.cubes),
                                       {*cube.measures, *cube.dimensions, *cube.segments})]
        tree = self._template(sql)
        outer = {id(node) for node in walk_in_scope(tree) if isinstance(node, exp.Column)}

        def ref_at(name: str) -> Ref | None:
            if name.startswith(PLACEHOLDER_PREFIX):
                ref = refs[int(name[len(PLACEHOLDER_PREFIX):])]
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

    # ---- measures ---------------------------------------------------------------------------
    def leaves(self, measure: Measure) -> list[Measure]:
        """Measures that aggregate rows (a number measure is computed from its referenced measures)."""
        if measure.type != "number":
            return [measure]
        cube = self.model.cubes[measure.cube]
        refs = [r for _, r in classify(measure.sql or "", cube.name, set(self.model.cubes),
                                       {*cube.measures, *cube.dimensions, *cube.segments})
                if isinstance(r, Ref) and r.kind == "member"]
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

    def is_multiplied_leaf(self, leaf: Measure) -> bool:
        if not self.multiplied.get(leaf.cube):
            return False
        return leaf.type not in _NOT_MULTIPLIED and not (leaf.type == "count" and not leaf.sql)

    def measure_expr(self, measure: Measure, rendered: dict[str, exp.Expr]) -> exp.Expr:
        if measure.path in rendered:
            return rendered[measure.path].copy()
        cube = self.model.cubes[measure.cube]
        if measure.type == "number" and self.leaves(measure) != [measure]:
            return self.render(cube, measure.sql or "", rendered)
        inner = self.measure_value(measure)
        multiplied = bool(self.multiplied.get(measure.cube))
        if measure.type in ("count_distinct", "count_distinct_approx") or \
                (measure.type == "count" and not measure.sql and multiplied):
            return exp.Count(this=exp.Distinct(expressions=[inner]))
        if measure.type == "count":
            return exp.Count(this=inner)
        if measure.type == "number":
            return inner
        func = {"sum": exp.Sum, "avg": exp.Avg, "min": exp.Min, "max": exp.Max}[measure.type]
        return func(this=inner)

    def measure_value(self, measure: Measure) -> exp.Expr:
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

    # ---- filters ----------------------------------------------------------------------------
    def condition(self, column: exp.Expr, f: Filter, is_time: bool) -> exp.Expr:
        op, values = f.operator, list(f.values)
        non_null = [v for v in values if v is not None]
        if op in DATE_OPERATORS:
            return self._date_condition(column, op, non_null, is_time)
        if op == "set":
            return exp.not_(exp.Is(this=column.copy(), expression=exp.Null()))
        if op == "notSet":
            return exp.Is(this=column.copy(), expression=exp.Null())
        if op in ("equals", "notEquals"):
            return self._equality(column, op == "equals", values, non_null)
        if op in ("contains", "notContains", "startsWith", "notStartsWith", "endsWith", "notEndsWith"):
            return self._like(column, op, non_null, has_null=len(non_null) != len(values))
        cls = {"gt": exp.GT, "gte": exp.GTE, "lt": exp.LT, "lte": exp.LTE}[op]
        return cls(this=column.copy(), expression=self.param(non_null[0]))

    def _date_condition(self, column: exp.Expr, op: str, non_null: list[str], is_time: bool) -> exp.Expr:
        start = filter_bound(non_null[0], False)
        end = filter_bound(non_null[1], True) if len(non_null) > 1 else None

        def ts(value: str | None) -> exp.Expr:
            p = self.param(f"{value}Z")
            return p if not is_time else exp.Cast(this=p, to=TIMESTAMPTZ.copy())

        if op in ("inDateRange", "onTheDate"):
            return exp.and_(exp.GTE(this=column.copy(), expression=ts(start)),
                            exp.LTE(this=column.copy(), expression=ts(end)))
        if op == "notInDateRange":
            return exp.or_(exp.LT(this=column.copy(), expression=ts(start)),
                           exp.GT(this=column.copy(), expression=ts(end)))
        cls = {"beforeDate": exp.LT, "beforeOrOnDate": exp.LTE, "afterDate": exp.GT,
               "afterOrOnDate": exp.GTE}[op]
        return cls(this=column.copy(), expression=ts(start))

    def _equality(self, column: exp.Expr, positive: bool, values: list[str | None], non_null: list[str]
                  ) -> exp.Expr:
        has_null = len(non_null) != len(values)
        if len(values) > 1:
            inside = exp.In(this=column.copy(), expressions=[self.param(v) for v in non_null])
            return _or_null(column, inside if positive else exp.not_(inside), has_null if positive else not has_null)
        if has_null:
            is_null = exp.Is(this=column.copy(), expression=exp.Null())
            return is_null if positive else exp.not_(is_null)
        if positive:
            return exp.EQ(this=column.copy(), expression=self.param(non_null[0]))
        return _or_null(column, exp.NEQ(this=column.copy(), expression=self.param(non_null[0])), True)

    def _like(self, column: exp.Expr, op: str, non_null: list[str], has_null: bool) -> exp.Expr:
        negated = op.startswith("not")
        kind = op[3:].lower() if negated else op.lower()
        likes = []
        for value in non_null:
            pattern: exp.Expr = self.param(
                value.replace("%", "\\%").replace("_", "\\_") if "contains" in kind else value)
            if kind in ("contains", "endswith"):
                pattern = exp.DPipe(this=exp.Literal.string("%"), expression=pattern)
            if kind in ("contains", "startswith"):
                pattern = exp.DPipe(this=pattern, expression=exp.Literal.string("%"))
            like = exp.ILike(this=column.copy(), expression=pattern)
            likes.append(exp.not_(like) if negated else like)
        joined = exp.and_(*likes) if negated else exp.or_(*likes)
        return _or_null(column, joined, not has_null if negated else has_null)

    def filter_expr(self, f: Filter | FilterGroup, measures: bool, rendered: dict[str, exp.Expr]
                    ) -> exp.Expr | None:
        if isinstance(f, FilterGroup):
            parts = [p for p in (self.filter_expr(i, measures, rendered) for i in f.items) if p is not None]
            if not parts:
                return None
            return exp.Paren(this=exp.and_(*parts) if f.op == "and" else exp.or_(*parts))
        member = self._get(self.model.resolve_path(f.member), (Measure, Dimension), "filters")
        if isinstance(member, Measure) != measures:
            return None
        column = self.measure_expr(member, rendered) if measures else self.raw_expr(member)
        if not isinstance(column, exp.Column | exp.Paren):
            column = exp.Paren(this=column)  # "a = 'x'" as a filter column must stay one operand
        is_time = isinstance(member, Dimension) and member.type == "time"
        return exp.Paren(this=self.condition(column, f, is_time))

    def _filter_kinds(self, f: Filter | FilterGroup) -> set[bool]:
        if isinstance(f, FilterGroup):
            kinds: set[bool] = set()
            for item in f.items:
                kinds |= self._filter_kinds(item)
            if len(kinds) > 1:
                raise QueryError(f"an '{f.op}' filter group cannot mix measures and dimensions")
            return kinds
        member = self._get(self.model.resolve_path(f.member), (Measure, Dimension), "filters")
        return {isinstance(member, Measure)}

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
        filter_paths = [m for m in q.members() if isinstance(model.find_member(m), Measure | Dimension)
                        and m not in q.measures and m not in q.dimensions
                        and m not in (t.dimension for t in q.time_dimensions)]
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

    def _needed_leaves(self, having_needed: bool) -> list[Measure]:
        """Aggregating measures the query needs: leaves of its measures, and of measure filters (HAVING)."""
        leaves: list[Measure] = []
        for _, m in self.measures:
            leaves += [leaf for leaf in self.leaves(m) if leaf not in leaves]
        if having_needed:
            for f in self.q.filters:
                for path in CubeQuery(filters=[f]).members():
                    m = self.model.find_member(self.model.resolve_path(path))
                    if isinstance(m, Measure):
                        leaves += [leaf for leaf in self.leaves(m) if leaf not in leaves]
        return leaves

    def _finish(self, select: exp.Select, columns: list[Column], limit: int) -> Compiled:
        """CTEs of SQL cubes, order, limit/offset and the total query around the main SELECT."""
        q = self.q
        order = self._order(columns)
        for cte, sql in self.ctes.items():
            select = select.with_(exp.to_identifier(cte, quoted=True), as_=self._template(sql), materialized=False,
                                  copy=False)
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
                exp.alias_(exp.Subquery(this=base), "original_query"))
            total_sql = total.sql(dialect="postgres")
        return Compiled(sql=select.sql(dialect="postgres"), params=list(self.params), columns=columns,
                        total_sql=total_sql, join_root=self.tree.root,
                        annotation=self._annotation(columns), rollup=self.rollup.path if self.rollup else None)

    def _hints(self, path: str) -> list[_joins.Hint]:
        """Join hints of a query member (Cube's collectJoinHints): a view member brings its join path as a chain,
        then the cubes its SQL references."""
        view_name, _, name = path.partition(".")
        view = self.model.views.get(view_name)
        cubes: list[str] = []
        self._collect_cubes(self.model.member(self.model.resolve_path(path)), cubes, set())
        if view is not None and name in view.join_paths:
            return [list(view.join_paths[name]), *cubes]
        return list(cubes)

    def _collect_cubes(self, member: Measure | Dimension | Segment, out: list[str], seen: set[str]) -> None:
        if member.path in seen:
            return
        seen.add(member.path)
        if member.cube not in out:
            out.append(member.cube)
        cube = self.model.cubes[member.cube]
        for text in [member.sql or "", *getattr(member, "filters", ())]:
            for _, ref in classify(text, cube.name, set(self.model.cubes),
                                   {*cube.measures, *cube.dimensions, *cube.segments}):
                if not isinstance(ref, Ref):
                    continue
                if ref.kind == "cube":
                    if ref.cube not in out:
                        out.append(ref.cube)
                else:
                    self._collect_cubes(self.model.member(ref.path), out, seen)

    def _from(self, select: exp.Select, tree: _joins.JoinTree) -> exp.Select:
        if self.rollup is not None:
            table = exp.to_table(self.rollups[self.rollup.path], dialect="postgres")
            table.set("alias", exp.TableAlias(this=exp.to_identifier(_rollup_sql.ROLLUP_ALIAS, quoted=True)))
            return select.from_(table, copy=False)
        select = select.from_(self._table(tree.root), copy=False)
        for join in tree.joins:
            on = self.render(self.model.cubes[join.source], join.sql)
            select = select.join(self._table(join.target), on=on, join_type="left", copy=False)
        return select

    def _table(self, name: str) -> exp.Expr:
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

    def _where(self, date_ranges: bool = True) -> list[exp.Expr]:
        """WHERE conditions: time dimension date ranges (unless ``date_ranges`` is false), segments, filters."""
        conds: list[exp.Expr] = []
        for td, dim in self.tds:
            if td.date_range is None or not date_ranges:
                continue
            start, end = resolve_date_range(td.date_range, self.today)
            in_range = Filter(td.dimension, "inDateRange", (start, end))
            conds.append(exp.Paren(this=self.condition(self.raw_expr(dim), in_range, True)))
        for seg in self.segs:
            conds.append(exp.Paren(this=self.raw_expr(seg)))
        for f in self.q.filters:
            cond = self.filter_expr(f, False, {})
            if cond is not None:
                conds.append(cond)
        return conds

    def _having(self, rendered: dict[str, exp.Expr]) -> list[exp.Expr]:
        return [c for c in (self.filter_expr(f, True, rendered) for f in self.q.filters) if c is not None]

    def _group(self, select: exp.Select, n: int) -> exp.Select:
        if n:
            select = select.group_by(*(exp.Literal.number(i + 1) for i in range(n)), copy=False)
        return select

    def _simple(self, where: list[exp.Expr], rendered: dict[str, exp.Expr] | None = None) -> exp.Select:
        rendered = rendered or {}
        select = exp.select(*(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
                            *(exp.alias_(self.measure_expr(m, rendered), alias_of(p)) for p, m in self.measures))
        select = self._from(select, self.tree)
        if where:
            select = select.where(*(w.copy() for w in where), copy=False)
        select = self._group(select, len(self.dim_selects))
        having = self._having(rendered)
        if having:
            select = select.having(*having, copy=False)
        return select

    def _aggregated(self, where: list[exp.Expr], leaves: list[Measure],
                    multiplied_leaves: list[Measure]) -> exp.Select:
        """Cube's fullKeyQueryAggregate: regular measures in one subquery, each multiplied cube's measures
        over its distinct primary keys per dimension tuple, joined on the dimensions."""
        subqueries: list[exp.Select] = []
        location: dict[str, int] = {}
        regular = [leaf for leaf in leaves if leaf not in multiplied_leaves]
        dim_aliases = [a for _, a in self.dim_selects]
        if regular:
            main = exp.select(*(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
                              *(exp.alias_(self.measure_expr(m, {}), alias_of(m.path)) for m in regular))
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
                raise QueryError(f"measures of cube '{cube_name}' would be multiplied by a one_to_many join and "
                                 f"'{cube_name}' has no primary key to aggregate them safely")
            for m in measures:
                cubes: list[str] = []
                self._collect_cubes(m, cubes, set())
                if any(c != cube_name for c in cubes):
                    raise QueryError(f"'{m.path}' references other cubes and would be multiplied by the join; "
                                     "rewrite it or query it without the one_to_many join")
            pks = [(self.raw_expr(pk), f"{alias_of(pk.path)}") for pk in cube.primary_keys]
            keys = exp.select(*(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
                              *(exp.alias_(e, a) for e, a in pks if a not in dim_aliases)).distinct()
            keys = self._from(keys, self.tree)
            if where:
                keys = keys.where(*(w.copy() for w in where), copy=False)
            on = exp.and_(*(exp.EQ(this=exp.column(a, table="keys", quoted=True), expression=e.copy())
                            for e, a in pks))
            agg = exp.select(*(exp.column(a, table="keys", quoted=True) for a in dim_aliases),
                             *(exp.alias_(self.measure_expr(m, {}), alias_of(m.path)) for m in measures))
            agg = agg.from_(exp.Subquery(this=keys, alias=exp.TableAlias(this=exp.to_identifier("keys", quoted=True))),
                            copy=False)
            agg = agg.join(self._table(cube_name), on=on, join_type="left", copy=False)
            location.update({m.path: len(subqueries) for m in measures})
            subqueries.append(self._group(agg, len(dim_aliases)))
        return self._combine(subqueries, location)

    def _combine(self, subqueries: list[exp.Select], location: dict[str, int]) -> exp.Select:
        """Subqueries ``q_i`` of the same dimension columns joined on them (NULL matches NULL); the query's
        measures computed from the leaf measure columns (``location``: leaf path -> subquery index)."""
        dim_aliases = [a for _, a in self.dim_selects]
        rendered: dict[str, exp.Expr] = {path: exp.column(alias_of(path), table=f"q_{i}")
                                         for path, i in location.items()}
        outer = exp.select(*(exp.column(a, table="q_0") for a in dim_aliases),
                           *(exp.alias_(self.measure_expr(m, rendered), alias_of(p)) for p, m in self.measures))
        outer = outer.from_(exp.Subquery(this=subqueries[0], alias=exp.TableAlias(this=exp.to_identifier("q_0"))),
                            copy=False)
        for i, sub in enumerate(subqueries[1:], start=1):
            target = exp.Subquery(this=sub, alias=exp.TableAlias(this=exp.to_identifier(f"q_{i}")))
            if dim_aliases:
                on = exp.and_(*(exp.or_(
                    exp.EQ(this=exp.column(a, table="q_0"), expression=exp.column(a, table=f"q_{i}")),
                    exp.and_(exp.Is(this=exp.column(a, table="q_0"), expression=exp.Null()),
                             exp.Is(this=exp.column(a, table=f"q_{i}"), expression=exp.Null())))
                    for a in dim_aliases))
                outer = outer.join(target, on=on, join_type="inner", copy=False)
            else:
                outer = outer.join(target, join_type="cross", copy=False)
        having = self._having(rendered)
        if having:
            outer = outer.where(*having, copy=False)
        return outer

    def _rolling(self, leaves: list[Measure]) -> exp.Select:
        """Cube's overTimeSeriesQuery: each rolling measure over the date series of the one time dimension,
        the subqueries joined on the dimensions and the series date."""
        plain = [leaf.path for leaf in leaves if not leaf.rolling_window]
        if plain:
            raise QueryError(f"rolling-window measures cannot be queried with other measures ({', '.join(plain)}) "
                             "by the built-in compiler; query them separately")
        if len(self.tds) != 1 or self.tds[0][0].date_range is None:
            raise QueryError("a rolling-window measure needs exactly one time dimension with a dateRange")
        for leaf in leaves:
            if self.multiplied.get(leaf.cube):
                raise QueryError(f"rolling-window measure '{leaf.path}' would be multiplied by a one_to_many join; "
                                 "query it without the joined cube")
        td, dim = self.tds[0]
        assert td.date_range is not None  # checked above
        start, end = resolve_date_range(td.date_range, self.today)
        if not td.granularity:
            return self._combine([self._rolling_total(leaf, leaf.rolling_window, dim, start, end)
                                  for leaf in leaves if leaf.rolling_window],
                                 {leaf.path: i for i, leaf in enumerate(leaves)})
        start_p, end_p = self.param(f"{start}Z"), self.param(f"{end}Z")
        series = _rolling.series(td.granularity, start_p, end_p)
        span = _rolling.bounds(td.granularity, start_p.copy(), end_p.copy())
        subqueries = [self._rolling_measure(leaf, leaf.rolling_window, dim, series, span) for leaf in leaves
                      if leaf.rolling_window]
        return self._combine(subqueries, {leaf.path: i for i, leaf in enumerate(leaves)})

    def _rolling_total(self, measure: Measure, window: RollingWindow, dim: Dimension, start: str,
                       end: str) -> exp.Select:
        """Without a granularity Cube aggregates the one window that ends (offset start: starts) at the
        dateRange, instead of the dateRange itself."""
        in_window = _rolling.window_condition(
            window, lambda: exp.Cast(this=self.param(f"{start}Z"), to=_rolling.TIMESTAMP.copy()),
            lambda: exp.Cast(this=self.param(f"{end}Z"), to=_rolling.TIMESTAMP.copy()), _utc(self.raw_expr(dim)))
        select = exp.select(*(exp.alias_(e.copy(), a) for e, a in self.dim_selects),
                            exp.alias_(self.measure_expr(measure, {}), alias_of(measure.path)))
        select = self._from(select, self.tree).where(*(w.copy() for w in self._where(False)), in_window, copy=False)
        return self._group(select, len(self.dim_selects))

    def _rolling_measure(self, measure: Measure, window: RollingWindow, dim: Dimension,
                         series: exp.Select, span: tuple[exp.Expr, exp.Expr]) -> exp.Select:
        """One rolling measure: base rows (grouped per dimensions and truncated time for count/sum/min/max,
        raw values for count_distinct/avg) LEFT JOINed to the series on the window, aggregated per bucket."""
        granularity = self.tds[0][0].granularity or ""
        dims, (_, td_alias) = self.dim_selects[:-1], self.dim_selects[-1]
        raw = _utc(self.raw_expr(dim))
        grouped = measure.type in ("count", "sum", "min", "max")
        value = self.measure_expr(measure, {}) if grouped else self.measure_value(measure)
        base = exp.select(*(exp.alias_(e.copy(), a) for e, a in dims),
                          exp.alias_(_date_trunc(_rolling.base_granularity(window, granularity), self.raw_expr(dim)),
                                     "ts"),
                          exp.alias_(value, "value"))
        in_span = _rolling.window_condition(window, span[0].copy, span[1].copy, raw, whole_range=True)
        base = self._from(base, self.tree).where(*(w.copy() for w in self._where(False)), in_span, copy=False)
        if grouped:
            base = self._group(base, len(dims) + 1)
        column = exp.column("value", table="base")
        outer_agg = {"count": exp.Sum, "sum": exp.Sum, "min": exp.Min, "max": exp.Max, "avg": exp.Avg}.get(
            measure.type)
        agg = outer_agg(this=column) if outer_agg else exp.Count(this=exp.Distinct(expressions=[column]))
        on = _rolling.window_condition(window, lambda: exp.column("date_from", table="series"),
                                       lambda: exp.column("date_to", table="series"), exp.column("ts", table="base"))
        sub = exp.select(*(exp.column(a, table="base").as_(a) for _, a in dims),
                         exp.column("date_from", table="series").as_(td_alias),
                         exp.alias_(agg, alias_of(measure.path)))
        sub = sub.from_(exp.Subquery(this=series.copy(), alias=exp.TableAlias(this=exp.to_identifier("series"))))
        sub = sub.join(exp.Subquery(this=base, alias=exp.TableAlias(this=exp.to_identifier("base"))), on=on,
                       join_type="left", copy=False)
        return self._group(sub, len(dims) + 1)

    def _order(self, columns: list[Column]) -> list[exp.Ordered]:
        q = self.q
        items: list[tuple[str, bool]] = [(m, d == "desc") for m, d in q.order]
        if not q.order_given:
            granular = next((td for td, _ in self.tds if td.granularity), None)
            if granular is not None:
                items = [(granular.dimension, False)]
            elif self.measures and self.dims:
                items = [(self.measures[0][0], True)]
            elif self.dims:
                items = [(self.dims[0][0], False)]
        dims = [c for c in columns if c.kind != "measure"]
        out = []
        for member, desc in items:
            index = next((i for i, c in enumerate(columns)
                          if (c.kind == "dimension" and c.key == member) or
                          (c.kind == "time" and (c.extra_key == member or c.key == member or
                                                 c.key.rsplit(".", 1)[0] == member))), None)
            if index is None:
                index = next((len(dims) + i for i, (p, _) in enumerate(self.measures) if p == member), None)
            if index is not None:
                out.append(exp.Ordered(this=exp.Literal.number(index + 1), desc=desc, nulls_first=desc))
        return out

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


def compile_query(query: CubeQuery | dict[str, Any] | str, model: SemanticModel,
                  today: date | datetime | None = None, default_limit: int = DEFAULT_LIMIT,
                  row_cap: int = ROW_CAP, rollups: Mapping[str, str] | None = None) -> Compiled:
    """Compile a Cube query against ``model`` to PostgreSQL (``$n`` bind parameters in ``.params``).
    ``rollups`` (pre-aggregation path -> built table) lets a matching rollup answer the query."""
    return _Compiler(model, CubeQuery.parse(query), today, default_limit, row_cap, rollups).compile()


def compile_rollup(pre: PreAggregation, model: SemanticModel) -> str:
    """The SELECT whose rows are the rollup table of ``pre`` (no order, no limit)."""
    query = _rollup_sql.build_query(pre)
    return _Compiler(model, query, None, DEFAULT_LIMIT, ROW_CAP, build=pre).compile().sql

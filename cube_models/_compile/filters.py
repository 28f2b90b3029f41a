"""The built-in compiler's filters phase: Cube filter operators as conditions (bind parameters for every
value), filter groups, WHERE (date ranges, segments, dimension filters) and HAVING (measure filters)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from cube_models._compile.sql import (
    TIMESTAMPTZ,
)
from cube_models.dates import filter_bound, resolve_date_range
from cube_models.errors import QueryError
from cube_models.model import Dimension, Measure
from cube_models.query import DATE_OPERATORS, Filter, FilterGroup

if TYPE_CHECKING:
    from cube_models._compile.state import CompilerState


class FiltersPhase:
    """WHERE and HAVING of a query (mixed into ``cube_models.compiler._Compiler``)."""

    def condition(self: CompilerState, column: exp.Expr, f: Filter, is_time: bool) -> exp.Expr:
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

    def _date_condition(self: CompilerState, column: exp.Expr, op: str, non_null: list[str], is_time: bool) -> exp.Expr:
        start = filter_bound(non_null[0], False)
        end = filter_bound(non_null[1], True) if len(non_null) > 1 else None

        def ts(value: str | None) -> exp.Expr:
            p = self.param(f"{value}Z")
            return p if not is_time else exp.Cast(this=p, to=TIMESTAMPTZ.copy())

        if op in ("inDateRange", "onTheDate"):
            return exp.and_(
                exp.GTE(this=column.copy(), expression=ts(start)), exp.LTE(this=column.copy(), expression=ts(end))
            )
        if op == "notInDateRange":
            return exp.or_(
                exp.LT(this=column.copy(), expression=ts(start)), exp.GT(this=column.copy(), expression=ts(end))
            )
        cls = {"beforeDate": exp.LT, "beforeOrOnDate": exp.LTE, "afterDate": exp.GT, "afterOrOnDate": exp.GTE}[op]
        return cls(this=column.copy(), expression=ts(start))

    def _equality(
        self: CompilerState, column: exp.Expr, positive: bool, values: list[str | None], non_null: list[str]
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

    def _like(self: CompilerState, column: exp.Expr, op: str, non_null: list[str], has_null: bool) -> exp.Expr:
        negated = op.startswith("not")
        kind = op[3:].lower() if negated else op.lower()
        likes = []
        for value in non_null:
            pattern: exp.Expr = self.param(
                value.replace("%", "\\%").replace("_", "\\_") if "contains" in kind else value
            )
            if kind in ("contains", "endswith"):
                pattern = exp.DPipe(this=exp.Literal.string("%"), expression=pattern)
            if kind in ("contains", "startswith"):
                pattern = exp.DPipe(this=pattern, expression=exp.Literal.string("%"))
            like = exp.ILike(this=column.copy(), expression=pattern)
            likes.append(exp.not_(like) if negated else like)
        joined = exp.and_(*likes) if negated else exp.or_(*likes)
        return _or_null(column, joined, not has_null if negated else has_null)

    def filter_expr(
        self: CompilerState, f: Filter | FilterGroup, measures: bool, rendered: dict[str, exp.Expr]
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

    def _filter_kinds(self: CompilerState, f: Filter | FilterGroup) -> set[bool]:
        if isinstance(f, FilterGroup):
            kinds: set[bool] = set()
            for item in f.items:
                kinds |= self._filter_kinds(item)
            if len(kinds) > 1:
                raise QueryError(f"an '{f.op}' filter group cannot mix measures and dimensions")
            return kinds
        member = self._get(self.model.resolve_path(f.member), (Measure, Dimension), "filters")
        return {isinstance(member, Measure)}

    def _where(self: CompilerState, date_ranges: bool = True) -> list[exp.Expr]:
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

    def _having(self: CompilerState, rendered: dict[str, exp.Expr]) -> list[exp.Expr]:
        return [c for c in (self.filter_expr(f, True, rendered) for f in self.q.filters) if c is not None]


def _or_null(column: exp.Expr, expr: exp.Expr, add: bool) -> exp.Expr:
    """``expr OR column IS NULL`` when ``add``."""
    return exp.or_(expr, exp.Is(this=column.copy(), expression=exp.Null())) if add else expr

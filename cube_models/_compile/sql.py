"""What the built-in compiler's phases share: its result (:class:`Compiled`, :class:`Column`), Cube-shaped
values, and small SQL pieces (aliases, UTC time columns, cached table names and parsed model SQL)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from cube_models._refs import to_placeholders
from cube_models.dates import fmt

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
        return int(value) if value == value.to_integral_value() and _whole_exponent(value) else float(value)
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

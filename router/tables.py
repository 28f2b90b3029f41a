"""Result tables: one shape (columns + rows) for Cube rows (dicts, numbers as strings) and SQL rows."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass
class ResultTable:
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "rows": [[jsonable(v) for v in r] for r in self.rows]}

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]


def jsonable(value: Any) -> Any:
    """Plain JSON value: Decimal -> float, dates -> ISO strings (midnight timestamps as dates)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value) if value.lstrip("-").isdigit() else float(value)
        except ValueError:
            return value
    return value


LABEL_COLUMNS = frozenset({"period"})  # labels the aggregate path adds ("2024", "this month"): text, not numbers


def table_from_rows(rows: Any, columns: list[str] | None = None) -> ResultTable:
    """Normalise list-of-dicts (Cube) or list-of-lists rows; numeric strings become numbers (not labels)."""
    rows = list(rows or [])
    if rows and isinstance(rows[0], dict):
        cols = columns or _without_plain_time_twins(list(rows[0].keys()))
        return ResultTable(cols, [[r.get(c) if c in LABEL_COLUMNS else _number(r.get(c)) for c in cols] for r in rows])
    return ResultTable(list(columns or []), [[_number(v) for v in r] for r in rows])


GRANULARITIES = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")


def _without_plain_time_twins(keys: list[str]) -> list[str]:
    """Cube returns a time dimension twice ("invoices.issued_at.month" and "invoices.issued_at"); keep the first."""
    grained = {k.rsplit(".", 1)[0] for k in keys if k.count(".") >= 2 and k.rsplit(".", 1)[1] in GRANULARITIES}
    return [k for k in keys if k not in grained]

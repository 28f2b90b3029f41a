"""The answer table as people read it: column titles, kinds and formats from the model, the display text
of every cell (time values by granularity, numbers by their Cube format) and CSV.

The raw rows stay as they are (the regression suite and API clients compare them); ``view`` adds what a
page or a console needs to show them, and ``to_csv`` writes them for a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any, Literal

from answer.formatting import fmt_measure, fmt_period, fmt_value, grain_of, is_number, label
from answer.vocabulary import vocabulary
from router.tables import ResultTable, jsonable

Kind = Literal["time", "number", "text"]
_TIME_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:.]+)?$")


@dataclass(frozen=True)
class Column:
    name: str  # the result column ("invoices.issued_at.month", "invoice_id")
    title: str  # what a header shows ("Issue date (month)", "开票时间（月）")
    kind: Kind
    grain: str | None = None  # time columns by granularity
    format: str | None = None  # "percent" | "currency" | "id" | None


def _values(table: ResultTable, i: int) -> list[Any]:
    return [r[i] for r in table.rows if r[i] is not None]


def _kind(table: ResultTable, i: int) -> Kind:
    name, values = table.columns[i], _values(table, i)
    if grain_of(name) or vocabulary().member_type(name) == "time":
        return "time"
    if values and all(is_number(v) for v in values):
        return "number"
    if values and all(_TIME_VALUE.match(str(jsonable(v))) for v in values):
        return "time"
    return "text"


def column_format(name: str) -> str | None:
    """The display format of a column: its Cube format, "percent" for derived shares, "id" (as written) for
    keys and years."""
    vocab = vocabulary()
    if fmt := vocab.member_format(name):
        return fmt
    if name.endswith(".share"):
        return "percent"
    return "id" if vocab.is_key(name) or name in vocab.years else None


def title(name: str, language: str) -> str:
    """A header: the column's label with a capital first letter ("late rate" -> "Late rate")."""
    text = label(name, language)
    return text[:1].upper() + text[1:]


def describe(table: ResultTable, language: str) -> list[Column]:
    return [
        Column(
            name,
            title(name, language),
            kind := _kind(table, i),
            grain_of(name) if kind == "time" else None,
            column_format(name) if kind == "number" else None,
        )
        for i, name in enumerate(table.columns)
    ]


def cell(value: Any, column: Column) -> str:
    """One cell as shown: time by granularity (2024-01, 2024-Q1, 2024-W05, 2024-01-15), numbers by format."""
    if value is None:
        return ""
    if column.kind == "time":
        return fmt_period(value, column.grain, "en")
    if is_number(value):
        return (
            str(int(value))
            if column.format == "id" and float(value).is_integer()
            else fmt_measure(value, column.format)
        )
    return fmt_value(value)


def view(
    table: ResultTable, language: str, *, truncated: bool = False, total_rows: int | None = None
) -> dict[str, Any]:
    """The table of an answer: raw ``columns``/``rows`` plus ``labels``, ``formats``, ``kinds``, ``grains``,
    ``display`` (the text of every cell), ``row_count``, ``truncated`` (the query's row limit was hit) and
    ``total_rows`` (the rows there are when truncated; None when not truncated or not countable)."""
    columns = describe(table, language)
    return {
        **table.to_dict(),
        "labels": [c.title for c in columns],
        "formats": [c.format for c in columns],
        "kinds": [c.kind for c in columns],
        "grains": [c.grain for c in columns],
        "display": [[cell(v, c) for v, c in zip(row, columns, strict=False)] for row in table.rows],
        "row_count": len(table.rows),
        "truncated": truncated,
        "total_rows": total_rows if truncated else None,
    }


def to_csv(shown: dict[str, Any]) -> str:
    """CSV of a ``view``: the titles as header, time values as shown, numbers and text raw."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(shown.get("labels") or shown["columns"])
    kinds = shown.get("kinds") or ["text"] * len(shown["columns"])
    display = shown.get("display") or shown["rows"]
    for raw, text in zip(shown["rows"], display, strict=True):
        writer.writerow(
            [t if k == "time" else ("" if v is None else v) for v, t, k in zip(raw, text, kinds, strict=False)]
        )
    return out.getvalue()


@dataclass(frozen=True)
class Parts:
    """The columns of a table by role: the time dimension by granularity, the compared ``period``, the
    dimensions (text and key columns), the measures and the shares of the total."""

    columns: list[Column]
    time: int | None
    period: int | None
    dims: list[int]
    measures: list[int]
    shares: list[int]


def parts_of(table: ResultTable, language: str) -> Parts:
    columns = describe(table, language)
    period = table.columns.index("period") if "period" in table.columns else None
    time = next((i for i, c in enumerate(columns) if c.kind == "time" and c.grain), None)
    numbers = [i for i, c in enumerate(columns) if c.kind == "number" and c.format != "id"]
    shares = [i for i in numbers if table.columns[i].endswith(".share")]
    dims = [i for i, c in enumerate(columns) if i != period and (c.kind == "text" or c.format == "id")]
    return Parts(columns, time, period, _named(table, dims), [i for i in numbers if i not in shares], shares)


def _named(table: ResultTable, dims: list[int]) -> list[int]:
    """The dimensions that name the groups: a key beside another dimension of its cube (a player's id beside
    the player's name) is left to the table."""

    def cube(i: int) -> str:
        return table.columns[i].split(".", 1)[0]

    keys = [i for i in dims if vocabulary().is_key(table.columns[i])]
    return [i for i in dims if i not in keys or not any(j != i and j not in keys and cube(j) == cube(i) for j in dims)]

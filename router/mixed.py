"""Mixed path: an aggregate result and detail rows joined on a shared entity key, or linked sections.

"top 5 suppliers by turnover and their complaint reasons": the aggregate ranks suppliers; the detail
rows (complaints about those suppliers) are summarised per supplier and joined onto the ranking, so the answer
keeps one row per aggregate row. When no column links the two, both are returned as sections.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from router.detail.schema import DetailCatalog
from router.tables import ResultTable


@dataclass(frozen=True)
class JoinColumns:
    """What joins an aggregate to detail rows (``join_columns`` reads them from the detail catalog): columns
    that name a row of an entity table (labels, then keys), and columns whose few values summarise rows."""

    entity: tuple[str, ...] = ()
    summary: tuple[str, ...] = ()


def join_columns(catalog: DetailCatalog) -> JoinColumns:
    """The entity tables' name columns and keys; the columns the catalog knows values of (model order)."""
    names = [c for spec in catalog.entity_tables for c in spec.name_columns]
    keys = [spec.key for spec in catalog.entity_tables]
    return JoinColumns(tuple(dict.fromkeys([*names, *keys])), tuple(dict.fromkeys(w.column for w in catalog.values)))


@dataclass
class MixedResult:
    table: ResultTable
    join: dict[str, str] | None  # {"aggregate": column, "detail": column} when joined
    sections: list[dict[str, Any]] = field(default_factory=list)


def join_keys(
    aggregate: ResultTable, detail_columns: Sequence[str], columns: JoinColumns
) -> tuple[str, str, str | None] | None:
    """(aggregate column, detail column, summary column or None) that join ``aggregate`` to detail rows with
    ``detail_columns``; None when no entity column links them."""
    named = [c for c in aggregate.columns if c.rsplit(".", 1)[-1] in columns.entity]
    named.sort(key=lambda c: columns.entity.index(c.rsplit(".", 1)[-1]))  # a name before a key shown beside it
    agg_col = next((c for c in named if c.rsplit(".", 1)[-1] in detail_columns), None)
    if agg_col is None:
        return None
    return agg_col, agg_col.rsplit(".", 1)[-1], next((c for c in columns.summary if c in detail_columns), None)


def join_results(
    aggregate: ResultTable,
    detail: ResultTable,
    columns: JoinColumns,
    *,
    language: str = "en",
    covered_rows: int | None = None,
    counts: Sequence[tuple[Any, ...]] | None = None,
) -> MixedResult:
    """Summarise ``detail`` per entity key and join it onto ``aggregate`` (left join, order kept).

    ``counts`` are the detail query's rows per (entity key, summary value), counted in SQL
    (``router.detail.counts.count_groups``): given, they are the summary, so a capped detail query still
    counts every row; without them the fetched rows are counted. Only the first ``covered_rows`` aggregate
    rows had their detail looked up; later rows get empty cells.
    """
    sections = [{"kind": "aggregate", **aggregate.to_dict()}, {"kind": "detail", **detail.to_dict()}]
    keys = join_keys(aggregate, detail.columns, columns)
    if keys is None:
        return MixedResult(table=aggregate, join=None, sections=sections)
    agg_col, det_col, summary_col = keys
    tallies = _tallies(detail, det_col, summary_col) if counts is None else _from_counts(counts)
    count_name = "detail_rows" if language == "en" else "明细条数"
    joined_columns = [*aggregate.columns, count_name]
    if summary_col:
        joined_columns.append(f"{summary_col}_counts" if language == "en" else f"{summary_col}分布")
    a_key = aggregate.columns.index(agg_col)
    rows = []
    for index, row in enumerate(aggregate.rows):
        if covered_rows is not None and index >= covered_rows:
            rows.append([*row, None] + ([None] if summary_col else []))
            continue
        tally = tallies.get(_norm(row[a_key]), Counter())
        out = [*row, sum(tally.values())]
        if summary_col:
            out.append(", ".join(f"{v} ({n})" for v, n in tally.most_common()))
        rows.append(out)
    return MixedResult(
        table=ResultTable(joined_columns, rows), join={"aggregate": agg_col, "detail": det_col}, sections=sections
    )


def _tallies(detail: ResultTable, det_col: str, summary_col: str | None) -> dict[Any, Counter[str]]:
    """Fetched detail rows per entity key: summary value -> rows."""
    d_key = detail.columns.index(det_col)
    s_idx = detail.columns.index(summary_col) if summary_col else None
    out: dict[Any, Counter[str]] = {}
    for row in detail.rows:
        out.setdefault(_norm(row[d_key]), Counter())[str(row[s_idx]) if s_idx is not None else ""] += 1
    return out


def _from_counts(counts: Sequence[tuple[Any, ...]]) -> dict[Any, Counter[str]]:
    """Rows counted in SQL, (key, n) or (key, summary value, n), as :func:`_tallies` gives them."""
    out: dict[Any, Counter[str]] = {}
    for key, *summary, n in counts:
        out.setdefault(_norm(key), Counter())[str(summary[0]) if summary else ""] += int(n)
    return out


def _norm(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value

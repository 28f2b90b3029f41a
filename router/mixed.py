"""Mixed path: an aggregate result and detail rows joined on a shared entity key, or linked sections.

"top 5 products by GMV and their refund reasons": the aggregate ranks products; the detail rows
(refunds of those products) are summarised per product and joined onto the ranking, so the answer
keeps one row per aggregate row. When no column links the two, both are returned as sections.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from router.tables import ResultTable

# aggregate dimension name endings -> detail column carrying the same entity
ENTITY_KEYS: tuple[tuple[str, str, str], ...] = (
    ("product_name", "product_name", "product"),
    ("customer_name", "customer_name", "customer"),
    ("name_en", "name_en", "region"),
    ("name_zh", "name_zh", "region"),
    ("product_id", "product_id", "product"),
    ("customer_id", "customer_id", "customer"),
)
SUMMARY_COLUMNS = ("reason", "method", "status", "channel", "segment", "category")


@dataclass
class MixedResult:
    table: ResultTable
    join: dict[str, str] | None  # {"aggregate": column, "detail": column} when joined
    sections: list[dict[str, Any]] = field(default_factory=list)


def entity_key(aggregate: ResultTable) -> tuple[str, str, str] | None:
    """(aggregate column, detail column, entity type) of the first entity dimension in the aggregate."""
    for column in aggregate.columns:
        for suffix, detail_column, etype in ENTITY_KEYS:
            if column == suffix or column.endswith("." + suffix):
                return column, detail_column, etype
    return None


def summary_column(detail: ResultTable) -> str | None:
    """The detail column a mixed answer summarises per entity ("reason": "damaged (3), other (1)")."""
    return next((c for c in SUMMARY_COLUMNS if c in detail.columns), None)


def join_results(aggregate: ResultTable, detail: ResultTable, *, language: str = "en",
                 covered_rows: int | None = None, counts: Sequence[tuple[Any, ...]] | None = None) -> MixedResult:
    """Summarise ``detail`` per entity key and join it onto ``aggregate`` (left join, order kept).

    ``counts`` are the detail query's rows per (entity key, summary value), counted in SQL
    (``router.detail.counts.count_groups``): given, they are the summary, so a capped detail query still
    counts every row; without them the fetched rows are counted. Only the first ``covered_rows`` aggregate
    rows had their detail looked up; later rows get empty cells.
    """
    sections = [{"kind": "aggregate", **aggregate.to_dict()}, {"kind": "detail", **detail.to_dict()}]
    key = entity_key(aggregate)
    if key is None or key[1] not in detail.columns:
        return MixedResult(table=aggregate, join=None, sections=sections)
    agg_col, det_col, _ = key
    summary_col = summary_column(detail)
    tallies = _tallies(detail, det_col, summary_col) if counts is None else _from_counts(counts)
    count_name = "detail_rows" if language == "en" else "明细条数"
    columns = [*aggregate.columns, count_name]
    if summary_col:
        columns.append(f"{summary_col}_counts" if language == "en" else f"{summary_col}分布")
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
    return MixedResult(table=ResultTable(columns, rows), join={"aggregate": agg_col, "detail": det_col},
                       sections=sections)


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

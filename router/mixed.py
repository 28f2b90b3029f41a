"""Mixed path: an aggregate result and detail rows joined on a shared entity key, or linked sections.

"top 5 products by GMV and their refund reasons": the aggregate ranks products; the detail rows
(refunds of those products) are summarised per product and joined onto the ranking, so the answer
keeps one row per aggregate row. When no column links the two, both are returned as sections.
"""

from __future__ import annotations

from collections import Counter
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


def join_results(aggregate: ResultTable, detail: ResultTable, *, language: str = "en",
                 covered_rows: int | None = None) -> MixedResult:
    """Summarise ``detail`` per entity key and join it onto ``aggregate`` (left join, order kept).

    Only the first ``covered_rows`` aggregate rows had their detail looked up; later rows get empty cells.
    """
    sections = [{"kind": "aggregate", **aggregate.to_dict()}, {"kind": "detail", **detail.to_dict()}]
    key = entity_key(aggregate)
    if key is None or key[1] not in detail.columns:
        return MixedResult(table=aggregate, join=None, sections=sections)
    agg_col, det_col, _ = key
    summary_col = next((c for c in SUMMARY_COLUMNS if c in detail.columns), None)
    d_key = detail.columns.index(det_col)
    groups: dict[Any, list[list[Any]]] = {}
    for row in detail.rows:
        groups.setdefault(_norm(row[d_key]), []).append(row)
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
        matched = groups.get(_norm(row[a_key]), [])
        out = [*row, len(matched)]
        if summary_col:
            s_idx = detail.columns.index(summary_col)
            counts = Counter(str(r[s_idx]) for r in matched)
            out.append(", ".join(f"{v} ({n})" for v, n in counts.most_common()))
        rows.append(out)
    return MixedResult(table=ResultTable(columns, rows), join={"aggregate": agg_col, "detail": det_col},
                       sections=sections)


def _norm(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value

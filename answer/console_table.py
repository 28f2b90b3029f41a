"""An answer table on the console (rich): the cells as the answer shows them, and a line saying how many
rows are left out when not all are printed."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def rich_table(shown: dict[str, Any], max_rows: int | None = 50) -> tuple[Table, str]:
    """The first ``max_rows`` rows of an answer table (all when None) and the note on the rows left out
    ("showing 12 of 31 rows; --all prints every row"), or on rows the query's limit cut off."""
    columns = list(shown.get("columns") or [])
    view = Table(*(shown.get("labels") or columns))
    kinds = shown.get("kinds") or []
    for i, column in enumerate(view.columns):
        if i < len(kinds) and kinds[i] == "number":
            column.justify = "right"
    display = shown.get("display") or [["" if v is None else str(v) for v in r] for r in shown.get("rows") or []]
    rows = display if max_rows is None else display[:max_rows]
    for row in rows:
        view.add_row(*row)
    total = int(shown.get("row_count") or len(display))
    notes = []
    if len(rows) < total:
        notes.append(f"showing {len(rows):,} of {total:,} rows; --all prints every row")
    if shown.get("truncated"):
        there = shown.get("total_rows")
        notes.append(
            f"the query stopped at its row limit: {total:,} of {there:,} rows"
            if there is not None
            else f"the query stopped at its row limit ({total:,} rows): there are more"
        )
    return view, "; ".join(notes)

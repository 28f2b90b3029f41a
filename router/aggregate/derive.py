"""Post-query derivations: rows of compared periods merged (with a ``period`` column) and their change,
and shares of the total ("share of GMV by channel")."""

from __future__ import annotations

from typing import Any

from router.aggregate.types import CubeQueryDraft


def _number(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def _shares(rows: list[dict[str, Any]], measures: list[str]) -> dict[str, Any]:
    totals = {}
    for measure in measures:
        values = [_number(r.get(measure)) for r in rows]
        total = sum(v for v in values if v is not None)
        totals[measure] = total
        for row, value in zip(rows, values, strict=True):
            row[f"{measure}.share"] = None if value is None or not total else value / total
    return {"totals": totals}


def _changes(draft: CubeQueryDraft, results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Current vs previous (first two periods) per group (dimension values) and measure."""
    dims = list(draft.query.get("dimensions", []))

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row.get(d) for d in dims)

    previous = {key(r): r for r in results[1]}
    changes = []
    for row in results[0]:
        other = previous.get(key(row))
        if other is None:
            continue
        for measure in draft.measures:
            cur, prev = _number(row.get(measure)), _number(other.get(measure))
            if cur is None or prev is None:
                continue
            changes.append({**{d: row.get(d) for d in dims}, "measure": measure, "current": cur, "previous": prev,
                            "change": cur - prev, "change_pct": (cur - prev) / prev if prev else None})
    return changes


def combine(draft: CubeQueryDraft, results: list[list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    derived: dict[str, Any] = {}
    if len(results) == 1:
        rows = [dict(r) for r in results[0]]
    else:
        rows = [{"period": label, **r} for label, part in zip(draft.labels, results, strict=True) for r in part]
        derived["comparison"] = draft.comparison
        derived["periods"] = [{"label": label, "dateRange": (q.get("timeDimensions") or [{}])[0].get("dateRange")}
                              for label, q in zip(draft.labels, draft.queries, strict=True)]
        if not any(t.get("granularity") for t in draft.query.get("timeDimensions", [])):
            derived["changes"] = _changes(draft, results)
    if "share" in draft.post and len(results) == 1:
        derived["share"] = _shares(rows, draft.measures)
    return rows, derived

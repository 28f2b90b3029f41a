"""Post-query derivations: rows of measure groups merged on their dimension (and time) values, rows of
compared periods stacked (with a ``period`` column) and their change, and shares of the total."""

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


def shares_of_total(queries: list[dict[str, Any]], notes: list[str], mode: str = "fast") -> CubeQueryDraft | None:
    """The draft of a share asked of a limited ranking ("the top 5 and their share"): the ranking, then the same
    query over every group (no groups, no limit), which the shares are of; None unless there is one grouped,
    limited query."""
    if len(queries) != 1 or not queries[0].get("limit") or not queries[0].get("dimensions"):
        return None
    ranked = queries[0]
    grouped = set(ranked["dimensions"])
    total = {k: v for k, v in ranked.items() if k not in ("dimensions", "limit", "order", "filters")}
    filters = [f for f in ranked.get("filters") or [] if f.get("member") not in grouped]
    if filters:
        total["filters"] = filters
    return CubeQueryDraft([ranked, total], ["", ""], None, ["share_of_total"], notes, mode=mode)


def _shares_of_total(
    measures: list[str], ranked: list[dict[str, Any]], total: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The shares of a limited ranking ("the 5 biggest customers and their share"): each row over the total of
    every group (the second query), not over the rows shown; ``together``: the shown rows' share combined."""
    rows = [dict(r) for r in ranked]
    totals = {m: _number(total[0].get(m)) if total else None for m in measures}
    together: dict[str, float | None] = {}
    for measure in measures:
        whole = totals[measure]
        values = [_number(r.get(measure)) for r in rows]
        for row, value in zip(rows, values, strict=True):
            row[f"{measure}.share"] = None if value is None or not whole else value / whole
        shown = sum(v for v in values if v is not None)
        together[measure] = shown / whole if whole else None
    return rows, {"share": {"totals": totals, "together": together, "shown": len(rows)}}


def _time_key(query: dict[str, Any]) -> str | None:
    for td in query.get("timeDimensions", []):
        if td.get("granularity"):
            return f"{td['dimension']}.{td['granularity']}"
    return None


def merge_groups(queries: list[dict[str, Any]], results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows of measure-group queries of one period joined on dimension values and the time bucket.

    The first query's rows lead (their order and, when it has a limit, their set of keys); rows of the
    other groups with a new key are appended only when the first query has no limit.
    """
    dims = list(queries[0].get("dimensions", []))
    lead_time = _time_key(queries[0])
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for index, (query, rows) in enumerate(zip(queries, results, strict=True)):
        time_key = _time_key(query)
        for row in rows:
            key = (*(row.get(d) for d in dims), str(row.get(time_key))[:10] if time_key else None)
            if key not in merged:
                if index and queries[0].get("limit"):
                    continue
                lead = {lead_time: row.get(time_key) if time_key else None} if lead_time else {}
                merged[key] = {**{d: row.get(d) for d in dims}, **lead}
            merged[key].update({m: row.get(m) for m in query.get("measures", [])})
    return list(merged.values())


def _period_start(query: dict[str, Any]) -> str:
    date_range = (query.get("timeDimensions") or [{}])[0].get("dateRange") or [""]
    return str(date_range[0] if isinstance(date_range, list) else date_range)


def _changes(draft: CubeQueryDraft, results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The later of the first two periods vs the earlier one, per group (dimension values) and measure:
    "Q1 vs Q2" and "this year vs last year" both state the change from the earlier period to the later
    (``current_period``/``previous_period`` name them)."""
    dims = list(draft.query.get("dimensions", []))
    later, earlier = (0, 1) if _period_start(draft.queries[0]) >= _period_start(draft.queries[1]) else (1, 0)

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row.get(d) for d in dims)

    previous = {key(r): r for r in results[earlier]}
    changes = []
    for row in results[later]:
        other = previous.get(key(row))
        if other is None:
            continue
        for measure in draft.measures:
            cur, prev = _number(row.get(measure)), _number(other.get(measure))
            if cur is None or prev is None:
                continue
            changes.append(
                {
                    **{d: row.get(d) for d in dims},
                    "measure": measure,
                    "current": cur,
                    "previous": prev,
                    "change": cur - prev,
                    "change_pct": (cur - prev) / prev if prev else None,
                    "current_period": draft.labels[later],
                    "previous_period": draft.labels[earlier],
                }
            )
    return changes


def _part_of_whole(
    draft: CubeQueryDraft, results: list[list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A share of a part (query 1) in the whole (query 2): the part's rows with ``<measure>.share``; grouped,
    each group's part over the same group's whole."""
    part, whole = results[0], results[1]
    measures, grouped = draft.query.get("measures", []), draft.query.get("dimensions", [])
    wholes = {tuple(str(r.get(d)) for d in grouped): r for r in whole}
    rows = [dict(r) for r in part]
    for row in rows:
        own = wholes.get(tuple(str(row.get(d)) for d in grouped), {})
        for measure in measures:
            value, total = _number(row.get(measure)), _number(own.get(measure))
            row[f"{measure}.share"] = None if value is None or not total else value / total
    totals = {m: _number(whole[0].get(m)) if whole and not grouped else None for m in measures}
    return _share_ranked(rows, draft.post, measures), {"share": {"totals": totals, "part_of_whole": True}}


def _share_ranked(rows: list[dict[str, Any]], post: list[str], measures: list[str]) -> list[dict[str, Any]]:
    """The groups ordered by the first measure's share and cut to the asked number (``share_rank:desc:1``)."""
    rank = next((p.split(":") for p in post if p.startswith("share_rank:")), None)
    if rank is None or not measures:
        return rows
    key = f"{measures[0]}.share"
    known = sorted((r for r in rows if r.get(key) is not None), key=lambda r: r[key], reverse=rank[1] == "desc")
    return known[: int(rank[2])]


def _members_of_whole(
    draft: CubeQueryDraft, results: list[list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Shares of compared members (one query each) in the whole (the last query): one row per member."""
    whole = results[-1][0] if results[-1] else {}
    measures = draft.query.get("measures", [])
    rows = []
    for label, part in zip(draft.labels, results[:-1], strict=False):
        for row in part:
            shared = {"period": label, **row}
            for measure in measures:
                value, total = _number(row.get(measure)), _number(whole.get(measure))
                shared[f"{measure}.share"] = None if value is None or not total else value / total
            rows.append(shared)
    totals = {m: _number(whole.get(m)) for m in measures}
    return rows, {"share": {"totals": totals, "part_of_whole": True}, "comparison": "members"}


def combine(draft: CubeQueryDraft, results: list[list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of a draft's queries as one answer (periods side by side, shares, a part of its whole), each
    measure in the unit the question asked (``draft.units``: its column is ``<measure>.<unit>``), a measure
    per row of another cube as their ratio (``draft.per``: ``<measure>.per.<cube>``)."""
    if draft.per:
        results = [[_per_row(row, draft.per, draft.measures) for row in part] for part in results]
    if not draft.units:
        return _combined(draft, results)
    scaled = [
        [{k: _scaled(v, draft.units[k][1]) if k in draft.units else v for k, v in row.items()} for row in part]
        for part in results
    ]
    rows, derived = _combined(draft, scaled)
    names = {m: f"{m}.{unit}" for m, (unit, _) in draft.units.items()}
    return [{names.get(k, k): v for k, v in row.items()} for row in rows], derived


def _per_row(row: dict[str, Any], per: str, measures: list[str]) -> dict[str, Any]:
    """Every other measure of the row over ``per`` (its row count), in place of both."""
    count = _number(row.get(per))
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in measures and key != per:
            number = _number(value)
            out[f"{key}.per.{per.split('.', 1)[0]}"] = None if number is None or not count else number / count
        elif key != per:
            out[key] = value
    return out


def _scaled(value: Any, factor: float) -> Any:
    try:
        return None if value is None else float(value) * factor
    except (TypeError, ValueError):
        return value


def _combined(
    draft: CubeQueryDraft, results: list[list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if "part" in draft.post and draft.comparison == "members":
        return _members_of_whole(draft, results)
    if "part" in draft.post and len(results) == 2:
        return _part_of_whole(draft, results)
    if "share_of_total" in draft.post and len(results) == 2:
        return _shares_of_total(draft.query.get("measures", []), results[0], results[1])
    derived: dict[str, Any] = {}
    if draft.groups > 1:
        size = draft.groups
        results = [
            merge_groups(draft.queries[i : i + size], results[i : i + size]) for i in range(0, len(results), size)
        ]
        merged_queries = [{**q, "measures": draft.measures} for q in draft.queries[::size]]
        draft = CubeQueryDraft(merged_queries, draft.labels[::size], draft.comparison, draft.post, keep=draft.keep)
    if len(results) == 1:
        rows = [dict(r) for r in results[0]]
    else:
        rows = [{"period": label, **r} for label, part in zip(draft.labels, results, strict=True) for r in part]
        derived["comparison"] = draft.comparison
        derived["periods"] = [
            {"label": label, "dateRange": (q.get("timeDimensions") or [{}])[0].get("dateRange")}
            for label, q in zip(draft.labels, draft.queries, strict=True)
        ]
        if draft.comparison != "members" and not any(
            t.get("granularity") for t in draft.query.get("timeDimensions", [])
        ):
            derived["changes"] = _changes(draft, results)
    if "share" in draft.post and len(results) == 1:
        derived["share"] = _shares(rows, draft.measures)
        rows = _kept(rows, draft.keep)
    return rows, derived


def _kept(rows: list[dict[str, Any]], keep: dict[str, list[str]]) -> list[dict[str, Any]]:
    """ "share of revenue from the USA": every share is computed, the rows of the named values are shown."""
    wanted = {member: {str(v).lower() for v in values} for member, values in keep.items()}
    return [r for r in rows if all(str(r.get(m)).lower() in vs for m, vs in wanted.items())] if wanted else rows

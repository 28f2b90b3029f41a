"""Token budget (tiktoken): split a budget over six categories, prune inside each, render the context.

Shares of the seed: tables 30, columns 25, metrics 15, few-shots 10, join rules 10,
business rules 10 percent. Items of a category are taken by priority (bound >
certified > others, then score) while they fit; the budget a category does not
use flows to the categories that still have items, in proportion to their shares.
Few-shots are capped by question complexity (simple 2 / medium 4 / complex 6).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from cubesage_core.tokens import count_tokens
from fourengine.models import ContextBlock, FewShot, JoinPlan, RankedAsset, TermBinding
from fourengine.settings import RetrievalSettings

CATEGORY_OF = {
    "table": "tables",
    "column": "columns",
    "dimension": "columns",
    "metric": "metrics",
    "segment": "metrics",
    "join": "join_rules",
    "business_rule": "business_rules",
    "term": "business_rules",
}
HEADINGS = {
    "tables": "## Tables",
    "columns": "## Columns and dimensions",
    "metrics": "## Metrics and segments",
    "few_shots": "## Approved examples",
    "join_rules": "## Join paths",
    "business_rules": "## Term bindings and business rules",
}


class BudgetError(ValueError):
    """Invalid budget configuration."""


@dataclass
class _Item:
    text: str
    tokens: int
    priority: tuple[float, ...]
    ref: str | None = None  # the asset id (or "few_shot:<id>") the line renders


def _asset_line(r: RankedAsset) -> str:
    a = r.asset
    label = a.name if not a.title or a.title == a.name else f"{a.name} ({a.title})"
    kind = f"[{a.meta['type']}] " if a.asset_type in {"column", "dimension"} and a.meta.get("type") else ""
    desc = f": {' '.join(a.description.split())}" if a.description else ""
    tag = " [bound]" if r.bound else (" [certified]" if a.certified else "")
    return f"- {kind}{label}{tag}{desc}"


def _items(
    assets: list[RankedAsset],
    bindings: list[TermBinding],
    few_shots: list[FewShot],
    plan: JoinPlan,
    n_shots: int,
) -> dict[str, list[_Item]]:
    cats: dict[str, list[_Item]] = {c: [] for c in HEADINGS}

    def add(cat: str, text: str, priority: tuple[float, ...], ref: str | None = None) -> None:
        cats[cat].append(_Item(text, count_tokens(text) + 1, priority, ref))

    for b in bindings:
        value = f" = {b.filter_value!r}" if b.filter_value else ""
        add("business_rules", f"- term {b.canonical_term!r} MUST use {b.mapped_asset_id}{value}", (3, 1.0))
    planned = set(plan.tables)
    for r in assets:
        cat = CATEGORY_OF.get(r.asset.asset_type)
        if cat is None or (cat == "join_rules" and plan.edges):
            continue
        if r.score < 0 and not r.bound and r.asset.asset_id not in planned:
            continue  # tail filled in from the join graph only to complete the ranking
        add(cat, _asset_line(r), (2 if r.bound else 1 if r.asset.certified else 0, r.score), r.asset.asset_id)
    for e in plan.edges:
        add(
            "join_rules", f"- {e.left} -> {e.right} ON {e.on_sql} ({e.relationship}, fan-out {e.fanout_risk})", (2, 1.0)
        )
    for shot in few_shots[:n_shots]:
        query = json.dumps(shot.cube_query, ensure_ascii=False) if shot.cube_query else shot.sql or ""
        add(
            "few_shots",
            f"Q: {shot.question}\nA: {query}",
            (1 if shot.cache_hit else 0, shot.similarity),
            f"few_shot:{shot.id}",
        )
    for items in cats.values():
        items.sort(key=lambda i: tuple(-p for p in i.priority))
    return cats


def _allocate(total: int, shares: dict[str, float], need: dict[str, int]) -> dict[str, int]:
    """Quota per category: shares of ``total``; surplus of satisfied categories flows to the others."""
    alloc = {c: 0 for c in shares}
    open_cats = {c for c in shares if need.get(c, 0) > 0}
    left = total
    while open_cats and left > 0:
        weight = sum(shares[c] for c in open_cats)
        grant = {c: int(left * shares[c] / weight) for c in open_cats}
        left = 0
        for c in list(open_cats):
            give = min(grant[c], need[c] - alloc[c])
            alloc[c] += give
            left += grant[c] - give
            if alloc[c] >= need[c]:
                open_cats.discard(c)
        if all(grant[c] == 0 for c in grant):
            break
    return alloc


def build_context(
    assets: list[RankedAsset],
    bindings: list[TermBinding],
    few_shots: list[FewShot],
    plan: JoinPlan,
    settings: RetrievalSettings,
    complexity: str = "medium",
) -> ContextBlock:
    if complexity not in settings.few_shots_by_complexity:
        raise BudgetError(f"complexity must be one of {sorted(settings.few_shots_by_complexity)}, got {complexity!r}")
    shares = settings.budget_shares
    if set(shares) != set(HEADINGS) or abs(sum(shares.values()) - 1.0) > 1e-6:
        raise BudgetError(f"budget shares must cover {sorted(HEADINGS)} and sum to 1")
    cats = _items(assets, bindings, few_shots, plan, settings.few_shots_by_complexity[complexity])
    headers = {c: count_tokens(HEADINGS[c]) + 1 for c in HEADINGS}
    need = {c: (sum(i.tokens for i in items) + headers[c]) if items else 0 for c, items in cats.items()}
    alloc = _allocate(settings.token_budget, shares, need)
    sections, used, dropped, included = [], {}, {}, []
    for cat, items in cats.items():
        room = alloc[cat] - headers[cat]
        kept = []
        for item in items:
            if item.tokens <= room:
                kept.append(item.text)
                included += [item.ref] if item.ref else []
                room -= item.tokens
        dropped[cat] = len(items) - len(kept)
        if kept:
            block = HEADINGS[cat] + "\n" + "\n".join(kept)
            sections.append(block)
            used[cat] = count_tokens(block)
        else:
            used[cat] = 0
    return ContextBlock(
        text="\n\n".join(sections),
        budget=settings.token_budget,
        tokens=used,
        allocated=alloc,
        dropped=dropped,
        included=included,
    )

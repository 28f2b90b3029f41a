"""Stage 1, term-binding boost: bound column/metric/dimension -> 0.95, its table +0.25 (a bound table
itself: +0.25), tables without a binding -0.10."""

from __future__ import annotations

from fourengine.models import table_of
from fourengine.rerank.base import RerankContext, RerankStage


class BindingBoost(RerankStage):
    name = "binding_boost"

    def apply(self, ctx: RerankContext) -> None:
        if not ctx.bindings:
            return
        s = ctx.settings
        boosted_tables: set[str] = set()
        for binding in ctx.bindings:
            ranked = ctx.candidates.get(binding.mapped_asset_id)
            if ranked is not None:
                ranked.bound = True
                if ranked.score < s.bound_score and ranked.asset.asset_type != "table":
                    ranked.score = s.bound_score
                ranked.reasons.append(f"bound by term {binding.canonical_term!r} -> {s.bound_score}")
                owner = ranked.asset.table_id
            else:
                owner = table_of(binding.mapped_asset_id, binding.mapped_asset_type, None)
            if owner and owner not in boosted_tables:
                table = ctx.table(owner, "binding")
                if table is not None:
                    boosted_tables.add(owner)
                    table.score += s.parent_table_boost
                    table.reasons.append(f"table of bound {binding.mapped_asset_id} +{s.parent_table_boost}")
                    if binding.mapped_asset_id == owner:
                        table.bound = True
        for ranked in ctx.candidates.values():
            if ranked.asset.asset_type == "table" and ranked.asset.asset_id not in boosted_tables:
                ranked.score -= s.unbound_table_penalty
                ranked.reasons.append(f"no bound asset -{s.unbound_table_penalty}")

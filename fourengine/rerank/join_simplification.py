"""Stage 4, join-path simplification: keep one (lowest fan-out) join per table pair, only joins of
the planned tree, rank the tree's bridge tables right behind the tables they connect, and append the
tables engine G reached within its depth (FK-graph expansion) behind everything found directly, then the
tables engine V saw below its admission threshold (by similarity). The tail completes the ranking; the
token budget leaves it out of the prompt."""

from __future__ import annotations

from fourengine.engines.graph import RISK_ORDER
from fourengine.rerank.base import RerankContext, RerankStage

BRIDGE_GAP = 0.01
NEIGHBOUR_SCORE = -1.0  # below any evidence: neighbours only fill the tail of the ranking
SIMILAR_SCORE = -2.0  # tables engine V saw below its threshold come last, by similarity


class JoinSimplification(RerankStage):
    name = "join_simplification"

    def apply(self, ctx: RerankContext) -> None:
        plan = ctx.join_plan
        planned = {frozenset((e.left, e.right)) for e in plan.edges}
        best: dict[frozenset[str], tuple[int, str]] = {}
        for asset_id, ranked in ctx.candidates.items():
            if ranked.asset.asset_type != "join":
                continue
            pair = frozenset((ranked.asset.meta.get("left_table", ""), ranked.asset.meta.get("right_table", "")))
            risk = RISK_ORDER.get(ranked.asset.meta.get("fanout_risk", "high"), 2)
            if pair not in best or risk < best[pair][0]:
                best[pair] = (risk, asset_id)
        keep = {asset_id for pair, (_, asset_id) in best.items() if pair in planned or not planned}
        for asset_id in [a for a, r in ctx.candidates.items() if r.asset.asset_type == "join" and a not in keep]:
            del ctx.candidates[asset_id]
        self._expand(ctx)
        terminals = [t for t in plan.tables if t not in plan.bridge_tables and t in ctx.candidates]
        if not terminals or not plan.bridge_tables:
            return
        floor = min(ctx.candidates[t].score for t in terminals) - BRIDGE_GAP
        for bridge in plan.bridge_tables:
            bridged = ctx.table(bridge, "G")
            if bridged is not None and bridged.score < floor:
                bridged.score = floor
                ranked.reasons.append(f"bridge table of the join tree -> {floor:.3f}")

    @staticmethod
    def _expand(ctx: RerankContext) -> None:
        for table_id, hops in sorted(ctx.join_plan.neighbours.items(), key=lambda kv: kv[1]):
            if hops and table_id not in ctx.candidates:
                ranked = ctx.table(table_id, "G")
                if ranked is not None:
                    ranked.score = NEIGHBOUR_SCORE - hops / 10
                    ranked.reasons.append(f"join-graph neighbour at {hops} hop(s)")
        for asset_id, similarity in ctx.similarity.items():
            if asset_id.startswith("table:") and asset_id not in ctx.candidates:
                ranked = ctx.table(asset_id, "V")
                if ranked is not None:
                    ranked.score = SIMILAR_SCORE + similarity / 10
                    ranked.reasons.append(f"similar below the threshold ({similarity:.3f})")

"""Stage 3, column pruning: keep bound, metric/dimension/filter, PK/FK and time columns of the
tables the query will use; drop the other columns (context compression). A metric or segment that
engine V found above its threshold is kept wherever its table ranks: it may be what the question asks."""

from __future__ import annotations

from fourengine.rerank.base import RerankContext, RerankStage

KEEP_TYPES = {"metric", "segment"}
COLUMN_TYPES = {"column", "dimension"}
TABLE_MARGIN = 0.25
MIN_COLUMN_SCORE = 0.5


def _structural(meta: dict) -> bool:
    return bool(meta.get("primary_key") or meta.get("foreign_key") or meta.get("type") == "time")


class ColumnPruning(RerankStage):
    name = "column_pruning"

    def apply(self, ctx: RerankContext) -> None:
        tables = [r for r in ctx.candidates.values() if r.asset.asset_type == "table"]
        if not tables:
            return
        top = max(r.score for r in tables)
        used = {r.asset.asset_id for r in tables if r.score >= top - TABLE_MARGIN or r.bound}
        used |= set(ctx.join_plan.tables)
        filters = {b.mapped_asset_id for b in ctx.bindings}
        drop = []
        for asset_id, ranked in ctx.candidates.items():
            asset = ranked.asset
            if asset.asset_type not in COLUMN_TYPES | KEEP_TYPES:
                continue
            if ranked.bound or asset_id in filters:
                continue
            in_used = asset.table_id in used
            if asset.asset_type in KEEP_TYPES and (in_used or ranked.features.get("v", 0.0) >= ctx.settings.threshold):
                continue
            if in_used and (ranked.score >= MIN_COLUMN_SCORE or _structural(asset.meta)):
                continue
            drop.append(asset_id)
        for asset_id in drop:
            del ctx.candidates[asset_id]

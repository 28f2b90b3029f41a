"""Stage 2, query-understanding signals: tables take their aggregated evidence (own and children's
vector similarity, question coverage by matched terms), matched metrics/entities and certified
assets gain, and tables outside the namespace (schema) with the strongest evidence lose."""

from __future__ import annotations

from fourengine.evidence import LEXICAL_WEIGHT, lexical_terms, table_evidence
from fourengine.rerank.base import RerankContext, RerankStage

NAMESPACE_WEIGHT = 0.5


class QuSignals(RerankStage):
    name = "qu_signals"

    def apply(self, ctx: RerankContext) -> None:
        s = ctx.settings
        evidence = table_evidence(ctx.candidates, ctx.similarity)
        for table_id in evidence:
            ctx.table(table_id, "child")
        for ranked in ctx.candidates.values():
            asset = ranked.asset
            if asset.asset_type == "table":
                gain = evidence.get(asset.asset_id, 0.0) - ranked.features.get("v", 0.0)
                if gain:
                    ranked.score += gain
                    ranked.reasons.append(f"evidence of its columns/terms {gain:+.3f}")
            else:
                lex = sum(lexical_terms(ranked).values())
                if lex and not ranked.bound:
                    ranked.score += LEXICAL_WEIGHT * lex
                    ranked.reasons.append(f"{asset.asset_type} matched by search terms +{LEXICAL_WEIGHT * lex:.3f}")
            if asset.certified:
                ranked.score += s.certified_boost
                ranked.reasons.append(f"certified +{s.certified_boost}")
        self._namespace_focus(ctx)

    @staticmethod
    def _namespace_focus(ctx: RerankContext) -> None:
        best: dict[str, float] = {}
        for ranked in ctx.candidates.values():
            namespace = ranked.asset.meta.get("namespace")
            if namespace is not None and ranked.asset.asset_type == "table":
                best[namespace] = max(best.get(namespace, float("-inf")), ranked.score)
        if len(best) < 2:
            return
        top = max(best.values())
        for ranked in ctx.candidates.values():
            namespace = ranked.asset.meta.get("namespace")
            if namespace in best and best[namespace] < top:
                penalty = NAMESPACE_WEIGHT * (top - best[namespace])
                ranked.score -= penalty
                ranked.reasons.append(f"namespace {namespace} behind the best one -{penalty:.3f}")

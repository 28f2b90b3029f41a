"""RAG-Fusion of retrievals: the main question's and its sub-queries', fused into one context for generation.

Assets are ordered by reciprocal-rank fusion over the retrievals (each keeps its best score and the union
of the engines that found it); bindings and few-shots are the union (the main question's first); the join
plan and the CRAG grade stay the main question's. The fused assets are budgeted again, so the rendered
context (and the ids it includes) is what an LLM prompt of the fused question sees.
"""

from __future__ import annotations

import copy
import time

from fourengine.budget import build_context
from fourengine.models import FewShot, RankedAsset, RetrievalResult, TermBinding
from fourengine.settings import RetrievalSettings

RRF_K = 60


def _assets(results: list[RetrievalResult]) -> list[RankedAsset]:
    score: dict[str, float] = {}
    best: dict[str, RankedAsset] = {}
    for result in results:
        for rank, ranked in enumerate(result.assets, start=1):
            key = ranked.asset.asset_id
            score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank)
            kept = best.get(key)
            if kept is None:
                best[key] = copy.copy(ranked)
                best[key].sources = set(ranked.sources)
                continue
            kept.sources |= ranked.sources
            kept.bound = kept.bound or ranked.bound
            kept.score = max(kept.score, ranked.score)
    order = {key: i for i, key in enumerate(score)}
    return [best[key] for key in sorted(score, key=lambda k: (-score[k], order[k]))]


def _bindings(results: list[RetrievalResult]) -> list[TermBinding]:
    out: dict[str, TermBinding] = {}
    for result in results:
        for binding in result.term_bindings:
            out.setdefault(binding.term_id, binding)
    return list(out.values())


def _few_shots(results: list[RetrievalResult]) -> list[FewShot]:
    out: dict[int, FewShot] = {}
    for result in results:
        for shot in result.few_shots:
            if shot.id not in out or shot.similarity > out[shot.id].similarity:
                out[shot.id] = shot
    return sorted(out.values(), key=lambda s: (-s.cache_hit, -s.similarity))


def fuse(
    main: RetrievalResult, subs: list[RetrievalResult], settings: RetrievalSettings, complexity: str = "medium"
) -> RetrievalResult:
    """One retrieval result for ``main`` and its sub-queries; ``main`` itself when there are none."""
    if not subs:
        return main
    started = time.perf_counter()
    results = [main, *subs]
    assets, bindings, shots = _assets(results), _bindings(results), _few_shots(results)
    context = build_context(assets, bindings, shots, main.join_plan, settings, complexity)
    terms = list(dict.fromkeys(t for r in results for t in r.search_terms))
    timings = {**main.timings_ms, "fusion": (time.perf_counter() - started) * 1000}
    return RetrievalResult(main.question, terms, assets, bindings, shots, main.join_plan, main.crag, context, timings)

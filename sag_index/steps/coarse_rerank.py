"""Step 6, coarse rerank: score the expanded events, keep the ``max_events`` most similar candidates."""

from __future__ import annotations

from sag_index import repository
from sag_index.steps.base import Report, Run, Services, brief, score_relevance


def coarse_rerank(services: Services, run: Run) -> Report:
    expanded_ids = [c.event_id for c in run.expanded]
    run.kind_of.update(services.read(repository.event_kinds, expanded_ids))
    score_relevance(services, run, only=expanded_ids)
    run.pool = sorted(run.cands.values(), key=lambda c: c.vector, reverse=True)[: run.params.max_events]
    return [brief(c) for c in run.pool], f"{len(run.pool)} of {len(run.cands)} kept"

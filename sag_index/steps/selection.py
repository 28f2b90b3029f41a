"""Step 7, selection: each pooled event's bridge bonus, then the ``top_k`` by the fast formula or DSPy."""

from __future__ import annotations

from sag_index import repository
from sag_index.steps.base import Report, Run, Services, brief


def selection(services: Services, run: Run) -> Report:
    pool_ids = {c.event_id for c in run.pool}
    for c in run.pool:
        linked = [run.cands[o].score for o in run.graph.get(c.event_id, ()) if o in pool_ids]
        c.bridge = max(linked, default=0.0)
    run.details = services.read(repository.event_details, [c.event_id for c in run.pool])
    run.chosen, run.modes["selection"] = services.select(run.question, run.pool, run.details, run.params)
    return [brief(run.cands[e]) for e in run.chosen], f"mode {run.modes['selection']}"

"""Step 3, dual-channel event recall: the SQL entity -> event join, and kNN plus BM25 over the events."""

from __future__ import annotations

import math
from collections import defaultdict

from sag_index import repository
from sag_index._text import tokenize
from sag_index.steps.base import DENSE_KINDS, Candidate, Report, Run, Services, brief, kinds_of


def event_recall(services: Services, run: Run) -> Report:
    p, cands = run.params, run.cands
    run.links = services.read(repository.events_of_entities, list(run.entity_scores), p.max_entity_df)
    df: dict[str, int] = defaultdict(int)
    for _, entity_id, _ in run.links:
        df[entity_id] += 1
    for event_id, entity_id, role in run.links:
        c = cands.setdefault(event_id, Candidate(event_id))
        c.channels.add("entity")
        weight = run.entity_scores[entity_id] / math.log2(1 + df[entity_id])
        c.entity += weight * (1.0 if role == "subject" else 0.5)
        c.via.append(entity_id)
    run.kinds = kinds = list(p.kinds) if p.kinds else None
    dense_kinds = [k for k in (kinds or DENSE_KINDS) if k in DENSE_KINDS]
    run.qtokens = tokenize(run.question)
    knn_hits, text_hits = services.store.recall_events(run.qvec, run.qtokens, p.event_k, dense_kinds, kinds)
    for hit in knn_hits:
        cands.setdefault(hit.id, Candidate(hit.id)).channels.add("knn")
    for hit in text_hits:
        cands.setdefault(hit.id, Candidate(hit.id)).channels.add("bm25")
    if kinds and run.links:
        allowed = set(kinds_of(services, list(cands), kinds))
        run.cands = cands = {k: v for k, v in cands.items() if k in allowed}
    return (
        [brief(c) for c in cands.values()],
        f"{sum('entity' in c.channels for c in cands.values())} by entity join, "
        f"{sum(bool(c.channels & {'knn', 'bm25'}) for c in cands.values())} by kNN/BM25",
    )

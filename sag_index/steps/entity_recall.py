"""Step 2, entity recall: exact names score 1.0; free mentions by name vector at or above the threshold."""

from __future__ import annotations

from sag_index._text import tokenize
from sag_index.steps.base import Report, Run, Services


def entity_recall(services: Services, run: Run) -> Report:
    p = run.params
    run.qvec = services.embed_question(run.question)
    run.entity_scores = dict.fromkeys(run.exact_ids, 1.0)
    if run.free:
        vectors = services.embed_names(run.free)
        hit_lists = services.store.knn_entities_many(
            list(vectors), p.entity_top_k, p.entity_threshold, [tokenize(m) for m in run.free]
        )
        for hits in hit_lists:
            for hit in hits:
                run.entity_scores[hit.id] = max(run.entity_scores.get(hit.id, 0.0), hit.score)
    return (
        [{"entity_id": k, "score": round(v, 4)} for k, v in run.entity_scores.items()],
        "timing includes embedding the question (cached per process)",
    )

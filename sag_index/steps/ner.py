"""Step 1, NER: the question's entities, exact dictionary hits and free mentions (fast, or the DSPy step)."""

from __future__ import annotations

from sag_index.steps.base import Report, Run, Services


def ner(services: Services, run: Run) -> Report:
    run.exact_ids, run.free, run.modes["ner"] = services.ner(run.question, run.dictionary)
    return (
        [{"entity_id": e} for e in run.exact_ids] + [{"mention": m} for m in run.free],
        f"{len(run.exact_ids)} dictionary hits, {len(run.free)} free mentions",
    )

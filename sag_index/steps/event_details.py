"""Step 4, event details: the kind of every candidate and the entities of every seed."""

from __future__ import annotations

from sag_index import repository
from sag_index.steps.base import Report, Run, Services


def event_details(services: Services, run: Run) -> Report:
    run.kind_of = services.read(repository.event_kinds, list(run.cands))
    for event_id, entity_id, role in services.read(repository.entities_of_events, list(run.cands)):
        run.event_entities[event_id][entity_id] = role
    return [{"event_id": k, "entities": len(v)} for k, v in run.event_entities.items()], ""

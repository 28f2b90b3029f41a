"""Step 5, multi-hop expansion over entity <-> event: the best seeds' entities reach bridge events.

The seeds are ranked by their first-stage relevance (``score_relevance``), computed here for step 6 too.
"""

from __future__ import annotations

from collections import defaultdict

from sag_index import repository
from sag_index.steps.base import Candidate, Report, Run, Services, brief, kinds_of, score_relevance


def expansion(services: Services, run: Run) -> Report:
    p, cands = run.params, run.cands
    score_relevance(services, run)
    frontier = sorted(cands.values(), key=lambda c: c.score, reverse=True)[: p.expand_from]
    for hop in range(1, p.max_hops + 1):
        new = _hop(services, run, frontier, hop)
        if run.kinds and new:
            allowed = set(kinds_of(services, [c.event_id for c in new], run.kinds))
            for c in new:
                if c.event_id not in allowed:
                    cands.pop(c.event_id, None)
            new = [c for c in new if c.event_id in allowed]
        frontier = new
    run.expanded = [c for c in cands.values() if c.hop > 0]
    return [brief(c) for c in run.expanded], f"{len(run.expanded)} events injected over {p.max_hops} hop(s)"


def _hop(services: Services, run: Run, frontier: list[Candidate], hop: int) -> list[Candidate]:
    """The events one hop from ``frontier``, added to the candidates and the bridge graph."""
    event_entities, cands = run.event_entities, run.cands
    walk_entities = {en for c in frontier for en in event_entities.get(c.event_id, {})}
    reached = services.read(repository.events_of_entities, list(walk_entities), run.params.max_entity_df)
    by_entity: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for event_id, entity_id, role in reached:
        by_entity[entity_id].append((event_id, role))
        event_entities[event_id].setdefault(entity_id, role)
    new: list[Candidate] = []
    for seed in frontier:
        for entity_id, seed_role in event_entities.get(seed.event_id, {}).items():
            for event_id, role in by_entity.get(entity_id, []):
                # a bridge: the shared entity is the subject of one side (X mentions Y's topic)
                if event_id == seed.event_id or (role != "subject" and seed_role != "subject"):
                    continue
                run.graph[event_id].add(seed.event_id)
                run.graph[seed.event_id].add(event_id)
                if event_id not in cands:
                    c = Candidate(event_id, hop=hop, channels={"expansion"}, via=[entity_id])
                    cands[event_id] = c
                    new.append(c)
    return new

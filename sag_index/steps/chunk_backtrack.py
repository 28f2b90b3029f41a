"""Step 8, chunk backtrack: the chosen events' source chunks, one per chunk id."""

from __future__ import annotations

from sag_index import repository
from sag_index.steps.base import Report, RetrievedEvent, Run, Services


def chunk_backtrack(services: Services, run: Run) -> Report:
    seen_chunks: set[str] = set()
    for event_id in run.chosen:
        d = run.details.get(event_id)
        if d is None or d["chunk_id"] in seen_chunks:
            continue
        seen_chunks.add(d["chunk_id"])
        c = run.cands[event_id]
        run.events.append(
            RetrievedEvent(
                event_id,
                d["chunk_id"],
                d["title"],
                d["content"],
                d["source"],
                d["kind"],
                round(services.fast_score(c, run.params), 4),
                c.hop,
                d["meta"],
            )
        )
    chunk_rows = services.read(repository.chunks_by_id, [e.chunk_id for e in run.events])
    run.chunks = [{"chunk_id": e.chunk_id, **chunk_rows[e.chunk_id]} for e in run.events if e.chunk_id in chunk_rows]
    return [{"chunk_id": ch["chunk_id"], "source": ch["source"]} for ch in run.chunks], ""
